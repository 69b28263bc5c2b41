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
	// Update is Changed then Apply in one: it stores the change and says so, and leaves
	// progress as it is when nothing a post-back reports changed.
	before := p
	if r.Update(&p, first.Add(3*time.Hour)) || p != before {
		t.Fatalf("an unchanged rollup updated progress: %+v → %+v", before, p)
	}
	if !same.Update(&p, first.Add(3*time.Hour)) || *p.ScoreScaled != 91 || p.ReportDigest != same.Digest() || same.Changed(p) {
		t.Fatalf("a changed rollup was not stored: %+v", p)
	}
}

// TestChangedBelowTheRoot: a change an ACTIVITY or FULL report shows only below the root (a
// SCO's new attempt, an objective of a SCO) is a change to store and post, while measured
// time alone changes no digest (its growth is its own change).
func TestChangedBelowTheRoot(t *testing.T) {
	course := pkg12(sco("a", nil), sco("b", nil))
	compute := func(s State) Result { return Compute(Input{Package: course, Settings: DefaultSettings(), State: s}) }
	p := registration.Untracked()
	r := compute(State{"a": {LessonStatus: "incomplete", Attempts: 1, SecondsTracked: 5}})
	r.Apply(&p, time.Now())
	again := compute(State{"a": {LessonStatus: "incomplete", Attempts: 2, SecondsTracked: 5}})
	if again.Completion != r.Completion || !sameFloat(again.CompletionAmount, r.CompletionAmount) {
		t.Fatalf("the summary moved (%+v → %+v): the test needs a change below the root only", r, again)
	}
	if !again.Changed(p) {
		t.Error("a SCO's second attempt is not a change, so the FULL report keeps attempts 1")
	}
	objective := compute(State{"a": {LessonStatus: "incomplete", Attempts: 1, SecondsTracked: 5,
		Objectives: []ObjectiveState{{ID: "o1", SuccessStatus: "passed"}}}})
	if !objective.Changed(p) {
		t.Error("a SCO's objective passing is not a change")
	}
	later := compute(State{"a": {LessonStatus: "incomplete", Attempts: 1, SecondsTracked: 4}})
	if later.Digest() != r.Digest() || later.Changed(p) {
		t.Error("measured time alone changed the digest, or less time counted as a change")
	}
}
