package rollup

import (
	"testing"

	"github.com/lectern-lms/lectern/course"
)

// TestRollupTweaks: each of PlayerApplyRollupStatusToSuccess, PlayerScoreOverridesStatus,
// PlayerSatisfiedCausesCompletion and PlayerRollupEmptySetToUnknown, off and on, on the input
// where it makes the difference.
func TestRollupTweaks(t *testing.T) {
	noRollup := &course.Sequencing{RollupRules: &course.RollupRules{RollupObjectiveSatisfied: bp(false), RollupProgressCompletion: bp(false)}}
	silent := sco04("a")
	silent.Sequencing = noRollup
	threshold := DefaultSettings()
	threshold.StatusRollupMode = CompleteWhenThresholdScoreMet
	allComplete := DefaultSettings()
	allComplete.StatusRollupMode = CompleteWhenAllUnitsComplete
	for _, tc := range []struct {
		name     string
		pkg      *course.Package
		settings Settings
		tweak    func(*Settings)
		state    State
		// off and on are completion/success with the tweak at its default and changed.
		off, on string
	}{
		{"ApplyRollupStatusToSuccess: threshold met passes", pkg12(sco("a", nil), sco("b", nil)), threshold,
			func(s *Settings) { s.ApplyStatusToSuccess = true },
			State{"a": {LessonStatus: "completed", ScoreRaw: f(90)}, "b": {LessonStatus: "completed", ScoreRaw: f(85)}},
			"COMPLETED/UNKNOWN", "COMPLETED/PASSED"},
		{"ApplyRollupStatusToSuccess: threshold missed with every unit complete fails", pkg12(sco("a", nil), sco("b", nil)), threshold,
			func(s *Settings) { s.ApplyStatusToSuccess = true },
			State{"a": {LessonStatus: "passed", ScoreRaw: f(50)}, "b": {LessonStatus: "passed", ScoreRaw: f(60)}},
			"INCOMPLETE/PASSED", "INCOMPLETE/FAILED"},
		{"ApplyRollupStatusToSuccess: all complete with a failed unit passes", pkg12(sco("a", nil), sco("b", nil)), allComplete,
			func(s *Settings) { s.ApplyStatusToSuccess = true },
			State{"a": {LessonStatus: "passed"}, "b": {LessonStatus: "failed"}},
			"COMPLETED/FAILED", "COMPLETED/PASSED"},
		{"ApplyRollupStatusToSuccess: in progress stays unknown", pkg12(sco("a", nil), sco("b", nil)), allComplete,
			func(s *Settings) { s.ApplyStatusToSuccess = true },
			State{"a": {LessonStatus: "completed"}, "b": {LessonStatus: "incomplete"}},
			"INCOMPLETE/UNKNOWN", "INCOMPLETE/UNKNOWN"},
		{"ScoreOverridesStatus: a low score fails a passed SCO only when it overrides", pkg12(sco("a", f(80))), DefaultSettings(),
			func(s *Settings) { s.ScoreOverridesStatus = false },
			State{"a": {LessonStatus: "passed", ScoreRaw: f(40)}},
			"COMPLETED/FAILED", "COMPLETED/PASSED"},
		{"ScoreOverridesStatus: completed keeps its status without override", pkg12(sco("a", f(80))), DefaultSettings(),
			func(s *Settings) { s.ScoreOverridesStatus = false },
			State{"a": {LessonStatus: "completed", ScoreRaw: f(90)}},
			"COMPLETED/PASSED", "COMPLETED/UNKNOWN"},
		{"ScoreOverridesStatus: no reported status, the score decides either way", pkg12(sco("a", f(80))), DefaultSettings(),
			func(s *Settings) { s.ScoreOverridesStatus = false },
			State{"a": {LessonStatus: "not attempted", ScoreRaw: f(90)}},
			"COMPLETED/PASSED", "COMPLETED/PASSED"},
		{"SatisfiedCausesCompletion: a passed SCO is completed", pkg04(course.SCORM2004v4, cluster("org", nil, sco04("a"))), DefaultSettings(),
			func(s *Settings) { s.SatisfiedCausesCompletion = true },
			State{"a": {CompletionStatus: "incomplete", SuccessStatus: "passed"}},
			"INCOMPLETE/PASSED", "COMPLETED/PASSED"},
		{"SatisfiedCausesCompletion: failed is not", pkg04(course.SCORM2004v4, cluster("org", nil, sco04("a"))), DefaultSettings(),
			func(s *Settings) { s.SatisfiedCausesCompletion = true },
			State{"a": {CompletionStatus: "incomplete", SuccessStatus: "failed"}},
			"INCOMPLETE/FAILED", "INCOMPLETE/FAILED"},
		{"RollupEmptySetToUnknown: no contributing child", pkg04(course.SCORM2004v4, cluster("org", nil, silent)), DefaultSettings(),
			func(s *Settings) { s.EmptySetToUnknown = false },
			State{"a": {CompletionStatus: "incomplete", SuccessStatus: "failed"}},
			"INCOMPLETE/UNKNOWN", "COMPLETED/PASSED"},
		{"RollupEmptySetToUnknown: a contributing child decides", pkg04(course.SCORM2004v4, cluster("org", nil, sco04("a"))), DefaultSettings(),
			func(s *Settings) { s.EmptySetToUnknown = false },
			State{"a": {CompletionStatus: "incomplete", SuccessStatus: "failed"}},
			"INCOMPLETE/FAILED", "INCOMPLETE/FAILED"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := func(s Settings) string {
				r := Compute(Input{Package: tc.pkg, State: tc.state, Settings: s, ForCredit: true})
				return r.Completion + "/" + r.Success
			}
			if g := got(tc.settings); g != tc.off {
				t.Errorf("default: %s, want %s", g, tc.off)
			}
			on := tc.settings
			tc.tweak(&on)
			if g := got(on); g != tc.on {
				t.Errorf("changed: %s, want %s", g, tc.on)
			}
		})
	}
}
