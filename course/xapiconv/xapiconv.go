// Package xapiconv turns the SCORM run-time data of one SCO load into xAPI statements shaped
// by ADL's xAPI SCORM Profile (https://w3id.org/xapi/scorm): initialized, resumed, responded
// (interactions), completed / passed / failed of objectives, scored, completed, passed, failed,
// suspended and terminated, with the SCO as
// object, the course and the attempt as grouping activities and the profile as category.
//
// Statement ids are UUIDv5 of the xAPI registration, the SCO's IRI, the player's attempt
// number and the event (with the values that make it distinct), so converting the same data
// twice, in real time or in a historical job, names the same statements: a writer that skips
// ids already stored is idempotent.
package xapiconv

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/lectern-lms/lectern/course/runtime"
)

// The profile's vocabulary.
const (
	// ProfileCategory is the contextActivities.category every profile statement carries.
	ProfileCategory = "https://w3id.org/xapi/scorm"

	VerbInitialized = "http://adlnet.gov/expapi/verbs/initialized"
	VerbResumed     = "http://adlnet.gov/expapi/verbs/resumed"
	VerbResponded   = "http://adlnet.gov/expapi/verbs/responded"
	VerbScored      = "http://adlnet.gov/expapi/verbs/scored"
	VerbCompleted   = "http://adlnet.gov/expapi/verbs/completed"
	VerbPassed      = "http://adlnet.gov/expapi/verbs/passed"
	VerbFailed      = "http://adlnet.gov/expapi/verbs/failed"
	VerbSuspended   = "http://adlnet.gov/expapi/verbs/suspended"
	VerbTerminated  = "http://adlnet.gov/expapi/verbs/terminated"

	TypeCourse      = "http://adlnet.gov/expapi/activities/course"
	TypeLesson      = "http://adlnet.gov/expapi/activities/lesson"
	TypeAttempt     = "http://adlnet.gov/expapi/activities/attempt"
	TypeInteraction = "http://adlnet.gov/expapi/activities/cmi.interaction"
	TypeObjective   = "http://adlnet.gov/expapi/activities/objective"
)

// namespace is the UUIDv5 namespace of converted statement ids; it never changes, or a rerun
// would duplicate every statement converted before.
var namespace = uuid.NewSHA1(uuid.NameSpaceURL, []byte("urn:lectern:xapiconv"))

// Input is one SCO load's run-time data and what the statements say about it.
type Input struct {
	Dialect runtime.Dialect
	Values  runtime.Values
	// Attempt is the player's attempt number of the load (runtime.Record.Attempt).
	Attempt int64
	// HomePage and LearnerID make the actor's account; LearnerName its name (optional).
	HomePage, LearnerID, LearnerName string
	// Registration is the registration's xAPI registration id (context.registration).
	Registration string
	// CourseIRI and CourseTitle name the course activity; SCOID is the SCO's identifier in the
	// package and SCOTitle its title.
	CourseIRI, CourseTitle, SCOID, SCOTitle string
	// Resumed says the load continued a suspended one; Terminated that the content ended it
	// (Terminate / LMSFinish).
	Resumed, Terminated bool
	// Timestamp is when the events happened (the commit's time).
	Timestamp time.Time
}

// Statement is one converted statement, ready to marshal.
type Statement map[string]any

// ID is the statement's id.
func (s Statement) ID() string { id, _ := s["id"].(string); return id }

// SCOIRI is a SCO's activity IRI under its course (the profile's <courseIRI>/<sco path>).
func SCOIRI(courseIRI, scoID string) string {
	return strings.TrimRight(courseIRI, "/") + "/" + url.PathEscape(scoID)
}

// Convert returns the statements of the load in the order the events happen. A load with
// nothing committed yet still has its initialized statement.
func Convert(in Input) []Statement {
	c := converter{in: in, sco: SCOIRI(in.CourseIRI, in.SCOID)}
	v := in.Values
	s12 := in.Dialect == runtime.SCORM12
	var out []Statement
	out = append(out, c.statement("initialized", VerbInitialized, "initialized", c.scoObject(), nil, nil))
	if in.Resumed {
		out = append(out, c.statement("resumed", VerbResumed, "resumed", c.scoObject(), nil, nil))
	}
	out = append(out, c.interactions()...)
	out = append(out, c.objectives()...)
	score := c.score()
	if score != nil {
		key := "scored/" + v[c.el("cmi.score.scaled", "")] + "/" + v[c.el("cmi.score.raw", "cmi.core.score.raw")]
		out = append(out, c.statement(key, VerbScored, "scored", c.scoObject(), map[string]any{"score": score}, nil))
	}
	var completion, success string
	if s12 {
		switch st := v["cmi.core.lesson_status"]; st {
		case "completed":
			completion = st
		case "passed", "failed":
			success = st
		}
	} else {
		completion, success = v["cmi.completion_status"], v["cmi.success_status"]
	}
	if completion == "completed" {
		out = append(out, c.statement("completed", VerbCompleted, "completed", c.scoObject(), map[string]any{"completion": true}, nil))
	}
	if success == "passed" || success == "failed" {
		res := map[string]any{"success": success == "passed"}
		if score != nil {
			res["score"] = score
		}
		verb := VerbPassed
		if success == "failed" {
			verb = VerbFailed
		}
		out = append(out, c.statement(success, verb, success, c.scoObject(), res, nil))
	}
	if in.Terminated {
		if v[c.el("cmi.exit", "cmi.core.exit")] == "suspend" {
			out = append(out, c.statement("suspended", VerbSuspended, "suspended", c.scoObject(), nil, nil))
		}
		var res map[string]any
		if d := duration(in.Dialect, v[c.el("cmi.session_time", "cmi.core.session_time")]); d != "" {
			res = map[string]any{"duration": d}
		}
		out = append(out, c.statement("terminated", VerbTerminated, "terminated", c.scoObject(), res, nil))
	}
	return out
}

