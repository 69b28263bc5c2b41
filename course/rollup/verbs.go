package rollup

import (
	"encoding/json"
	"regexp"
	"strconv"
)

// The verbs a cmi5 or xAPI rollup reads (cmi5 §9.3; ADL's verb IRIs).
const (
	VerbCompleted  = "http://adlnet.gov/expapi/verbs/completed"
	VerbPassed     = "http://adlnet.gov/expapi/verbs/passed"
	VerbFailed     = "http://adlnet.gov/expapi/verbs/failed"
	VerbTerminated = "http://adlnet.gov/expapi/verbs/terminated"
	VerbWaived     = "https://w3id.org/xapi/adl/verbs/waived"
)

// VerbsOf reads statements (full xAPI JSON, oldest first) into the verbs seen per object
// activity id, for Statements. Statements about other objects (agents, statement refs) and
// with other verbs only add their durations. A failed statement counts until a later passed
// one; the score is the latest completed/passed/failed statement's result.score.scaled. The
// seconds are the sum of the terminated statements' durations (one per session, cmi5 §9.3.8),
// or, without any, the longest duration reported.
func VerbsOf(raws []json.RawMessage) map[string]Verbs {
	type stmt struct {
		Verb   struct{ ID string } `json:"verb"`
		Object struct {
			ID         string `json:"id"`
			ObjectType string `json:"objectType"`
		} `json:"object"`
		Result *struct {
			Duration string `json:"duration"`
			Score    *struct {
				Scaled *float64 `json:"scaled"`
			} `json:"score"`
		} `json:"result"`
	}
	out := map[string]Verbs{}
	terminated := map[string]float64{}
	longest := map[string]float64{}
	for _, raw := range raws {
		var s stmt
		if json.Unmarshal(raw, &s) != nil || s.Object.ID == "" || (s.Object.ObjectType != "" && s.Object.ObjectType != "Activity") {
			continue
		}
		id := s.Object.ID
		v := out[id]
		var scaled *float64
		var secs float64
		if s.Result != nil {
			secs = DurationOfISO(s.Result.Duration)
			if s.Result.Score != nil {
				scaled = s.Result.Score.Scaled
			}
		}
		switch s.Verb.ID {
		case VerbCompleted:
			v.Completed = true
		case VerbPassed:
			v.Passed, v.Failed = true, false
		case VerbFailed:
			if !v.Passed {
				v.Failed = true
			}
		case VerbWaived:
			v.Waived = true
		case VerbTerminated:
			terminated[id] += secs
		}
		if scaled != nil && (s.Verb.ID == VerbCompleted || s.Verb.ID == VerbPassed || s.Verb.ID == VerbFailed) {
			sc := *scaled
			v.Scaled = &sc
		}
		if secs > longest[id] {
			longest[id] = secs
		}
		out[id] = v
	}
	for id, v := range out {
		if t, ok := terminated[id]; ok {
			v.Seconds = t
		} else {
			v.Seconds = longest[id]
		}
		out[id] = v
	}
	return out
}

var isoDuration = regexp.MustCompile(`^P(?:(\d+(?:\.\d+)?)Y)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)W)?(?:(\d+(?:\.\d+)?)D)?(?:T(?:(\d+(?:\.\d+)?)H)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)S)?)?$`)

// DurationOfISO is an ISO 8601 duration ("PT1H2M3.5S") in seconds; 0 when it does not parse.
// Years and months count as 365 and 30 days.
func DurationOfISO(s string) float64 {
	m := isoDuration.FindStringSubmatch(s)
	if m == nil || s == "P" || s == "PT" {
		return 0
	}
	unit := []float64{365 * 86400, 30 * 86400, 7 * 86400, 86400, 3600, 60, 1}
	var total float64
	for i, u := range unit {
		if m[i+1] != "" {
			f, _ := strconv.ParseFloat(m[i+1], 64)
			total += f * u
		}
	}
	return total
}
