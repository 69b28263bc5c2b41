package sequencing

import (
	"errors"
	"testing"

	"github.com/lectern-lms/lectern/course"
)

func bp(b bool) *bool       { return &b }
func ip(i int) *int         { return &i }
func fp(f float64) *float64 { return &f }

// leaf is a SCO with a primary objective named after it.
func leaf(id string, seq *course.Sequencing) *course.Activity {
	a := &course.Activity{ID: id, Title: id, LaunchURL: id + ".html", ScormType: "sco", Sequencing: seq}
	if seq == nil || len(seq.Objectives) == 0 {
		a.Sequencing = withSeq(seq)
		a.Sequencing.Objectives = []course.Objective{{ID: id + "-obj", Primary: true}}
	}
	return a
}

func withSeq(s *course.Sequencing) *course.Sequencing {
	if s == nil {
		return &course.Sequencing{}
	}
	return s
}

func cluster(id string, seq *course.Sequencing, children ...*course.Activity) *course.Activity {
	return &course.Activity{ID: id, Title: id, Sequencing: seq, Children: children}
}

func flowSeq() *course.Sequencing {
	return &course.Sequencing{ControlMode: &course.ControlMode{Flow: bp(true)}}
}

func pkg(root *course.Activity) *course.Package {
	return &course.Package{Standard: course.SCORM2004v4, Identifier: "p", Root: root}
}

func newState(t *testing.T, root *course.Activity) *State {
	t.Helper()
	s, err := New(pkg(root), nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func skipIf(cond string) course.SequencingRule {
	return course.SequencingRule{Conditions: []course.RuleCondition{{Condition: cond}}, Action: "skip"}
}

func rule(action string, conds ...string) course.SequencingRule {
	r := course.SequencingRule{Action: action}
	for _, c := range conds {
		r.Conditions = append(r.Conditions, course.RuleCondition{Condition: c})
	}
	return r
}

// step issues a request and checks what is delivered ("" for nothing) or which error.
func step(t *testing.T, s *State, r Request, deliver string, wantErr error) Result {
	t.Helper()
	res, err := s.Navigate(r)
	if wantErr != nil {
		if !errors.Is(err, wantErr) {
			t.Fatalf("%s %s: error %v, want %v", r.Kind, r.Target, err, wantErr)
		}
		return res
	}
	if err != nil {
		t.Fatalf("%s %s: %v", r.Kind, r.Target, err)
	}
	if res.Deliver != deliver {
		t.Fatalf("%s %s delivered %q, want %q", r.Kind, r.Target, res.Deliver, deliver)
	}
	return res
}

var (
	start      = Request{Kind: Start}
	cont       = Request{Kind: Continue}
	prev       = Request{Kind: Previous}
	exitAll    = Request{Kind: ExitAll}
	suspendAll = Request{Kind: SuspendAll}
	resumeAll  = Request{Kind: ResumeAll}
)

func choose(id string) Request { return Request{Kind: Choice, Target: id} }

func passed() RuntimeOutcome {
	return RuntimeOutcome{CompletionStatus: "completed", SuccessStatus: "passed"}
}
