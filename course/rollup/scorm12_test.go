package rollup

import (
	"fmt"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/course"
	"github.com/lectern-lms/lectern/course/registration"
)

func f(v float64) *float64 { return &v }

func sco(id string, mastery *float64) *course.Activity {
	return &course.Activity{ID: id, Title: "SCO " + id, LaunchURL: id + ".html", ScormType: "sco", MasteryScore: mastery}
}

func pkg12(acts ...*course.Activity) *course.Package {
	return &course.Package{Standard: course.SCORM12, Root: &course.Activity{ID: "org", Title: "Course", Children: acts}}
}

func fmtScore(p *float64) string {
	if p == nil {
		return "nil"
	}
	return fmt.Sprint(*p)
}

func TestSCORM12LessonStatusSplit(t *testing.T) {
	for _, tc := range []struct {
		status, completion, success string
	}{
		{"passed", registration.Completed, registration.Passed},
		{"failed", registration.Completed, registration.Failed},
		{"completed", registration.Completed, registration.Unknown},
		{"incomplete", registration.Incomplete, registration.Unknown},
		{"browsed", registration.Incomplete, registration.Unknown},
		{"not attempted", registration.Incomplete, registration.Unknown},
		{"P", registration.Completed, registration.Passed}, // AICC one-letter form
		{"Failed", registration.Completed, registration.Failed},
	} {
		t.Run(tc.status, func(t *testing.T) {
			r := Compute(Input{Package: pkg12(sco("a", nil)), Settings: DefaultSettings(), ForCredit: true,
				State: State{"a": {LessonStatus: tc.status, SecondsTracked: 65}}})
			if r.Completion != tc.completion || r.Success != tc.success {
				t.Fatalf("%s: got %s/%s, want %s/%s", tc.status, r.Completion, r.Success, tc.completion, tc.success)
			}
			if r.TotalSecondsTracked != 65 {
				t.Fatalf("totalSecondsTracked %v, want 65", r.TotalSecondsTracked)
			}
		})
	}
	r := Compute(Input{Package: pkg12(sco("a", nil)), Settings: DefaultSettings(), ForCredit: true})
	if r.Completion != registration.Unknown || r.Success != registration.Unknown || r.Score != nil || r.CompletionAmount != nil {
		t.Fatalf("never launched: %+v", r)
	}
}

func TestSCORM12MasteryScoreDecides(t *testing.T) {
	for _, tc := range []struct {
		name      string
		raw       float64
		status    string
		credit    string
		mode      string
		forCredit bool
		want      string
	}{
		{"score above mastery passes an incomplete SCO", 85, "incomplete", "", "", true, registration.Passed},
		{"score below mastery fails a passed SCO", 70, "passed", "credit", "normal", true, registration.Failed},
		{"mastery equals score passes", 80, "completed", "", "", true, registration.Passed},
		{"no-credit registration keeps the SCO's status", 70, "passed", "", "", false, registration.Passed},
		{"no-credit run-time keeps the SCO's status", 70, "passed", "no-credit", "", true, registration.Passed},
		{"AICC No Credit keeps the unit's status", 70, "p", "No Credit", "", true, registration.Passed},
		{"review mode keeps the SCO's status", 90, "incomplete", "", "review", true, registration.Unknown},
		{"browsed stays browsed", 90, "browsed", "", "", true, registration.Unknown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Compute(Input{Package: pkg12(sco("a", f(80))), Settings: DefaultSettings(), ForCredit: tc.forCredit,
				State: State{"a": {LessonStatus: tc.status, ScoreRaw: f(tc.raw), Credit: tc.credit, Mode: tc.mode}}})
			if r.Success != tc.want {
				t.Fatalf("success %s, want %s", r.Success, tc.want)
			}
		})
	}
}

