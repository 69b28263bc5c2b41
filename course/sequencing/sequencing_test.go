package sequencing

import (
	"testing"

	"github.com/lectern-lms/lectern/course"
)

// move is one step of a scenario: optionally report the current activity's outcome, then
// issue a request and expect a delivery (or an exception).
type move struct {
	report  *RuntimeOutcome
	req     Request
	deliver string
	err     error
	ended   bool
}

func run(t *testing.T, root *course.Activity, moves []move) *State {
	t.Helper()
	s := newState(t, root)
	for i, m := range moves {
		if m.report != nil {
			if err := s.Report(s.Current, *m.report); err != nil {
				t.Fatalf("move %d: report: %v", i, err)
			}
		}
		res := step(t, s, m.req, m.deliver, m.err)
		if m.ended != res.SessionEnded {
			t.Fatalf("move %d: session ended = %v, want %v", i, res.SessionEnded, m.ended)
		}
	}
	return s
}

func TestFlow(t *testing.T) {
	done := &RuntimeOutcome{CompletionStatus: "completed"}
	nested := func(seq *course.Sequencing) *course.Activity {
		return cluster("org", flowSeq(),
			leaf("a", nil),
			cluster("m", seq, leaf("b", nil), leaf("c", nil)),
			leaf("d", nil))
	}
	for _, tc := range []struct {
		name  string
		root  *course.Activity
		moves []move
	}{
		{"start, continue through a cluster, previous back out (SB.2.1, SB.2.3)", nested(flowSeq()), []move{
			{req: start, deliver: "a"}, {req: cont, deliver: "b"}, {req: cont, deliver: "c"},
			{req: cont, deliver: "d"}, {req: prev, deliver: "c"}, {req: prev, deliver: "b"}, {req: prev, deliver: "a"},
		}},
		{"continue past the last activity ends the session (SB.2.1-1)", cluster("org", flowSeq(), leaf("a", nil)), []move{
			{req: start, deliver: "a"}, {req: cont, ended: true},
		}},
		{"previous from the first activity (SB.2.1-3)", nested(flowSeq()), []move{
			{req: start, deliver: "a"}, {req: prev, err: ErrFlowTreeBackRoot},
		}},
		{"start without flow at the root (SB.2.2-1)", cluster("org", nil, leaf("a", nil), leaf("b", nil)), []move{
			{req: start, err: ErrFlowActivityNoFlow},
		}},
		{"continue when the parent forbids flow (NB.2.1-4)", cluster("org", &course.Sequencing{}, leaf("a", nil), leaf("b", nil)), []move{
			{req: choose("a"), deliver: "a"}, {req: cont, err: ErrFlowDisabled},
		}},
		{"flow into a cluster that forbids flow (SB.2.2-1)", nested(&course.Sequencing{}), []move{
			{req: start, deliver: "a"}, {req: cont, err: ErrFlowActivityNoFlow},
		}},
		{"forwardOnly forbids previous (NB.2.1-5)", cluster("org", &course.Sequencing{ControlMode: &course.ControlMode{Flow: bp(true), ForwardOnly: bp(true)}}, leaf("a", nil), leaf("b", nil)), []move{
			{req: start, deliver: "a"}, {req: cont, deliver: "b"}, {req: prev, err: ErrForwardOnly},
		}},
		{"backward into a forwardOnly cluster enters at its first child (SB.2.1)", nested(&course.Sequencing{ControlMode: &course.ControlMode{Flow: bp(true), ForwardOnly: bp(true)}}), []move{
			{req: start, deliver: "a"}, {req: cont, deliver: "b"}, {req: cont, deliver: "c"}, {req: cont, deliver: "d"},
			{req: prev, deliver: "b"},
		}},
		{"skip when completed: the completed activity is passed over (SB.2.2)", cluster("org", flowSeq(),
			leaf("a", nil), leaf("b", &course.Sequencing{PreConditionRules: []course.SequencingRule{skipIf("attempted")}}), leaf("c", nil)), []move{
			{req: start, deliver: "a"}, {req: cont, deliver: "b"}, {req: prev, deliver: "a"}, {req: cont, deliver: "c"},
		}},
		{"skip a whole cluster by its rule", nested(&course.Sequencing{ControlMode: &course.ControlMode{Flow: bp(true)}, PreConditionRules: []course.SequencingRule{rule("skip", "always")}}), []move{
			{req: start, deliver: "a"}, {req: cont, deliver: "d"}, {req: prev, deliver: "a"},
		}},
		{"a disabled activity stops flow (SB.2.2-2)", cluster("org", flowSeq(),
			leaf("a", nil), leaf("b", &course.Sequencing{PreConditionRules: []course.SequencingRule{rule("disabled", "always")}})), []move{
			{req: start, deliver: "a"}, {req: cont, err: ErrFlowActivityDisabled},
		}},
		{"attempt limit reached (UP.1, SB.2.2-2)", cluster("org", flowSeq(),
			leaf("a", &course.Sequencing{LimitConditions: &course.LimitConditions{AttemptLimit: ip(1)}}), leaf("b", nil)), []move{
			{req: start, deliver: "a"}, {req: cont, deliver: "b"}, {req: prev, err: ErrFlowActivityDisabled},
		}},
		{"post-condition retry on failure (TB.2.2, SB.2.10)", cluster("org", flowSeq(),
			leaf("a", &course.Sequencing{PostConditionRules: []course.SequencingRule{{Conditions: []course.RuleCondition{{Condition: "satisfied", Operator: "not"}}, Action: "retry"}}}),
			leaf("b", nil)), []move{
			{req: start, deliver: "a"},
			{report: &RuntimeOutcome{CompletionStatus: "completed", SuccessStatus: "failed"}, req: cont, deliver: "a"},
			{report: &RuntimeOutcome{CompletionStatus: "completed", SuccessStatus: "passed"}, req: cont, deliver: "b"},
		}},
		{"post-condition continue and previous", cluster("org", flowSeq(),
			leaf("a", nil), leaf("b", &course.Sequencing{PostConditionRules: []course.SequencingRule{rule("previous", "completed")}})), []move{
			{req: start, deliver: "a"}, {req: cont, deliver: "b"}, {report: done, req: Request{Kind: Exit}, deliver: "a"},
		}},
		{"exit action rule on the parent leaves the cluster (TB.2.1)", cluster("org", flowSeq(),
			cluster("m", &course.Sequencing{ControlMode: &course.ControlMode{Flow: bp(true)}, ExitConditionRules: []course.SequencingRule{rule("exit", "completed")}},
				leaf("a", nil), leaf("b", nil)),
			leaf("c", nil)), []move{
			{req: start, deliver: "a"},
			{report: &RuntimeOutcome{CompletionStatus: "completed"}, req: cont, deliver: "b"},
		}},
		{"exitParent post-condition", cluster("org", flowSeq(),
			cluster("m", flowSeq(), leaf("a", &course.Sequencing{PostConditionRules: []course.SequencingRule{rule("exitParent", "always")}}), leaf("b", nil)),
			leaf("c", nil)), []move{
			{req: start, deliver: "a"}, {req: cont, deliver: "c"},
		}},
		{"exitAll post-condition ends the session", cluster("org", flowSeq(),
			leaf("a", &course.Sequencing{PostConditionRules: []course.SequencingRule{rule("exitAll", "always")}}), leaf("b", nil)), []move{
			{req: start, deliver: "a"}, {req: cont, ended: true},
		}},
		{"a request before the session (NB.2.1-2)", nested(flowSeq()), []move{
			{req: cont, err: ErrSessionNotBegun},
		}},
		{"start twice (NB.2.1-1)", nested(flowSeq()), []move{
			{req: start, deliver: "a"}, {req: start, err: ErrSessionBegun},
		}},
		{"resumeAll with nothing suspended (NB.2.1-3)", nested(flowSeq()), []move{
			{req: resumeAll, err: ErrNoSuspended},
		}},
		{"forward is not supported (NB.2.1-7)", nested(flowSeq()), []move{
			{req: start, deliver: "a"}, {req: Request{Kind: Forward}, err: ErrRequestNotSupported},
		}},
		{"exit twice (NB.2.1-12)", nested(flowSeq()), []move{
			{req: start, deliver: "a"}, {req: Request{Kind: Exit}}, {req: Request{Kind: Exit}, err: ErrAlreadyTerminated},
		}},
		{"exitAll ends the session", nested(flowSeq()), []move{
			{req: start, deliver: "a"}, {req: exitAll, ended: true}, {req: start, deliver: "a"},
		}},
		{"abandonAll ends the session", nested(flowSeq()), []move{
			{req: start, deliver: "a"}, {req: Request{Kind: AbandonAll}, ended: true},
		}},
		{"jump skips the choice checks (SB.2.13)", cluster("org", &course.Sequencing{ControlMode: &course.ControlMode{Flow: bp(true), Choice: bp(false)}}, leaf("a", nil), leaf("b", nil), leaf("c", nil)), []move{
			{req: start, deliver: "a"}, {req: choose("c"), err: ErrChoiceControl}, {req: Request{Kind: Jump, Target: "c"}, deliver: "c"},
		}},
		{"undefined request (NB.2.1-13)", nested(flowSeq()), []move{
			{req: Request{Kind: "sideways"}, err: ErrUndefinedRequest},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc.root, tc.moves) })
	}
}