type converter struct {
	in  Input
	sco string
}

// el picks an element's name in the load's dialect ("" when the dialect has none).
func (c converter) el(name2004, name12 string) string {
	if c.in.Dialect == runtime.SCORM12 {
		return name12
	}
	return name2004
}

// id is the statement id of an event of the load.
func (c converter) id(event string) string {
	name := c.in.Registration + "\n" + c.sco + "\n" + strconv.FormatInt(c.in.Attempt, 10) + "\n" + event
	return uuid.NewSHA1(namespace, []byte(name)).String()
}

func activity(id, typ, name string) map[string]any {
	def := map[string]any{"type": typ}
	if name != "" {
		def["name"] = map[string]string{"en-US": name}
	}
	return map[string]any{"objectType": "Activity", "id": id, "definition": def}
}

func (c converter) scoObject() map[string]any {
	return activity(c.sco, TypeLesson, orElse(c.in.SCOTitle, c.in.SCOID))
}

func orElse(s, d string) string {
	if s != "" {
		return s
	}
	return d
}

// attemptIRI is the attempt activity of the load (the profile's <scoIRI>?attemptId=<id>).
func (c converter) attemptIRI() string {
	name := c.in.Registration + "\n" + c.sco + "\n" + strconv.FormatInt(c.in.Attempt, 10)
	return c.sco + "?attemptId=" + uuid.NewSHA1(namespace, []byte(name)).String()
}

func (c converter) statement(event, verb, display string, object, result map[string]any, parent []any) Statement {
	actor := map[string]any{"objectType": "Agent", "account": map[string]string{"homePage": c.in.HomePage, "name": c.in.LearnerID}}
	if c.in.LearnerName != "" {
		actor["name"] = c.in.LearnerName
	}
	activities := map[string]any{
		"grouping": []any{
			activity(c.in.CourseIRI, TypeCourse, c.in.CourseTitle),
			activity(c.attemptIRI(), TypeAttempt, "Attempt of "+orElse(c.in.SCOTitle, c.in.SCOID)),
		},
		"category": []any{map[string]any{"objectType": "Activity", "id": ProfileCategory}},
	}
	if parent != nil {
		activities["parent"] = parent
	}
	ctx := map[string]any{"contextActivities": activities}
	if c.in.Registration != "" {
		ctx["registration"] = c.in.Registration
	}
	st := Statement{
		"id":        c.id(event),
		"actor":     actor,
		"verb":      map[string]any{"id": verb, "display": map[string]string{"en-US": display}},
		"object":    object,
		"context":   ctx,
		"timestamp": c.in.Timestamp.UTC().Format("2006-01-02T15:04:05.000Z"),
	}
	if result != nil {
		st["result"] = result
	}
	return st
}

// score is the load's result.score, nil without a raw or scaled score. SCORM 1.2 has no
// scaled score: it is raw/max (max 100 when not given), the SCORM 1.2 convention.
func (c converter) score() map[string]any {
	return c.scoreAt(c.el("cmi.score.", "cmi.core.score."))
}

// scoreAt is score of the elements under prefix (a SCO's or an objective's score).
func (c converter) scoreAt(prefix string) map[string]any {
	v := c.in.Values
	num := func(name string) (float64, bool) {
		if name == "" || v[name] == "" {
			return 0, false
		}
		f, err := strconv.ParseFloat(v[name], 64)
		return f, err == nil
	}
	raw, hasRaw := num(prefix + "raw")
	scaled, hasScaled := num(c.el(prefix+"scaled", ""))
	min, hasMin := num(prefix + "min")
	max, hasMax := num(prefix + "max")
	if !hasRaw && !hasScaled {
		return nil
	}
	out := map[string]any{}
	if c.in.Dialect == runtime.SCORM12 && hasRaw {
		top := 100.0
		if hasMax && max > 0 {
			top = max
		}
		if s := raw / top; s >= -1 && s <= 1 {
			scaled, hasScaled = s, true
		}
	}
	if hasScaled {
		out["scaled"] = scaled
	}
	if hasRaw {
		out["raw"] = raw
		// xAPI wants min ≤ raw ≤ max; bounds that contradict the raw score are left out.
		if hasMin && min <= raw {
			out["min"] = min
		}
		if hasMax && max >= raw && (!hasMin || min <= max) {
			out["max"] = max
		}
	}
	return out
}

