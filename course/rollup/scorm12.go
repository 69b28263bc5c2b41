package rollup

import (
	"github.com/lectern-lms/lectern/course"
	"github.com/lectern-lms/lectern/course/registration"
)

// unit is the outcome of one SCORM 1.2 / AICC launchable activity, in tree order.
type unit struct {
	out   *Outcome
	state *ActivityState
	order int
}

// computeSCORM12 applies the SCORM 1.2 split of lesson_status to each SCO (or AICC unit,
// or asset) and the rudimentary rollup settings to each cluster; the registration takes
// the root's values.
func computeSCORM12(in Input) Result {
	r := Result{Activities: map[string]*Outcome{}}
	order := 0
	var visit func(a *course.Activity) []unit
	visit = func(a *course.Activity) []unit {
		if len(a.Children) == 0 {
			st := in.State[a.ID]
			out := scorm12Leaf(a, st, in)
			r.Activities[a.ID] = out
			r.TotalSecondsTracked += out.Seconds
			order++
			if a.LaunchURL == "" {
				return nil // an empty container is no unit
			}
			return []unit{{out: out, state: st, order: order}}
		}
		var units []unit
		for _, c := range a.Children {
			units = append(units, visit(c)...)
		}
		out := scorm12Cluster(units, in.Settings)
		r.Activities[a.ID] = out
		return units
	}
	visit(in.Package.Root)
	root := r.Activities[in.Package.Root.ID]
	r.Completion, r.Success, r.Score, r.CompletionAmount = root.Completion, root.Success, root.Score, root.CompletionAmount
	return r
}

// scorm12Leaf splits lesson_status into completion and success (reference §2.9). With a
// mastery score, credit and normal mode, a reported raw score decides passed/failed (SCORM
// 1.2 RTE 3.4.2, cmi.core.lesson_status: "the LMS should change the status to passed or
// failed") — over the content's own status only with ScoreOverridesStatus. Assets have no
// API: a launched asset is completed.
func scorm12Leaf(a *course.Activity, st *ActivityState, in Input) *Outcome {
	out := &Outcome{Completion: registration.Unknown, Success: registration.Unknown, Attempts: st.attempts()}
	if st == nil {
		return out
	}
	out.Seconds = st.SecondsTracked
	if a.ScormType == "asset" {
		out.Completion = registration.Completed
		return out
	}
	out.Score = scorm12Score(st)
	status := lessonStatus(st.LessonStatus)
	credit := in.ForCredit && !noCredit(st.Credit)
	reported := status != "" && status != "not attempted"
	if a.MasteryScore != nil && st.ScoreRaw != nil && credit && (st.Mode == "" || norm(st.Mode) == "normal") && status != "browsed" &&
		(in.Settings.ScoreOverridesStatus || !reported) {
		if *st.ScoreRaw >= *a.MasteryScore {
			status = "passed"
		} else {
			status = "failed"
		}
	}
	switch status {
	case "passed":
		out.Completion, out.Success = registration.Completed, registration.Passed
	case "failed":
		out.Success = registration.Failed
		switch in.Settings.CompletionOfFailed {
		case "incomplete":
			out.Completion = registration.Incomplete
		case "unknown":
		default:
			out.Completion = registration.Completed
		}
	case "completed":
		out.Completion = registration.Completed
	default: // incomplete, browsed, not attempted (or nothing yet) of a launched unit
		out.Completion = registration.Incomplete
	}
	if out.Completion == registration.Completed {
		out.CompletionAmount = ptr(1)
	} else {
		out.CompletionAmount = ptr(0)
	}
	out.Objectives = map[string]ObjectiveOutcome{}
	for _, o := range st.Objectives {
		oo := ObjectiveOutcome{Completion: registration.Unknown, Success: registration.Unknown, Score: rawPercent(o.ScoreRaw, o.ScoreMin, o.ScoreMax)}
		switch lessonStatus(o.SuccessStatus) {
		case "passed":
			oo.Completion, oo.Success = registration.Completed, registration.Passed
		case "failed":
			oo.Completion, oo.Success = registration.Completed, registration.Failed
		case "completed":
			oo.Completion = registration.Completed
		case "incomplete", "browsed":
			oo.Completion = registration.Incomplete
		}
		out.Objectives[o.ID] = oo
	}
	return out
}

// lessonStatus normalises a SCORM 1.2 or AICC lesson_status (AICC allows the first letter).
func lessonStatus(s string) string {
	s = norm(s)
	switch s {
	case "p":
		return "passed"
	case "c":
		return "completed"
	case "f":
		return "failed"
	case "i":
		return "incomplete"
	case "b":
		return "browsed"
	case "n", "not_attempted", "not-attempted":
		return "not attempted"
	}
	return s
}

// scorm12Score puts score.raw on the API's 0-100 scale: by min/max when both are given and
// differ, else as is (SCORM 1.2's default range is 0-100), clamped to 0-100.
func scorm12Score(st *ActivityState) *float64 {
	return rawPercent(st.ScoreRaw, st.ScoreMin, st.ScoreMax)
}

