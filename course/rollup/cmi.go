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
	sc := scanCMI(cmi, detail)
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

	if sc.preferences {
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
	for _, n := range sorted(sc.objectives) {
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
	for _, n := range sorted(sc.learnerComments) {
		p := "cmi.comments_from_learner." + n + "."
		st.LearnerComments = append(st.LearnerComments, registration.Comment{Value: cmi[p+"comment"], Location: cmi[p+"location"], DateTime: cmi[p+"timestamp"]})
	}
	for _, n := range sorted(sc.lmsComments) {
		p := "cmi.comments_from_lms." + n + "."
		st.LMSComments = append(st.LMSComments, registration.Comment{Value: cmi[p+"comment"], Location: cmi[p+"location"], DateTime: cmi[p+"timestamp"]})
	}
	st.Interactions = sc.interactions.list()
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

// cmiScan is what one pass over a data model's names finds: the indexes of the collections
// whose elements are looked up by name, whether learner preferences are set, and (for detail)
// the interactions themselves. An index is any segment of decimal digits followed by a dot,
// as "cmi.objectives.<n>.…" spells it; the elements of an index spelt otherwise than
// strconv.Itoa would ("007") are not the ones "cmi.objectives.7.…" looks up, though the index
// counts. Reading the interactions in the same pass, instead of looking each of their elements
// up by a name built for it, keeps a data model of 10,000 interactions cheap to read.
type cmiScan struct {
	preferences                              bool
	objectives, learnerComments, lmsComments map[int]struct{}
	interactions                             interactionSet
}

func scanCMI(cmi map[string]string, detail bool) *cmiScan {
	sc := &cmiScan{}
	for k, v := range cmi {
		if !strings.HasPrefix(k, "cmi.") {
			continue
		}
		switch rest := k[len("cmi."):]; {
		case strings.HasPrefix(rest, "interactions."):
			if detail {
				sc.interactions.add(rest[len("interactions."):], v)
			}
		case strings.HasPrefix(rest, "objectives."):
			addIndex(&sc.objectives, rest[len("objectives."):])
		case strings.HasPrefix(rest, "comments_from_learner."):
			if detail {
				addIndex(&sc.learnerComments, rest[len("comments_from_learner."):])
			}
		case strings.HasPrefix(rest, "comments_from_lms."):
			if detail {
				addIndex(&sc.lmsComments, rest[len("comments_from_lms."):])
			}
		case strings.HasPrefix(rest, "learner_preference.") || strings.HasPrefix(rest, "student_preference."):
			sc.preferences = true
		}
	}
	return sc
}

// leadingIndex reads the index at the start of rest (what follows a collection's prefix):
// n, the rest after its dot, and whether n is spelt as strconv.Itoa spells it.
func leadingIndex(rest string) (n int, after string, canonical, ok bool) {
	dot := strings.IndexByte(rest, '.')
	if dot < 0 {
		return 0, "", false, false
	}
	seg := rest[:dot]
	if n, ok = index(seg); !ok {
		return 0, "", false, false
	}
	return n, rest[dot+1:], seg == "0" || seg[0] != '0', true
}

func addIndex(set *map[int]struct{}, rest string) {
	if n, _, _, ok := leadingIndex(rest); ok {
		if *set == nil {
			*set = map[int]struct{}{}
		}
		(*set)[n] = struct{}{}
	}
}

// sorted returns the indexes of set in numeric order, spelt as element names spell them.
func sorted(set map[int]struct{}) []string {
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

// InteractionReader reads the interactions of a data model from its elements one at a time,
// in any order, as FromCMI reads them from the whole: a reader of a stored data model can
// take them as it meets them instead of first putting 100,000 elements in a map. The zero
// value is ready.
type InteractionReader struct{ set interactionSet }

// Add takes one element; false when name is not an element of cmi.interactions (the caller
// keeps it for FromCMI, which then reads the data model but for its interactions).
func (r *InteractionReader) Add(name, value string) bool {
	rest, ok := strings.CutPrefix(name, "cmi.interactions.")
	if ok {
		r.set.add(rest, value)
	}
	return ok
}

// Interactions returns the interactions with an id, by index.
func (r *InteractionReader) Interactions() []Interaction { return r.set.list() }

// interactionSet gathers the interactions of a data model from their elements, met in any
// order: at = position in all by index.
type interactionSet struct {
	// at holds the positions of indexes below len(small) as small[n]-1 (0: none yet), the
	// data model's indexes (0-9999) without hashing; others in at.
	small []int32
	at    map[int]int
	all   []*interactionParts
	// free is where the next parts go: taken in chunks, so that 10,000 interactions are
	// neither 10,000 allocations nor a slice of large structs copied as it grows.
	free []interactionParts
}

// interactionParts is one interaction as its elements are met. The has flags tell an element
// set blank from one absent, for the 1.2/2004 name pairs (timestamp/time,
// learner_response/student_response), where the 2004 one wins when present.
type interactionParts struct {
	n                            int
	in                           Interaction
	hasTimestamp, hasLearnerResp bool
	time, studentResponse        string
	objectives, correctResponses []subElement
}

// subElement is one entry of an interaction's objectives or correct_responses: its index,
// and its value (id, pattern) when the element is spelt with the canonical index.
type subElement struct {
	n     int
	value string
	set   bool
}

// maxSmallIndex bounds the indexes interactionSet.small holds: the data model's.
const maxSmallIndex = 10000

// add takes one element "<n>.<name>" of cmi.interactions.
func (s *interactionSet) add(rest, v string) {
	n, name, canonical, ok := leadingIndex(rest)
	if !ok {
		return
	}
	if n < maxSmallIndex && n >= len(s.small) {
		s.small = append(s.small, make([]int32, min(max(n+1, 2*len(s.small)), maxSmallIndex)-len(s.small))...)
	}
	var i int
	seen := false
	if n < len(s.small) {
		i, seen = int(s.small[n])-1, s.small[n] > 0
	} else {
		i, seen = s.at[n]
	}
	if !seen {
		if len(s.free) == 0 {
			s.free = make([]interactionParts, min(max(2*len(s.all), 16), 1024))
		}
		i = len(s.all)
		if n < len(s.small) {
			s.small[n] = int32(i + 1)
		} else {
			if s.at == nil {
				s.at = map[int]int{}
			}
			s.at[n] = i
		}
		s.free[0].n = n
		s.all = append(s.all, &s.free[0])
		s.free = s.free[1:]
	}
	if !canonical {
		return
	}
	p := s.all[i]
	switch name {
	case "id":
		p.in.ID = v
	case "type":
		p.in.Type = v
	case "timestamp":
		p.in.Timestamp, p.hasTimestamp = v, true
	case "time":
		p.time = v
	case "weighting":
		p.in.Weighting = v
	case "learner_response":
		p.in.LearnerResponse, p.hasLearnerResp = v, true
	case "student_response":
		p.studentResponse = v
	case "result":
		p.in.Result = v
	case "latency":
		p.in.Latency = v
	case "description":
		p.in.Description = v
	default:
		if sub, ok := strings.CutPrefix(name, "objectives."); ok {
			p.objectives = addSub(p.objectives, sub, "id", v)
		} else if sub, ok := strings.CutPrefix(name, "correct_responses."); ok {
			p.correctResponses = addSub(p.correctResponses, sub, "pattern", v)
		}
	}
}

// addSub notes the entry "<m>.<…>" of an interaction's sub-collection, with its value when
// the element is "<m>.<field>".
func addSub(list []subElement, rest, field, v string) []subElement {
	m, name, canonical, ok := leadingIndex(rest)
	if !ok {
		return list
	}
	e := subElement{n: m}
	if canonical && name == field {
		e.value, e.set = v, true
	}
	return append(list, e)
}

// list returns the interactions with an id, by index.
func (s *interactionSet) list() []Interaction {
	sort.Slice(s.all, func(i, j int) bool { return s.all[i].n < s.all[j].n })
	out := make([]Interaction, 0, len(s.all))
	// The values of every sub-collection are slices of one array.
	var strs []string
	for _, p := range s.all {
		if p.in.ID == "" {
			continue
		}
		in := p.in
		if !p.hasTimestamp {
			in.Timestamp = p.time
		}
		if !p.hasLearnerResp {
			in.LearnerResponse = p.studentResponse
		}
		in.Objectives, strs = subValues(p.objectives, strs)
		in.CorrectResponses, strs = subValues(p.correctResponses, strs)
		out = append(out, in)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// subValues lists a sub-collection's values by index, one per index ("" when its element
// is absent), nil when it has none, in the free space of strs (returned with the rest).
func subValues(list []subElement, strs []string) (values, rest []string) {
	if len(list) == 0 {
		return nil, strs
	}
	if len(list) > 1 {
		sort.SliceStable(list, func(i, j int) bool { return list[i].n < list[j].n })
	}
	if cap(strs)-len(strs) < len(list) {
		strs = make([]string, 0, max(1024, len(list)))
	}
	start := len(strs)
	for i := 0; i < len(list); {
		j, v := i, ""
		for ; j < len(list) && list[j].n == list[i].n; j++ {
			if list[j].set {
				v = list[j].value
			}
		}
		strs = append(strs, v)
		i = j
	}
	return strs[start:len(strs):len(strs)], strs
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
