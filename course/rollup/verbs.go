package rollup

import (
	"encoding/json"

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