func TestSCORM12ScoreScaling(t *testing.T) {
	for _, tc := range []struct {
		raw, min, max *float64
		want          string
	}{
		{f(42), nil, nil, "42"},
		{f(7), f(0), f(10), "70"},
		{f(15), f(10), f(20), "50"},
		{f(150), nil, nil, "100"},
		{f(-3), nil, nil, "0"},
		{f(5), f(10), f(10), "5"}, // unusable range: raw as is
	} {
		r := Compute(Input{Package: pkg12(sco("a", nil)), Settings: DefaultSettings(),
			State: State{"a": {LessonStatus: "completed", ScoreRaw: tc.raw, ScoreMin: tc.min, ScoreMax: tc.max}}})
		if got := fmtScore(r.Score); got != tc.want {
			t.Errorf("raw %v min %v max %v: score %s, want %s", *tc.raw, fmtScore(tc.min), fmtScore(tc.max), got, tc.want)
		}
	}
}

// threeSCOs is a course of three SCOs in the given states (nil = never launched), updated
// one minute apart in tree order unless reordered.
func threeSCOs(states ...*ActivityState) (*course.Package, State) {
	p := pkg12(sco("s1", nil), sco("s2", nil), sco("s3", nil))
	st := State{}
	base := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	for i, s := range states {
		if s != nil {
			if s.Updated.IsZero() {
				s.Updated = base.Add(time.Duration(i) * time.Minute)
			}
			st[fmt.Sprintf("s%d", i+1)] = s
		}
	}
	return p, st
}

func TestSCORM12StatusRollupModes(t *testing.T) {
	type states = []*ActivityState
	allComplete := func() states {
		return states{{LessonStatus: "passed", ScoreRaw: f(90)}, {LessonStatus: "completed", ScoreRaw: f(60)}, {LessonStatus: "failed", ScoreRaw: f(30)}}
	}
	allPassed := func() states {
		return states{{LessonStatus: "passed", ScoreRaw: f(90)}, {LessonStatus: "passed", ScoreRaw: f(80)}, {LessonStatus: "passed", ScoreRaw: f(100)}}
	}
	oneLeft := func() states {
		return states{{LessonStatus: "passed", ScoreRaw: f(90)}, {LessonStatus: "passed", ScoreRaw: f(90)}, nil}
	}
	completeNoFail := func() states {
		return states{{LessonStatus: "passed", ScoreRaw: f(90)}, {LessonStatus: "completed", ScoreRaw: f(70)}, {LessonStatus: "completed"}}
	}
	for _, tc := range []struct {
		mode      string
		threshold float64
		states    states
		want      string
		success   string
	}{
		{CompleteWhenAllUnitsComplete, 0, allComplete(), registration.Completed, registration.Failed},
		{CompleteWhenAllUnitsComplete, 0, oneLeft(), registration.Incomplete, registration.Unknown},
		{CompleteWhenAllCompleteNotFail, 0, allComplete(), registration.Incomplete, registration.Failed},
		{CompleteWhenAllCompleteNotFail, 0, completeNoFail(), registration.Completed, registration.Unknown},
		{CompleteWhenAllCompleteNotFail, 0, allPassed(), registration.Completed, registration.Passed},
		// Average of units with scores: (90+60+30)/3 = 60; of oneLeft: 90.
		{CompleteWhenThresholdScoreMet, 60, allComplete(), registration.Completed, registration.Failed},
		{CompleteWhenThresholdScoreMet, 61, allComplete(), registration.Incomplete, registration.Failed},
		{CompleteWhenThresholdScoreMet, 80, oneLeft(), registration.Completed, registration.Unknown},
		{CompleteWhenAllCompleteAndScore, 80, oneLeft(), registration.Incomplete, registration.Unknown},
		{CompleteWhenAllCompleteAndScore, 80, completeNoFail(), registration.Completed, registration.Unknown}, // (90+70)/2 = 80
		{CompleteWhenAllCompleteAndScore, 81, completeNoFail(), registration.Incomplete, registration.Unknown},
		{CompleteWhenAllCompleteAndScore, 50, allComplete(), registration.Incomplete, registration.Failed},
		{CompleteWhenAllUnitsPassed, 0, completeNoFail(), registration.Incomplete, registration.Unknown},
		{CompleteWhenAllUnitsPassed, 0, allPassed(), registration.Completed, registration.Passed},
		{StatusProvidedByCourse, 0, allComplete(), registration.Completed, registration.Failed}, // s3 is the last updated
		{CompleteWhenAllUnitsComplete, 0, states{nil, nil, nil}, registration.Unknown, registration.Unknown},
	} {
		t.Run(fmt.Sprintf("%s_%v", tc.mode, tc.threshold), func(t *testing.T) {
			p, st := threeSCOs(tc.states...)
			s := DefaultSettings()
			s.StatusRollupMode, s.ThresholdScore = tc.mode, tc.threshold
			r := Compute(Input{Package: p, State: st, Settings: s, ForCredit: true})
			if r.Completion != tc.want || r.Success != tc.success {
				t.Fatalf("got %s/%s, want %s/%s (score %s)", r.Completion, r.Success, tc.want, tc.success, fmtScore(r.Score))
			}
		})
	}
}

