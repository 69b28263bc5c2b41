package rollup

import (
	"fmt"
	"math/rand"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/lectern-lms/lectern/course/registration"
)

// TestFromCMISameAsLookups checks the one-pass reading of a data model against the way it was
// read before (every collection's indexes gathered, then each element looked up by a name
// built for it), on random data models with odd indexes: leading zeros, gaps, elements
// without their collection's id, sub-collections, both dialects' names.
func TestFromCMISameAsLookups(t *testing.T) {
	rnd := rand.New(rand.NewSource(1))
	idx := func() string {
		return []string{"0", "1", "2", "3", "10", "01", "007", "7", "x", "", "1234567890", "123456", "9999"}[rnd.Intn(13)]
	}
	fields := []string{"id", "type", "timestamp", "time", "weighting", "learner_response", "student_response", "result",
		"latency", "description", "objectives.%s.id", "objectives.%s.x", "objectives.%s", "correct_responses.%s.pattern",
		"correct_responses.%s.id", "other"}
	tops := []string{"cmi.core.lesson_status", "cmi.objectives.%s.id", "cmi.objectives.%s.status", "cmi.objectives.%s.score.raw",
		"cmi.comments_from_learner.%s.comment", "cmi.comments_from_lms.%s.location", "cmi.comments", "cmi.student_preference.audio",
		"cmi.learner_preference.language", "cmi.score.raw", "cmi.interactions.%s", "cmi.interactions._count", "cmi.exit"}
	withInteractions := 0
	for i := 0; i < 3000; i++ {
		cmi := map[string]string{}
		for j := rnd.Intn(40); j > 0; j-- {
			v := []string{"", "a", "1", "0.5", "x y"}[rnd.Intn(5)]
			if rnd.Intn(3) > 0 {
				f := fields[rnd.Intn(len(fields))]
				if strings.Contains(f, "%s") {
					f = fmt.Sprintf(f, idx())
				}
				cmi["cmi.interactions."+idx()+"."+f] = v
				continue
			}
			f := tops[rnd.Intn(len(tops))]
			if strings.Contains(f, "%s") {
				f = fmt.Sprintf(f, idx())
			}
			cmi[f] = v
		}
		for _, detail := range []bool{false, true} {
			got, gerr := fromCMI(cmi, detail)
			withInteractions += len(got.Interactions)
			want, werr := referenceFromCMI(cmi, detail)
			if !reflect.DeepEqual(got, want) || fmt.Sprint(gerr) != fmt.Sprint(werr) {
				t.Fatalf("detail %v, %v:\n got %+v, %v\nwant %+v, %v", detail, cmi, got, gerr, want, werr)
			}
			if !detail {
				continue
			}
			// The same with the interactions read apart.
			var r InteractionReader
			rest := map[string]string{}
			for k, v := range cmi {
				if !r.Add(k, v) {
					rest[k] = v
				}
			}
			got, gerr = FromCMI(rest)
			got.Interactions = r.Interactions()
			if !reflect.DeepEqual(got, want) || fmt.Sprint(gerr) != fmt.Sprint(werr) {
				t.Fatalf("read apart, %v:\n got %+v, %v\nwant %+v, %v", cmi, got, gerr, want, werr)
			}
		}
	}
	if withInteractions < 1000 {
		t.Fatalf("only %d interactions read: the data models test too little", withInteractions)
	}
}

func referenceFromCMI(cmi map[string]string, detail bool) (*ActivityState, error) {
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
	col := referenceCollectionsOf(cmi, detail)
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

	if referenceHasPrefix(cmi, "cmi.learner_preference.") || referenceHasPrefix(cmi, "cmi.student_preference.") {
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

func referenceHasPrefix(m map[string]string, prefix string) bool {
	for k := range m {
		if strings.HasPrefix(k, prefix) {
			return true
		}
	}
	return false
}

type referenceCollections map[string]map[int]struct{}

func referenceCollectionsOf(cmi map[string]string, detail bool) referenceCollections {
	col := referenceCollections{}
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

func (col referenceCollections) indexes(prefix string) []string {
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
