package rollup

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/lectern-lms/lectern/course/registration"
)

// FromCMI reads a SCORM 1.2 or 2004 run-time data model in flat form — data model element
// → value, as scorm-again's "flattened" commit format and LMSGetValue spell them
// ("cmi.core.lesson_status", "cmi.interactions.0.id", "cmi.objectives.1.score.scaled") —
// into the rollup's state. Unknown elements are ignored; a number that does not parse is an
// error naming the element, so a commit carrying one can be refused. Launch counts, tracked
// seconds, Terminated, Suspended and Updated are the server's and are left to the caller.
func FromCMI(cmi map[string]string) (*ActivityState, error) {
	st := &ActivityState{}
	var errs []string
	number := func(key string) *float64 {
		v, ok := cmi[key]
		if !ok || strings.TrimSpace(v) == "" {
			return nil
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			errs = append(errs, key)
			return nil
		}
		return &f
	}
	first := func(keys ...string) string {
		for _, k := range keys {
			if v, ok := cmi[k]; ok {
				return v
			}
		}
		return ""
	}
	firstNum := func(keys ...string) *float64 {
		for _, k := range keys {
			if _, ok := cmi[k]; ok {
				return number(k)
			}
		}
		return nil
	}
	st.LessonStatus = cmi["cmi.core.lesson_status"]
	st.CompletionStatus = cmi["cmi.completion_status"]
	st.SuccessStatus = cmi["cmi.success_status"]
	st.ScoreScaled = number("cmi.score.scaled")
	st.ScoreRaw = firstNum("cmi.score.raw", "cmi.core.score.raw")
	st.ScoreMin = firstNum("cmi.score.min", "cmi.core.score.min")
	st.ScoreMax = firstNum("cmi.score.max", "cmi.core.score.max")
	st.ProgressMeasure = number("cmi.progress_measure")
	st.Credit = first("cmi.credit", "cmi.core.credit")
	st.Mode = first("cmi.mode", "cmi.core.lesson_mode")
	st.Entry = first("cmi.entry", "cmi.core.entry")
	st.Exit = first("cmi.exit", "cmi.core.exit")
	st.Location = first("cmi.location", "cmi.core.lesson_location")
	st.SuspendData = cmi["cmi.suspend_data"]
	st.TotalTime = first("cmi.total_time", "cmi.core.total_time")

	if hasPrefix(cmi, "cmi.learner_preference.") || hasPrefix(cmi, "cmi.student_preference.") {
		lp := registration.LearnerPreference{AudioLevel: 1, DeliverySpeed: 1}
		if v := firstNum("cmi.learner_preference.audio_level", "cmi.student_preference.audio"); v != nil {
			lp.AudioLevel = *v
		}
		lp.Language = first("cmi.learner_preference.language", "cmi.student_preference.language")
		if v := firstNum("cmi.learner_preference.delivery_speed", "cmi.student_preference.speed"); v != nil {
			lp.DeliverySpeed = *v
		}
		if v := firstNum("cmi.learner_preference.audio_captioning", "cmi.student_preference.text"); v != nil {
			lp.AudioCaptioning = int(*v)
		}
		st.LearnerPreference = &lp
	}
	if c := cmi["cmi.comments"]; c != "" { // SCORM 1.2: one string
		st.LearnerComments = append(st.LearnerComments, registration.Comment{Value: c})
	}
	if c := cmi["cmi.comments_from_lms"]; c != "" {
		st.LMSComments = append(st.LMSComments, registration.Comment{Value: c})
	}
	for _, n := range indexes(cmi, "cmi.comments_from_learner.") {
		p := "cmi.comments_from_learner." + n + "."
		st.LearnerComments = append(st.LearnerComments, registration.Comment{Value: cmi[p+"comment"], Location: cmi[p+"location"], DateTime: cmi[p+"timestamp"]})
	}
	for _, n := range indexes(cmi, "cmi.comments_from_lms.") {
		p := "cmi.comments_from_lms." + n + "."
		st.LMSComments = append(st.LMSComments, registration.Comment{Value: cmi[p+"comment"], Location: cmi[p+"location"], DateTime: cmi[p+"timestamp"]})
	}
	for _, n := range indexes(cmi, "cmi.objectives.") {
		p := "cmi.objectives." + n + "."
		o := ObjectiveState{ID: cmi[p+"id"], SuccessStatus: first(p+"success_status", p+"status"),
			CompletionStatus: cmi[p+"completion_status"], ScoreScaled: number(p + "score.scaled"),
			ScoreRaw: number(p + "score.raw"), ScoreMin: number(p + "score.min"), ScoreMax: number(p + "score.max"),
			ProgressMeasure: number(p + "progress_measure"), Description: cmi[p+"description"]}
		if o.ID != "" {
			st.Objectives = append(st.Objectives, o)
		}
	}
	for _, n := range indexes(cmi, "cmi.interactions.") {
		p := "cmi.interactions." + n + "."
		in := Interaction{ID: cmi[p+"id"], Type: cmi[p+"type"], Timestamp: first(p+"timestamp", p+"time"),
			Weighting: cmi[p+"weighting"], LearnerResponse: first(p+"learner_response", p+"student_response"),
			Result: cmi[p+"result"], Latency: cmi[p+"latency"], Description: cmi[p+"description"]}
		for _, m := range indexes(cmi, p+"objectives.") {
			in.Objectives = append(in.Objectives, cmi[p+"objectives."+m+".id"])
		}
		for _, m := range indexes(cmi, p+"correct_responses.") {
			in.CorrectResponses = append(in.CorrectResponses, cmi[p+"correct_responses."+m+".pattern"])
		}
		if in.ID != "" {
			st.Interactions = append(st.Interactions, in)
		}
	}
	if len(errs) > 0 {
		sort.Strings(errs)
		return st, fmt.Errorf("rollup: not a number: %s", strings.Join(errs, ", "))
	}
	return st, nil
}

func hasPrefix(m map[string]string, prefix string) bool {
	for k := range m {
		if strings.HasPrefix(k, prefix) {
			return true
		}
	}
	return false
}

// indexes returns the distinct array indexes n of keys "<prefix>n.…", in numeric order.
func indexes(m map[string]string, prefix string) []string {
	seen := map[int]bool{}
	for k := range m {
		rest, ok := strings.CutPrefix(k, prefix)
		if !ok {
			continue
		}
		num, _, ok := strings.Cut(rest, ".")
		if !ok {
			continue
		}
		if n, err := strconv.Atoi(num); err == nil && n >= 0 {
			seen[n] = true
		}
	}
	out := make([]int, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Ints(out)
	s := make([]string, len(out))
	for i, n := range out {
		s[i] = strconv.Itoa(n)
	}
	return s
}