func TestSCORM12StatusProvidedByCourseFollowsLastUpdatedSCO(t *testing.T) {
	p, st := threeSCOs(&ActivityState{LessonStatus: "incomplete"}, &ActivityState{LessonStatus: "passed", ScoreRaw: f(95)}, nil)
	st["s1"].Updated = st["s2"].Updated.Add(time.Hour)
	s := DefaultSettings()
	s.StatusRollupMode, s.ScoreRollupMode = StatusProvidedByCourse, ScoreProvidedByCourse
	r := Compute(Input{Package: p, State: st, Settings: s, ForCredit: true})
	if r.Completion != registration.Incomplete || r.Success != registration.Unknown || r.Score != nil {
		t.Fatalf("got %s/%s score %s; want the last updated SCO s1: INCOMPLETE/UNKNOWN, no score", r.Completion, r.Success, fmtScore(r.Score))
	}
	s.ScoreRollupMode = LastSCOScore
	if r := Compute(Input{Package: p, State: st, Settings: s}); fmtScore(r.Score) != "95" {
		t.Fatalf("LAST_SCO_SCORE %s, want the last SCO with a score (95)", fmtScore(r.Score))
	}
}

func TestSCORM12ScoreRollupModes(t *testing.T) {
	states := func() []*ActivityState {
		return []*ActivityState{{LessonStatus: "passed", ScoreRaw: f(90)}, {LessonStatus: "completed", ScoreRaw: f(0)}, {LessonStatus: "incomplete"}}
	}
	for _, tc := range []struct {
		mode string
		n    int
		want string
	}{
		{AverageOfAllUnits, 0, "30"},        // 90/3
		{AverageOfUnitsWithScores, 0, "45"}, // 90/2
		{AverageOfNonzeroScores, 0, "90"},   // 90/1
		{FixedAverage, 4, "22.5"},           // 90/4
		{FixedAverage, 1, "90"},
		{ScoreProvidedByCourse, 0, "nil"}, // s3, the last updated, has no score
		{LastSCOScore, 0, "0"},            // s2 is the last SCO with a score
	} {
		t.Run(fmt.Sprintf("%s_%d", tc.mode, tc.n), func(t *testing.T) {
			p, st := threeSCOs(states()...)
			s := DefaultSettings()
			s.ScoreRollupMode = tc.mode
			if tc.n > 0 {
				s.ScoringObjects = tc.n
			}
			r := Compute(Input{Package: p, State: st, Settings: s})
			if got := fmtScore(r.Score); got != tc.want {
				t.Fatalf("score %s, want %s", got, tc.want)
			}
		})
	}
	p, st := threeSCOs(&ActivityState{LessonStatus: "incomplete"}, nil, nil)
	if r := Compute(Input{Package: p, State: st, Settings: DefaultSettings()}); r.Score != nil {
		t.Fatalf("no SCO reported a score, got %s", fmtScore(r.Score))
	}
}

