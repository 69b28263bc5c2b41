package rollup

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/lectern-lms/lectern/course"
	"github.com/lectern-lms/lectern/course/registration"
)

// Details returns progress/detail's activity tree of an instance: registration.Details
// (the tree with its static properties and initial run-time data) filled with the rollup's
// statuses, scores, attempts, tracked time and objectives, and each launched activity's
// run-time data from state (nil state for cmi5/xAPI courses).
func (r Result) Details(pkg *course.Package, state State, forCredit bool) *registration.ActivityResult {
	tree := registration.Details(pkg, forCredit)
	var fill func(a *course.Activity, d *registration.ActivityResult)
	fill = func(a *course.Activity, d *registration.ActivityResult) {
		if out := r.Activities[a.ID]; out != nil {
			d.ActivityCompletion, d.ActivitySuccess = out.Completion, out.Success
			d.Attempts = out.Attempts
			d.TimeTracked = Duration(out.Seconds)
			if out.Score != nil {
				d.Score = &registration.Scaled{Scaled: *out.Score}
			}
			if out.CompletionAmount != nil {
				d.CompletionAmount = &registration.Scaled{Scaled: round4(*out.CompletionAmount * 100)}
			}
			for i := range d.Objectives {
				o := &d.Objectives[i]
				if o.Primary {
					o.ObjectiveCompletion, o.ObjectiveSuccess = out.Completion, out.Success
					if out.Score != nil {
						o.Score = &registration.Scaled{Scaled: *out.Score}
					}
				} else if oo, ok := out.Objectives[o.ID]; ok {
					o.ObjectiveCompletion, o.ObjectiveSuccess = oo.Completion, oo.Success
					if oo.Score != nil {
						o.Score = &registration.Scaled{Scaled: *oo.Score}
					}
				}
			}
		}
		if st := state[a.ID]; st != nil && d.Runtime != nil {
			d.Suspended = st.Suspended
			fillRuntime(d.Runtime, st, pkg.Standard, r.Activities[a.ID])
		}
		for i, c := range a.Children {
			if i < len(d.Children) {
				fill(c, d.Children[i])
			}
		}
	}
	fill(pkg.Root, tree)
	return tree
}

func fillRuntime(rt *registration.Runtime, st *ActivityState, std course.Standard, out *Outcome) {
	scorm12 := !std.IsSCORM2004()
	if scorm12 {
		// SCORM 1.2 has one status; the run-time view shows it as both, like Engine.
		ls := lessonStatus(st.LessonStatus)
		switch ls {
		case "passed", "failed":
			rt.CompletionStatus, rt.SuccessStatus = "completed", ls
		case "":
		default:
			rt.CompletionStatus = ls
		}
		// The LMS's mastery-score decision is part of the run-time data (SCORM 1.2 RTE:
		// the LMS sets lesson_status).
		if out != nil && out.Success != registration.Unknown {
			rt.CompletionStatus, rt.SuccessStatus = "completed", strings.ToLower(out.Success)
		}
	} else {
		setIf(&rt.CompletionStatus, norm(st.CompletionStatus))
		setIf(&rt.SuccessStatus, norm(st.SuccessStatus))
	}
	setIf(&rt.Credit, norm(st.Credit))
	setIf(&rt.Entry, vocab(st.Entry, map[string]string{"ab-initio": "abinitio", "resume": "resume", "": ""}, "other"))
	setIf(&rt.Exit, vocab(st.Exit, map[string]string{"time-out": "TimeOut", "suspend": "Suspend", "logout": "Logout",
		"normal": "Normal", "": ""}, "Undefined"))
	setIf(&rt.Mode, vocab(st.Mode, map[string]string{"normal": "Normal", "browse": "Browse", "review": "Review", "": ""}, ""))
	rt.Location, rt.SuspendData = st.Location, st.SuspendData
	rt.ProgressMeasure, rt.ScoreScaled = num(st.ProgressMeasure), num(st.ScoreScaled)
	if scorm12 && st.ScoreScaled == nil {
		rt.ScoreScaled = num(scaled12(st))
	}
	rt.ScoreRaw, rt.ScoreMin, rt.ScoreMax = num(st.ScoreRaw), num(st.ScoreMin), num(st.ScoreMax)
	setIf(&rt.TotalTime, totalTime(st.TotalTime))
	rt.TimeTracked = Duration(st.SecondsTracked)
	if st.LearnerPreference != nil {
		rt.LearnerPreference = *st.LearnerPreference
	}
	rt.LearnerComments = append(rt.LearnerComments, st.LearnerComments...)
	rt.LMSComments = append(rt.LMSComments, st.LMSComments...)
	rt.RuntimeInteractions = slices.Grow(rt.RuntimeInteractions, len(st.Interactions))
	for _, in := range st.Interactions {
		rt.RuntimeInteractions = append(rt.RuntimeInteractions, registration.RuntimeInteraction{
			ID: in.ID, Type: in.Type, Objectives: nonNil(in.Objectives), Timestamp: in.Timestamp,
			CorrectResponses: nonNil(in.CorrectResponses), Weighting: in.Weighting,
			LearnerResponse: in.LearnerResponse, Result: in.Result, Latency: in.Latency,
			Description: in.Description,
		})
	}
	for _, o := range st.Objectives {
		ro := map[string]string{"id": o.ID, "scoreScaled": num(o.ScoreScaled), "scoreMin": num(o.ScoreMin),
			"scoreMax": num(o.ScoreMax), "scoreRaw": num(o.ScoreRaw), "successStatus": norm(o.SuccessStatus),
			"completionStatus": norm(o.CompletionStatus), "progressMeasure": num(o.ProgressMeasure),
			"description": o.Description}
		if scorm12 {
			ls := lessonStatus(o.SuccessStatus)
			ro["successStatus"], ro["completionStatus"] = "unknown", ls
			if ls == "passed" || ls == "failed" {
				ro["successStatus"], ro["completionStatus"] = ls, "completed"
			}
		}
		for k, v := range ro {
			if v == "" && (k == "successStatus" || k == "completionStatus") {
				ro[k] = "unknown"
			}
		}
		rt.RuntimeObjectives = append(rt.RuntimeObjectives, ro)
	}
}

