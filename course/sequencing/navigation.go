package sequencing

// Kind is a navigation request of the SN book (NB.2.1) as a player or a SCO's
// adl.nav.request names it.
type Kind string

// The navigation requests. Retry and retryAll are not navigation requests in the 4th
// edition; they reach the sequencer as post-condition rule actions.
const (
	Start      Kind = "start"
	ResumeAll  Kind = "resumeAll"
	Continue   Kind = "continue"
	Previous   Kind = "previous"
	Forward    Kind = "forward"
	Backward   Kind = "backward"
	Choice     Kind = "choice"
	Jump       Kind = "jump"
	Exit       Kind = "exit"
	ExitAll    Kind = "exitAll"
	Abandon    Kind = "abandon"
	AbandonAll Kind = "abandonAll"
	SuspendAll Kind = "suspendAll"
)

// Known reports whether k is a navigation request a player or a SCO may make: every one of
// the book's but forward and backward, which it defines for no learner.
func (k Kind) Known() bool {
	switch k {
	case Start, ResumeAll, Continue, Previous, Choice, Jump, Exit, ExitAll, Abandon, AbandonAll, SuspendAll:
		return true
	}
	return false
}

// Request is a navigation request; Target names the activity of a choice or jump.
type Request struct {
	Kind   Kind   `json:"kind"`
	Target string `json:"target,omitempty"`
}

// navOutcome is what the Navigation Request Process decides.
type navOutcome struct {
	term string
	seq  string
}

// navigationRequest is the Navigation Request Process (NB.2.1): it checks a request against
// the session and the control modes and turns it into a termination request and a
// sequencing request.
func (s *State) navigationRequest(r Request) (navOutcome, error) {
	cur := s.cur()
	active := cur != nil && s.st(cur).Active
	switch r.Kind {
	case Start:
		if cur != nil {
			return navOutcome{}, ErrSessionBegun
		}
		return navOutcome{seq: seqStart}, nil
	case ResumeAll:
		if cur != nil {
			return navOutcome{}, ErrSessionBegun
		}
		if s.node(s.Suspended) == nil {
			return navOutcome{}, ErrNoSuspended
		}
		return navOutcome{seq: seqResumeAll}, nil
	case Continue:
		if cur == nil {
			return navOutcome{}, ErrSessionNotBegun
		}
		if cur.parent == nil || !cur.parent.def.Flow {
			return navOutcome{}, ErrFlowDisabled
		}
		if active {
			return navOutcome{term: termExit, seq: seqContinue}, nil
		}
		return navOutcome{seq: seqContinue}, nil
	case Previous:
		if cur == nil {
			return navOutcome{}, ErrSessionNotBegun
		}
		if cur.parent == nil {
			return navOutcome{}, ErrBackwardFromRoot
		}
		if !cur.parent.def.Flow || cur.parent.def.ForwardOnly {
			return navOutcome{}, ErrForwardOnly
		}
		if active {
			return navOutcome{term: termExit, seq: seqPrevious}, nil
		}
		return navOutcome{seq: seqPrevious}, nil
	case Forward, Backward:
		return navOutcome{}, ErrRequestNotSupported
	case Choice:
		target := s.node(r.Target)
		if target == nil {
			return navOutcome{}, ErrNoTarget
		}
		if target.parent != nil && !target.parent.def.Choice {
			return navOutcome{}, ErrChoiceControl
		}
		if cur == nil {
			return navOutcome{seq: seqChoice}, nil
		}
		common := commonAncestor(cur, target)
		for a := cur; a != common; a = a.parent {
			if s.st(a).Active && !a.def.ChoiceExit {
				return navOutcome{}, ErrChoiceExit
			}
		}
		if active {
			return navOutcome{term: termExit, seq: seqChoice}, nil
		}
		return navOutcome{seq: seqChoice}, nil
	case Jump:
		if s.node(r.Target) == nil {
			return navOutcome{}, ErrNoTarget
		}
		if cur == nil {
			return navOutcome{}, ErrSessionNotBegun
		}
		if active {
			return navOutcome{term: termExit, seq: seqJump}, nil
		}
		return navOutcome{seq: seqJump}, nil
	case Exit, Abandon:
		if cur == nil {
			return navOutcome{}, ErrSessionNotBegun
		}
		if !active {
			return navOutcome{}, ErrAlreadyTerminated
		}
		term := termExit
		if r.Kind == Abandon {
			term = termAbandon
		}
		return navOutcome{term: term, seq: seqExit}, nil
	case ExitAll, AbandonAll, SuspendAll:
		if cur == nil {
			return navOutcome{}, ErrSessionNotBegun
		}
		return navOutcome{term: string(r.Kind), seq: seqExit}, nil
	}
	return navOutcome{}, ErrUndefinedRequest
}