func rawPercent(raw, min, max *float64) *float64 {
	if raw == nil {
		return nil
	}
	v := *raw
	if min != nil && max != nil && *max > *min {
		v = (v - *min) / (*max - *min) * 100
	}
	v = max0(min100(v))
	return ptr(round4(v))
}

func min100(v float64) float64 {
	if v > 100 {
		return 100
	}
	return v
}

func max0(v float64) float64 {
	if v < 0 {
		return 0
	}
	return v
}

// scorm12Cluster rolls units up into a cluster (or the course). A cluster of one unit takes
// that unit's values: the modes are Engine's multi-SCO "rudimentary rollup", and a
// single-SCO course is its SCO (reference §2.9).
func scorm12Cluster(units []unit, s Settings) *Outcome {
	out := &Outcome{Completion: registration.Unknown, Success: registration.Unknown}
	if len(units) == 0 {
		return out
	}
	launched := 0
	for _, u := range units {
		out.Seconds += u.out.Seconds
		if u.state != nil {
			launched++
		}
	}
	if launched > 0 {
		out.Attempts = 1
	}
	if len(units) == 1 {
		u := units[0].out
		out.Completion, out.Success, out.Score, out.CompletionAmount = u.Completion, u.Success, u.Score, u.CompletionAmount
		return out
	}
	complete, failed, passed := 0, 0, 0
	for _, u := range units {
		if u.out.Completion == registration.Completed {
			complete++
		}
		switch u.out.Success {
		case registration.Failed:
			failed++
		case registration.Passed:
			passed++
		}
	}
	if launched > 0 {
		out.CompletionAmount = ptr(round4(float64(complete) / float64(len(units))))
	}
	out.Score = scoreRollup(units, s)
	last := lastUnit(units)
	met := false
	switch s.StatusRollupMode {
	case StatusProvidedByCourse:
		if last != nil {
			out.Completion, out.Success = last.out.Completion, last.out.Success
		}
		return out
	case CompleteWhenAllUnitsComplete:
		met = complete == len(units)
	case CompleteWhenThresholdScoreMet:
		met = out.Score != nil && *out.Score >= s.ThresholdScore
	case CompleteWhenAllCompleteAndScore:
		met = complete == len(units) && failed == 0 && out.Score != nil && *out.Score >= s.ThresholdScore
	case CompleteWhenAllUnitsPassed:
		met = passed == len(units)
	default: // CompleteWhenAllCompleteNotFail
		met = complete == len(units) && failed == 0
	}
	switch {
	case met:
		out.Completion = registration.Completed
	case launched > 0:
		out.Completion = registration.Incomplete
	}
	out.Success = clusterSuccess(s, met, complete, failed, passed, len(units))
	return out
}

// clusterSuccess is a SCORM 1.2 cluster's success: FAILED if any unit failed, PASSED if all
// passed, else UNKNOWN; with ApplyStatusToSuccess the status rollup decides instead: PASSED
// when met, FAILED when not met although every unit is complete (nothing left to do can meet
// it), else UNKNOWN.
func clusterSuccess(s Settings, met bool, complete, failed, passed, units int) string {
	if s.ApplyStatusToSuccess {
		switch {
		case met:
			return registration.Passed
		case complete == units:
			return registration.Failed
		}
		return registration.Unknown
	}
	switch {
	case failed > 0:
		return registration.Failed
	case passed == units:
		return registration.Passed
	}
	return registration.Unknown
}

// lastUnit is the most recently updated launched unit (ties: the later in tree order).
func lastUnit(units []unit) *unit {
	var last *unit
	for i := range units {
		u := &units[i]
		if u.state == nil {
			continue
		}
		if last == nil || !u.state.Updated.Before(last.state.Updated) {
			last = u
		}
	}
	return last
}

func scoreRollup(units []unit, s Settings) *float64 {
	sum, withScore, nonzero := 0.0, 0, 0
	for _, u := range units {
		if u.out.Score != nil {
			sum += *u.out.Score
			withScore++
			if *u.out.Score > 0 {
				nonzero++
			}
		}
	}
	switch s.ScoreRollupMode {
	case ScoreProvidedByCourse:
		if last := lastUnit(units); last != nil {
			return last.out.Score
		}
		return nil
	case LastSCOScore:
		var scored []unit
		for _, u := range units {
			if u.out.Score != nil {
				scored = append(scored, u)
			}
		}
		if last := lastUnit(scored); last != nil {
			return last.out.Score
		}
		return nil
	}
	if withScore == 0 {
		return nil
	}
	div := withScore
	switch s.ScoreRollupMode {
	case AverageOfAllUnits:
		div = len(units)
	case FixedAverage:
		div = max(s.ScoringObjects, 1)
	case AverageOfNonzeroScores:
		if nonzero == 0 {
			return ptr(0)
		}
		div = nonzero
	}
	return ptr(round4(min100(sum / float64(div))))
}

// noCredit reads SCORM 1.2 cmi.core.credit and AICC credit (no-credit, "No Credit", n).
func noCredit(v string) bool {
	switch norm(v) {
	case "no-credit", "no credit", "nocredit", "no_credit", "n":
		return true
	}
	return false
}
