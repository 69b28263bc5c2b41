package rollup

import (
	"strconv"
	"testing"

	"github.com/lectern-lms/lectern/course"
	"github.com/lectern-lms/lectern/course/sequencing"
)

// TestUseSequencing: with a sequencing State, each activity's statuses and score are the
// sequencer's and the registration's the root's; PlayerSatisfiedCausesCompletion and
// PlayerScaleRawScore apply to them as report rules; a nil State leaves the CMI rollup.
func TestUseSequencing(t *testing.T) {
	pkg := pkg04(course.SCORM2004v4, cluster("org", nil, sco04("a"), sco04("b")))
	st, err := sequencing.New(pkg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Navigate(sequencing.Request{Kind: sequencing.Choice, Target: "a"}); err != nil {
		t.Fatal(err)
	}
	if err := st.Report("a", sequencing.RuntimeOutcome{CompletionStatus: "incomplete", SuccessStatus: "passed", ScoreScaled: f(0.8)}); err != nil {
		t.Fatal(err)
	}
	// The CMI data says something else of a (as after a retry the sequencer started afresh),
	// and b reported only a raw score.
	cmi := State{"a": {CompletionStatus: "completed", SuccessStatus: "failed", ScoreScaled: f(0.2)},
		"b": {ScoreRaw: f(5), ScoreMin: f(0), ScoreMax: f(10)}}
	got := func(s Settings, seq *sequencing.State) (string, string) {
		r := Compute(Input{Package: pkg, State: cmi, Settings: s, ForCredit: true})
		r.UseSequencing(pkg, seq, cmi, s)
		score := func(o *Outcome) string {
			if o.Score == nil {
				return "-"
			}
			return strconv.FormatFloat(*o.Score, 'f', -1, 64)
		}
		root := r.Activities["org"]
		if r.Completion != root.Completion || r.Success != root.Success {
			t.Errorf("summary %s/%s differs from the root %s/%s", r.Completion, r.Success, root.Completion, root.Success)
		}
		a, b := r.Activities["a"], r.Activities["b"]
		return a.Completion + "/" + a.Success + "/" + score(a) + " " + b.Completion + "/" + b.Success + "/" + score(b),
			r.Completion + "/" + r.Success
	}
	for _, tc := range []struct {
		name       string
		tweak      func(*Settings)
		seq        *sequencing.State
		acts, regn string
	}{
		{"sequencer", func(*Settings) {}, st, "INCOMPLETE/PASSED/80 UNKNOWN/UNKNOWN/-", "INCOMPLETE/UNKNOWN"},
		{"SatisfiedCausesCompletion", func(s *Settings) { s.SatisfiedCausesCompletion = true }, st, "COMPLETED/PASSED/80 UNKNOWN/UNKNOWN/-", "INCOMPLETE/UNKNOWN"},
		{"ScaleRawScore", func(s *Settings) { s.ScaleRawScore = true }, st, "INCOMPLETE/PASSED/80 UNKNOWN/UNKNOWN/50", "INCOMPLETE/UNKNOWN"},
		{"no sequencing state: the CMI rollup", func(*Settings) {}, nil, "COMPLETED/FAILED/20 INCOMPLETE/UNKNOWN/-", "INCOMPLETE/UNKNOWN"},
	} {
		s := DefaultSettings()
		tc.tweak(&s)
		if acts, regn := got(s, tc.seq); acts != tc.acts || regn != tc.regn {
			t.Errorf("%s: activities %s, registration %s; want %s, %s", tc.name, acts, regn, tc.acts, tc.regn)
		}
	}
}
