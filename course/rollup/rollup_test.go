package rollup

import (
	"testing"
	"time"

	"github.com/lectern-lms/lectern/course/registration"
)

func TestApplyAndChanged(t *testing.T) {
	p := registration.Untracked()
	first := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := Compute(Input{Package: pkg12(sco("a", nil)), Settings: DefaultSettings(), State: State{"a": {LessonStatus: "incomplete", SecondsTracked: 5}}})
	if !r.Changed(p) {
		t.Fatal("first tracked commit not reported as a change")
	}
	r.Apply(&p, first)
	if p.Completion != registration.Incomplete || p.TotalSecondsTracked != 5 || p.CompletedAt != nil {
		t.Fatalf("applied %+v", p)
	}
	if r.Changed(p) {
		t.Fatal("the same rollup is reported as a change")
	}
	r = Compute(Input{Package: pkg12(sco("a", nil)), Settings: DefaultSettings(), State: State{"a": {LessonStatus: "passed", ScoreRaw: f(90), SecondsTracked: 9}}})
	r.Apply(&p, first.Add(time.Hour))
	if p.Completion != registration.Completed || p.Success != registration.Passed || *p.ScoreScaled != 90 || !p.CompletedAt.Equal(first.Add(time.Hour)) {
		t.Fatalf("applied %+v", p)
	}
	r.Apply(&p, first.Add(2*time.Hour))
	if !p.CompletedAt.Equal(first.Add(time.Hour)) {
		t.Fatalf("completion date moved to %v", p.CompletedAt)
	}
	same := r
	same.Score = f(91)
	if !same.Changed(p) {
		t.Fatal("a score change is not a change")
	}
}