var interactionIndex = regexp.MustCompile(`^cmi\.interactions\.(\d+)\.id$`)

// interactions are the responded statements of the load's interactions that have an id and a
// response. The event key holds the response and result, so a changed answer (SCORM 2004 may
// rewrite an interaction) is a new statement, and an unchanged one is the same.
func (c converter) interactions() []Statement {
	v := c.in.Values
	idx := indexes(v, interactionIndex)
	respName := c.el("learner_response", "student_response")
	var out []Statement
	for _, n := range idx {
		p := fmt.Sprintf("cmi.interactions.%d.", n)
		id, resp := v[p+"id"], v[p+respName]
		if id == "" || resp == "" {
			continue
		}
		def := map[string]any{"type": TypeInteraction, "interactionType": orElse(v[p+"type"], "other")}
		if d := v[p+"description"]; d != "" {
			def["description"] = map[string]string{"en-US": d}
		}
		var patterns []string
		for i := 0; v[fmt.Sprintf("%scorrect_responses.%d.pattern", p, i)] != ""; i++ {
			patterns = append(patterns, v[fmt.Sprintf("%scorrect_responses.%d.pattern", p, i)])
		}
		if len(patterns) > 0 {
			def["correctResponsesPattern"] = patterns
		}
		obj := map[string]any{"objectType": "Activity", "id": c.sco + "/interactions/" + url.PathEscape(id), "definition": def}
		res := map[string]any{"response": resp}
		switch v[p+"result"] {
		case "correct":
			res["success"] = true
		case "incorrect", "wrong":
			res["success"] = false
		}
		if d := duration(c.in.Dialect, v[p+"latency"]); d != "" {
			res["duration"] = d
		}
		parent := []any{map[string]any{"objectType": "Activity", "id": c.sco}}
		key := "responded/" + strconv.Itoa(n) + "/" + id + "/" + resp + "/" + v[p+"result"]
		out = append(out, c.statement(key, VerbResponded, "responded", obj, res, parent))
	}
	return out
}

var objectiveIndex = regexp.MustCompile(`^cmi\.objectives\.(\d+)\.id$`)

// indexes are the n of the elements name matches, in order.
func indexes(v runtime.Values, name *regexp.Regexp) []int {
	var idx []int
	for k := range v {
		if m := name.FindStringSubmatch(k); m != nil {
			if n, err := strconv.Atoi(m[1]); err == nil {
				idx = append(idx, n)
			}
		}
	}
	slices.Sort(idx)
	return idx
}

// objectives are the completed, passed and failed statements of the SCO's objectives (object
// <SCO IRI>/objectives/<id>, the profile's local objective, parent the SCO), with the
// objective's score.
func (c converter) objectives() []Statement {
	v := c.in.Values
	var out []Statement
	for _, n := range indexes(v, objectiveIndex) {
		p := fmt.Sprintf("cmi.objectives.%d.", n)
		id := v[p+"id"]
		if id == "" {
			continue
		}
		var completion, success string
		if c.in.Dialect == runtime.SCORM12 {
			switch st := v[p+"status"]; st {
			case "completed":
				completion = st
			case "passed", "failed":
				success = st
			}
		} else {
			completion, success = v[p+"completion_status"], v[p+"success_status"]
		}
		def := map[string]any{"type": TypeObjective}
		if d := v[p+"description"]; d != "" {
			def["description"] = map[string]string{"en-US": d}
		}
		obj := map[string]any{"objectType": "Activity", "id": c.sco + "/objectives/" + url.PathEscape(id), "definition": def}
		parent := []any{map[string]any{"objectType": "Activity", "id": c.sco}}
		score := c.scoreAt(p + "score.")
		if completion == "completed" {
			out = append(out, c.statement("objective/"+id+"/completed", VerbCompleted, "completed", obj, map[string]any{"completion": true}, parent))
		}
		if success == "passed" || success == "failed" {
			res := map[string]any{"success": success == "passed"}
			if score != nil {
				res["score"] = score
			}
			verb := VerbPassed
			if success == "failed" {
				verb = VerbFailed
			}
			out = append(out, c.statement("objective/"+id+"/"+success, verb, success, obj, res, parent))
		}
	}
	return out
}

var timespan12 = regexp.MustCompile(`^(\d{2,4}):(\d{2}):(\d{2})(\.\d{1,2})?$`)

// duration is a session time as an ISO 8601 duration: SCORM 2004 already writes one; SCORM
// 1.2's HHHH:MM:SS.SS is rewritten. "" when there is none or it does not parse.
func duration(d runtime.Dialect, v string) string {
	if v == "" {
		return ""
	}
	if d != runtime.SCORM12 {
		return v
	}
	m := timespan12.FindStringSubmatch(v)
	if m == nil {
		return ""
	}
	h, _ := strconv.Atoi(m[1])
	mi, _ := strconv.Atoi(m[2])
	s, _ := strconv.Atoi(m[3])
	return fmt.Sprintf("PT%dH%dM%d%sS", h, mi, s, m[4])
}