// TestRetryOfCourseClearsItsGlobalsFirst: a post-condition retry that reaches the root
// starts the course's own global objectives (objectivesGlobalToSystem false) afresh with the
// termination (TB.2.3), before the retry's flow evaluates skip rules on them: an activity
// skipped when attempted and its mapped objective unknown is skipped (ADL RU-13d). A
// look-ahead of the same request clears nothing of the State's.
func TestRetryOfCourseClearsItsGlobalsFirst(t *testing.T) {
	build := func(toSystem *bool) *State {
		x := leaf("x", &course.Sequencing{
			PreConditionRules: []course.SequencingRule{{ConditionCombination: "all", Action: "skip", Conditions: []course.RuleCondition{
				{Condition: "attempted"},
				{Condition: "objectiveStatusKnown", Operator: "not", ReferencedObjective: "o"},
			}}},
			Objectives: []course.Objective{{ID: "x-p", Primary: true},
				{ID: "o", Maps: []course.ObjectiveMap{{TargetObjectiveID: "g", ReadSatisfiedStatus: true, WriteSatisfiedStatus: true}}}},
		})
		y := leaf("y", &course.Sequencing{PostConditionRules: []course.SequencingRule{rule("exitParent", "always")}})
		rootSeq := flowSeq()
		rootSeq.PostConditionRules = []course.SequencingRule{{Action: "retry", Conditions: []course.RuleCondition{{Condition: "satisfied", Operator: "not"}}}}
		rootSeq.Objectives = []course.Objective{{ID: "r", Primary: true, Maps: []course.ObjectiveMap{{TargetObjectiveID: "g", ReadSatisfiedStatus: true}}}}
		root := cluster("org", rootSeq, x, y)
		root.Extra = &course.ActivityExt{ObjectivesGlobalToSystem: toSystem}
		s := newState(t, root)
		step(t, s, start, "x", nil)
		_ = s.Report("x", RuntimeOutcome{Objectives: map[string]ObjectiveOutcome{"o": {SuccessStatus: "failed"}}})
		step(t, s, cont, "y", nil)
		_ = s.Report("y", passed())
		return s
	}
	for _, tc := range []struct {
		name     string
		toSystem *bool
		deliver  string
		kept     bool
	}{
		{"course scoped", bp(false), "y", false},
		{"learner's", nil, "x", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := build(tc.toSystem)
			if !s.NavigationRequestValid(cont) {
				t.Fatal("continue is not valid")
			}
			if _, ok := s.Globals["g"]; !ok {
				t.Fatal("the look-ahead cleared the State's global objectives")
			}
			// y exits its parent, the root is not satisfied (g says failed) and retries.
			step(t, s, cont, tc.deliver, nil)
			if _, ok := s.Globals["g"]; ok != tc.kept {
				t.Errorf("after the retry g is there: %v, want %v", ok, tc.kept)
			}
		})
	}
}
