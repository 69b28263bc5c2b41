package rollup

import (
	"encoding/json"
	"regexp"
	"strconv"

	"github.com/lectern-lms/lectern/course/registration"
)

// The verbs a cmi5 or xAPI rollup reads (cmi5 §9.3; ADL's verb IRIs).
const (
	VerbCompleted   = "http://adlnet.gov/expapi/verbs/completed"
	VerbPassed      = "http://adlnet.gov/expapi/verbs/passed"
	VerbFailed      = "http://adlnet.gov/expapi/verbs/failed"
	VerbTerminated  = "http://adlnet.gov/expapi/verbs/terminated"
	VerbWaived      = "https://w3id.org/xapi/adl/verbs/waived"
	VerbSatisfied   = "https://w3id.org/xapi/adl/verbs/satisfied"
	VerbAbandoned   = "https://w3id.org/xapi/adl/verbs/abandoned"
	VerbLaunched    = "http://adlnet.gov/expapi/verbs/launched"
	VerbInitialized = "http://adlnet.gov/expapi/verbs/initialized"
)

// CMI5SessionExt is the context extension of a cmi5 session id.
const CMI5SessionExt = "https://w3id.org/xapi/cmi5/context/extensions/sessionid"

// CMI5Category is the context category of cmi5 defined statements.
const CMI5Category = "https://w3id.org/xapi/cmi5/context/categories/cmi5"

// VerbsOf reads statements (full xAPI JSON, oldest first) into the verbs seen per object
// activity id, for Statements. Statements about other objects (agents, statement refs) and
// with other verbs only add their durations. A failed statement counts until a later passed
// one; the score is the latest completed/passed/failed statement's result.score.scaled. The
// seconds are the sum of the terminated statements' durations (one per session, cmi5 §9.3.8),
// or, without any, the longest duration reported.
func VerbsOf(raws []json.RawMessage) map[string]Verbs {
	var f registration.StatementFold
	FoldStatements(&f, raws)
	return VerbsOfFold(&f)
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
