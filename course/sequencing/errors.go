package sequencing

import "fmt"

// Error is an SN book exception: the process that raised it and the book's code, such as
// NB.2.1-2, so a player can show (and a tester can look up) exactly which check refused a
// request. Errors compare equal under errors.Is when their codes match.
type Error struct {
	// Code is the book's exception code, e.g. "SB.2.9-4".
	Code string `json:"code"`
	// Message says in words what the code means.
	Message string `json:"message"`
}

// Error names the code first, so a log line can be matched against the book.
func (e *Error) Error() string { return fmt.Sprintf("sequencing %s: %s", e.Code, e.Message) }

// Is makes a returned error match its sentinel even if a caller copies the value.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

func exc(code, msg string) *Error { return &Error{Code: code, Message: msg} }

// Navigation Request Process (NB.2.1) exceptions.
var (
	ErrSessionBegun        = exc("NB.2.1-1", "the sequencing session has already begun")
	ErrSessionNotBegun     = exc("NB.2.1-2", "the sequencing session has not begun")
	ErrNoSuspended         = exc("NB.2.1-3", "there is no suspended activity to resume")
	ErrFlowDisabled        = exc("NB.2.1-4", "flow navigation is not allowed here (flow control mode is false)")
	ErrForwardOnly         = exc("NB.2.1-5", "moving backward is not allowed here (flow is false or forwardOnly is true)")
	ErrBackwardFromRoot    = exc("NB.2.1-6", "cannot move backward from the root of the activity tree")
	ErrRequestNotSupported = exc("NB.2.1-7", "the navigation request is not supported")
	ErrChoiceExit          = exc("NB.2.1-8", "an active activity that would be exited does not allow choiceExit")
	ErrChoiceControl       = exc("NB.2.1-10", "choice is not allowed among the target's siblings (choice control mode is false)")
	ErrNoTarget            = exc("NB.2.1-11", "the target activity does not exist")
	ErrAlreadyTerminated   = exc("NB.2.1-12", "the current activity has already been terminated")
	ErrUndefinedRequest    = exc("NB.2.1-13", "undefined navigation request")
)

// Termination Request Process (TB.2.3) exceptions.
var (
	ErrTermNoCurrent      = exc("TB.2.3-1", "there is no current activity to terminate")
	ErrTermNotActive      = exc("TB.2.3-2", "the current activity has already been terminated")
	ErrTermSuspendRoot    = exc("TB.2.3-3", "nothing to suspend: the root is the current activity and it is not active")
	ErrTermExitParentRoot = exc("TB.2.3-4", "an exitParent post-condition cannot leave the root")
	ErrTermUndefined      = exc("TB.2.3-7", "undefined termination request")
)

// Sequencing Request Process (SB.2.x) exceptions.
var (
	ErrFlowTreeNoChildren    = exc("SB.2.1-2", "the cluster has no available children to flow into")
	ErrFlowTreeBackRoot      = exc("SB.2.1-3", "cannot flow backward from the root")
	ErrFlowTreeForwardOnly   = exc("SB.2.1-4", "cannot flow backward: the parent's forwardOnly is true")
	ErrFlowActivityNoFlow    = exc("SB.2.2-1", "flow is not allowed in the parent cluster")
	ErrFlowActivityDisabled  = exc("SB.2.2-2", "the activity is disabled or has reached its limit conditions")
	ErrChoiceStopForward     = exc("SB.2.4-1", "a stopForwardTraversal rule blocks the choice")
	ErrChoiceBackForwardOnly = exc("SB.2.4-2", "the choice would move backward inside a forwardOnly cluster")
	ErrChoiceBackRoot        = exc("SB.2.4-3", "the choice would move backward from the root")
	ErrStartBegun            = exc("SB.2.5-1", "start: the sequencing session has already begun")
	ErrResumeBegun           = exc("SB.2.6-1", "resumeAll: the sequencing session has already begun")
	ErrResumeNone            = exc("SB.2.6-2", "resumeAll: no activity is suspended")
	ErrContinueNoCurrent     = exc("SB.2.7-1", "continue: the sequencing session has not begun")
	ErrContinueNoFlow        = exc("SB.2.7-2", "continue: flow is not allowed in the parent cluster")
	ErrPreviousNoCurrent     = exc("SB.2.8-1", "previous: the sequencing session has not begun")
	ErrPreviousNoFlow        = exc("SB.2.8-2", "previous: flow is not allowed in the parent cluster")
	ErrChoiceNoTarget        = exc("SB.2.9-1", "choice: the target activity does not exist")
	ErrChoiceNotAvailable    = exc("SB.2.9-2", "choice: the target is not among its parent's available children")
	ErrChoiceHidden          = exc("SB.2.9-3", "choice: the target or an ancestor is hidden from choice")
	ErrChoiceNotAllowed      = exc("SB.2.9-4", "choice: the target's parent does not allow choice")
	ErrChoiceNoPath          = exc("SB.2.9-5", "choice: no activity to traverse to the target")
	ErrChoicePrevented       = exc("SB.2.9-6", "choice: preventActivation forbids starting an attempt on the way to the target")
	ErrChoiceExitNotAllowed  = exc("SB.2.9-7", "choice: an active activity that would be exited does not allow choiceExit")
	ErrChoiceConstrained     = exc("SB.2.9-8", "choice: constrainChoice allows only the next or previous activity")
	ErrChoiceNothing         = exc("SB.2.9-9", "choice: the target cluster has nothing to deliver")
	ErrRetryNoCurrent        = exc("SB.2.10-1", "retry: the sequencing session has not begun")
	ErrRetryActive           = exc("SB.2.10-2", "retry: the current activity is still active or suspended")
	ErrRetryNothing          = exc("SB.2.10-3", "retry: the cluster has nothing to deliver")
	ErrExitNoCurrent         = exc("SB.2.11-1", "exit: the sequencing session has not begun")
	ErrExitActive            = exc("SB.2.11-2", "exit: the current activity has not been terminated")
	ErrSeqUndefined          = exc("SB.2.12-1", "undefined sequencing request")
	ErrJumpNoCurrent         = exc("SB.2.13-1", "jump: the sequencing session has not begun")
)

// Delivery Request Process (DB.1.1) and Content Delivery Environment (DB.2) exceptions.
var (
	ErrDeliverCluster  = exc("DB.1.1-1", "only a leaf activity can be delivered")
	ErrDeliverDisabled = exc("DB.1.1-3", "the activity or an ancestor is disabled or has reached its limit conditions")
	ErrDeliverActive   = exc("DB.2-1", "the current activity has not been terminated")
)