// scaled12 is a SCORM 1.2 score on the 0..1 scale: the raw score within min..max (0..100
// when unset), nil without a raw score or with max <= min.
func scaled12(st *ActivityState) *float64 {
	if st.ScoreRaw == nil {
		return nil
	}
	lo, hi := 0.0, 100.0
	if st.ScoreMin != nil {
		lo = *st.ScoreMin
	}
	if st.ScoreMax != nil {
		hi = *st.ScoreMax
	}
	if hi <= lo {
		return nil
	}
	return ptr(math.Max(0, math.Min(1, (*st.ScoreRaw-lo)/(hi-lo))))
}

// vocab maps a data-model value to the spelling progress/detail uses (Engine's: entry
// abinitio/resume, exit and mode capitalised), other for values outside the vocabulary.
func vocab(v string, m map[string]string, other string) string {
	if out, ok := m[norm(v)]; ok {
		return out
	}
	return other
}

func setIf(dst *string, v string) {
	if v != "" {
		*dst = v
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// num writes a run-time number as Engine does: a string, empty when unset.
func num(v *float64) string {
	if v == nil {
		return ""
	}
	return strconv.FormatFloat(*v, 'f', -1, 64)
}

// totalTime writes the content's total_time (a SCORM 2004 ISO 8601 duration, a SCORM 1.2
// or AICC timespan) as the run-time view writes every time, HHHH:MM:SS, so a report has one
// format per field whatever the standard; "" stays "", a value of neither form is kept.
func totalTime(v string) string {
	if v == "" {
		return ""
	}
	if strings.HasPrefix(v, "P") {
		s, ok := course.DurationSeconds(v)
		if !ok {
			return v
		}
		return Duration(s)
	}
	p := strings.Split(v, ":")
	if len(p) != 3 {
		return v
	}
	var sec float64
	for i, unit := range []float64{3600, 60, 1} {
		f, err := strconv.ParseFloat(p[i], 64)
		if err != nil || f < 0 {
			return v
		}
		sec += f * unit
	}
	return Duration(sec)
}

// Duration writes seconds as progress/detail's HHHH:MM:SS (hundredths dropped; at least
// four hour digits).
func Duration(seconds float64) string {
	if seconds < 0 || math.IsNaN(seconds) {
		seconds = 0
	}
	s := int64(seconds)
	return fmt.Sprintf("%04d:%02d:%02d", s/3600, s/60%60, s%60)
}
