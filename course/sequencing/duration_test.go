package sequencing

import (
	"testing"

	"github.com/lectern-lms/lectern/course"
)

func TestAttemptDurationLimit(t *testing.T) {
	limited := &course.Sequencing{
		LimitConditions:    &course.LimitConditions{AttemptAbsoluteDurationLimit: "PT10M"},
		PostConditionRules: []course.SequencingRule{rule("retry", "timeLimitExceeded")},
	}
	root := cluster("org", flowSeq(), leaf("a", limited), leaf("b", nil))
	s := newState(t, root)
	step(t, s, start, "a", nil)
	// 5 minutes, then a new session of the same attempt (suspended) with 6 more.
	_ = s.Report("a", RuntimeOutcome{SessionSeconds: fp(300), Exit: "suspend"})
	step(t, s, suspendAll, "", nil)
	step(t, s, resumeAll, "a", nil)
	if got := s.attemptSeconds(s.t.byID["a"]); got != 300 {
		t.Fatalf("after resuming, the attempt has %v s, want 300", got)
	}
	_ = s.Report("a", RuntimeOutcome{SessionSeconds: fp(360), CompletionStatus: "completed"})
	if !s.timeLimitExceeded(s.t.byID["a"]) || s.attemptSeconds(s.t.root) != 660 {
		t.Fatalf("11 minutes against a 10 minute limit: exceeded %v, root %v s", s.timeLimitExceeded(s.t.byID["a"]), s.attemptSeconds(s.t.root))
	}
	// timeLimitExceeded asks for a retry, but the limit forbids a new attempt (UP.1).
	step(t, s, cont, "", ErrDeliverDisabled)
	if s.Activity("a").AttemptCount != 1 {
		t.Errorf("a started a new attempt past its duration limit")
	}
}