func TestSCORM12CompletionOfFailed(t *testing.T) {
	for _, tc := range []struct{ setting, want string }{
		{"completed", registration.Completed}, {"incomplete", registration.Incomplete}, {"unknown", registration.Unknown},
	} {
		s := DefaultSettings()
		s.CompletionOfFailed = tc.setting
		r := Compute(Input{Package: pkg12(sco("a", nil)), Settings: s, State: State{"a": {LessonStatus: "failed"}}})
		if r.Completion != tc.want || r.Success != registration.Failed {
			t.Errorf("%s: got %s/%s, want %s/FAILED", tc.setting, r.Completion, r.Success, tc.want)
		}
	}
}

func TestSCORM12CompletionAmountAndTime(t *testing.T) {
	p, st := threeSCOs(&ActivityState{LessonStatus: "passed", SecondsTracked: 100}, &ActivityState{LessonStatus: "incomplete", SecondsTracked: 20.5}, nil)
	r := Compute(Input{Package: p, State: st, Settings: DefaultSettings()})
	if r.CompletionAmount == nil || *r.CompletionAmount != 0.3333 {
		t.Fatalf("completion amount %s, want 0.3333", fmtScore(r.CompletionAmount))
	}
	if r.TotalSecondsTracked != 120.5 {
		t.Fatalf("seconds %v, want 120.5", r.TotalSecondsTracked)
	}
}

func TestSCORM12AssetsAndNestedClusters(t *testing.T) {
	asset := &course.Activity{ID: "pdf", Title: "Handout", LaunchURL: "h.pdf", ScormType: "asset"}
	mod := &course.Activity{ID: "m1", Title: "Module", Children: []*course.Activity{sco("a", nil), sco("b", nil)}}
	p := pkg12(mod, asset)
	st := State{"a": {LessonStatus: "passed"}, "b": {LessonStatus: "completed"}, "pdf": {SecondsTracked: 3}}
	r := Compute(Input{Package: p, State: st, Settings: DefaultSettings()})
	if got := r.Activities["pdf"].Completion; got != registration.Completed {
		t.Fatalf("a launched asset is %s, want COMPLETED", got)
	}
	if got := r.Activities["m1"]; got.Completion != registration.Completed || got.Success != registration.Unknown {
		t.Fatalf("module %s/%s, want COMPLETED/UNKNOWN", got.Completion, got.Success)
	}
	if r.Completion != registration.Completed {
		t.Fatalf("course %s, want COMPLETED", r.Completion)
	}
	delete(st, "pdf")
	if r := Compute(Input{Package: p, State: st, Settings: DefaultSettings()}); r.Completion != registration.Incomplete {
		t.Fatalf("asset never opened: course %s, want INCOMPLETE", r.Completion)
	}
}

func TestParseSettings(t *testing.T) {
	s, err := ParseSettings(map[string]string{SettingStatusRollupMode: "complete_when_all_units_are_passed", SettingThresholdScore: "75",
		SettingScoreRollupMode: FixedAverage, SettingScoringObjects: "5", SettingScaleRawScore: "true", SettingCompletionOfFailed: "incomplete"})
	if err != nil {
		t.Fatal(err)
	}
	want := Settings{StatusRollupMode: CompleteWhenAllUnitsPassed, ThresholdScore: 75, ScoreRollupMode: FixedAverage, ScoringObjects: 5, ScaleRawScore: true, CompletionOfFailed: "incomplete",
		ScoreOverridesStatus: true, EmptySetToUnknown: true}
	if s != want {
		t.Fatalf("got %+v, want %+v", s, want)
	}
	if s, err := ParseSettings(nil); err != nil || s != DefaultSettings() {
		t.Fatalf("empty values: %+v %v", s, err)
	}
	for id, v := range map[string]string{SettingStatusRollupMode: "SOMETIMES", SettingThresholdScore: "101", SettingScoreRollupMode: "MAX",
		SettingScoringObjects: "0", SettingScaleRawScore: "maybe", SettingCompletionOfFailed: "passed", SettingApplyStatusToSucc: "x",
		SettingScoreOverrides: "x", SettingSatisfiedCompletes: "x", SettingEmptySetUnknown: "x"} {
		if _, err := ParseSettings(map[string]string{id: v}); err == nil {
			t.Errorf("%s=%q accepted", id, v)
		}
	}
}
