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
func FromCMI(cmi map[string]string) (*ActivityState, error) { return fromCMI(cmi, true) }

// StatusFromCMI is FromCMI without the interactions and comments, which no rollup rule reads:
// what a commit's rollup needs, at a cost that does not grow with the interactions the
// content recorded.
func StatusFromCMI(cmi map[string]string) (*ActivityState, error) { return fromCMI(cmi, false) }

func fromCMI(cmi map[string]string, detail bool) (*ActivityState, error) {
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
	col := collectionsOf(cmi, detail)
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
	for _, n := range col.indexes("cmi.objectives.") {
		p := "cmi.objectives." + n + "."
		o := ObjectiveState{ID: cmi[p+"id"], SuccessStatus: first(p+"success_status", p+"status"),
			CompletionStatus: cmi[p+"completion_status"], ScoreScaled: number(p + "score.scaled"),
			ScoreRaw: number(p + "score.raw"), ScoreMin: number(p + "score.min"), ScoreMax: number(p + "score.max"),
			ProgressMeasure: number(p + "progress_measure"), Description: cmi[p+"description"]}
		if o.ID != "" {
			st.Objectives = append(st.Objectives, o)
		}
	}
	if !detail {
		return st, numberErrors(errs)
	}
	if c := cmi["cmi.comments"]; c != "" { // SCORM 1.2: one string
		st.LearnerComments = append(st.LearnerComments, registration.Comment{Value: c})
	}
	if c := cmi["cmi.comments_from_lms"]; c != "" {
		st.LMSComments = append(st.LMSComments, registration.Comment{Value: c})
	}
	for _, n := range col.indexes("cmi.comments_from_learner.") {
		p := "cmi.comments_from_learner." + n + "."
		st.LearnerComments = append(st.LearnerComments, registration.Comment{Value: cmi[p+"comment"], Location: cmi[p+"location"], DateTime: cmi[p+"timestamp"]})
	}
	for _, n := range col.indexes("cmi.comments_from_lms.") {
		p := "cmi.comments_from_lms." + n + "."
		st.LMSComments = append(st.LMSComments, registration.Comment{Value: cmi[p+"comment"], Location: cmi[p+"location"], DateTime: cmi[p+"timestamp"]})
	}
	for _, n := range col.indexes("cmi.interactions.") {
		p := "cmi.interactions." + n + "."
		in := Interaction{ID: cmi[p+"id"], Type: cmi[p+"type"], Timestamp: first(p+"timestamp", p+"time"),
			Weighting: cmi[p+"weighting"], LearnerResponse: first(p+"learner_response", p+"student_response"),
			Result: cmi[p+"result"], Latency: cmi[p+"latency"], Description: cmi[p+"description"]}
		for _, m := range col.indexes(p + "objectives.") {
			in.Objectives = append(in.Objectives, cmi[p+"objectives."+m+".id"])
		}
		for _, m := range col.indexes(p + "correct_responses.") {
			in.CorrectResponses = append(in.CorrectResponses, cmi[p+"correct_responses."+m+".pattern"])
		}
		if in.ID != "" {
			st.Interactions = append(st.Interactions, in)
		}
	}
	return st, numberErrors(errs)
}

// numberErrors names the elements whose numbers did not parse; nil when none.
func numberErrors(errs []string) error {
	if len(errs) == 0 {
		return nil
	}
	sort.Strings(errs)
	return fmt.Errorf("rollup: not a number: %s", strings.Join(errs, ", "))
}

func hasPrefix(m map[string]string, prefix string) bool {
	for k := range m {
		if strings.HasPrefix(k, prefix) {
			return true
		}
	}
	return false
}

// collections are the indexes of every collection in a data model, by the collection's
// prefix: "cmi.interactions." → 0, 1, …; "cmi.interactions.3.objectives." → 0, 1, ….
// Built in one pass over the names (the interactions and comments left out unless detail
// asks for them), so reading a data model costs the same per element
// however many interactions it holds.
type collections map[string]map[int]struct{}

func collectionsOf(cmi map[string]string, detail bool) collections {
	col := collections{}
	for k := range cmi {
		if !detail && (strings.HasPrefix(k, "cmi.interactions.") || strings.HasPrefix(k, "cmi.comments_from_")) {
			continue
		}
		start := 0
		for {
			dot := strings.IndexByte(k[start:], '.')
			if dot < 0 {
				break
			}
			seg := k[start : start+dot]
			if n, ok := index(seg); ok {
				prefix := k[:start]
				if col[prefix] == nil {
					col[prefix] = map[int]struct{}{}
				}
				col[prefix][n] = struct{}{}
			}
			start += dot + 1
		}
	}
	return col
}

// index reads a collection index: decimal digits only.
func index(seg string) (int, bool) {
	if seg == "" || len(seg) > 9 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(seg); i++ {
		if seg[i] < '0' || seg[i] > '9' {
			return 0, false
		}
		n = n*10 + int(seg[i]-'0')
	}
	return n, true
}

// indexes returns the distinct indexes n of names "<prefix>n.…", in numeric order.
func (col collections) indexes(prefix string) []string {
	set := col[prefix]
	out := make([]int, 0, len(set))
	for n := range set {
		out = append(out, n)
	}
	sort.Ints(out)
	s := make([]string, len(out))
	for i, n := range out {
		s[i] = strconv.Itoa(n)
	}
	return s
}
