// Package runtime is the server side of the SCORM run-time environment: the CMI data model of
// SCORM 1.2 and SCORM 2004 with its types and vocabularies, the validation of what the
// player's commits carry, and the durable per-activity runtime record of a registration
// instance. It imports neither HTTP nor database code; records live behind the record port.
package runtime

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/lectern-lms/lectern/course"
)

// Dialect is the data model a commit is written in.
type Dialect int

// The two CMI data models. SCORM 1.1 uses the 1.2 one.
const (
	SCORM12 Dialect = iota + 1
	SCORM2004
)

// DialectOf returns the data model of a learning standard; ok is false for standards without
// a CMI runtime (xAPI, cmi5, AICC).
func DialectOf(std course.Standard) (Dialect, bool) {
	switch std {
	case course.SCORM11, course.SCORM12:
		return SCORM12, true
	case course.SCORM2004v2, course.SCORM2004v3, course.SCORM2004v4:
		return SCORM2004, true
	}
	return 0, false
}

// SCORM error codes the commit endpoint answers with, by dialect. SCORM 1.2 has one code for
// every bad value (405); SCORM 2004 tells a type mismatch (406) from a value out of range (407).
const (
	// CodeGeneral is the general/argument error both dialects share (201).
	CodeGeneral = 201
	// CodeUndefined is an element the data model does not define (1.2: not implemented; 2004: undefined).
	CodeUndefined = 401
	// CodeType12 is SCORM 1.2's incorrect data type.
	CodeType12 = 405
	// CodeType2004 is SCORM 2004's data model element type mismatch.
	CodeType2004 = 406
	// CodeRange2004 is SCORM 2004's data model element value out of range.
	CodeRange2004 = 407
)

// ErrInvalid is the sentinel every validation error wraps.
var ErrInvalid = errors.New("invalid CMI data")

// Error is a validation failure with the SCORM error code the content gets.
type Error struct {
	Code    int
	Element string
	Message string
}

func (e *Error) Error() string {
	if e.Element == "" {
		return e.Message
	}
	return e.Element + ": " + e.Message
}

// Unwrap makes errors.Is(err, ErrInvalid) true.
func (e *Error) Unwrap() error { return ErrInvalid }

// Values is CMI data in flattened form: element name ("cmi.core.lesson_status",
// "cmi.interactions.0.id") to value, as the SCORM API's GetValue returns it.
type Values map[string]string

// Commit is one validated commit of the player.
type Commit struct {
	// Sequence is the API's commit counter (commitSequence), 1 for the first commit of a
	// SCO load; 0 when the body carried none.
	Sequence int64
	// Values are the writable elements of the commit, validated. A caller that changes them
	// replaces the map (as WithoutResults does): ParseCommit keeps their order beside it.
	Values Values
	// Reset is the PlayerResetRunTimeData mode the commit's load was started under (the
	// caller sets it; "" is the standard's): Store.Commit drops the earlier attempt's data
	// with the first commit of a load that started afresh.
	Reset string
	// Finish12 marks the terminating commit (LMSFinish) of a SCORM 1.2 SCO: a SCO that set no
	// lesson_status by then is completed (SCORM 1.2 RTE, cmi.core.lesson_status).
	Finish12 bool
	// NavRequest is the SCO's pending adl.nav.request (SCORM 2004): the navigation request
	// the sequencer processes when the SCO terminates. It belongs to that one Terminate, so it
	// is carried here and not stored with the SCO's data; "" when none (_none_) is pending.
	NavRequest string
	// HACP is set on an AICC PutParam: the session time it carries, which Store.Commit turns
	// into cmi.core.total_time (HACPTime).
	HACP *HACPTime
	// SharedData are the SCORM 2004 shared data stores (adl.data) the commit writes. They
	// are not the activity's data: the learner's path stores them where the package's
	// sharedDataGlobalToSystem says (Store.WriteShared), never in Values.
	SharedData []SharedWrite
	// order is ParseCommit's Values in the order of the body, while Values is still the map
	// ordered (inOrder). Values may be replaced, not changed in place.
	order   []namedValue
	ordered Values
}

// HACPTime is the time of one AICC PutParam. An AU's Time is the running time of its
// session, so every PutParam of a session repeats the time before it: the latest replaces
// the session's earlier ones, and the total is the earlier sessions' total plus it.
type HACPTime struct {
	// Session is the player session the AU runs in (SessionClaims.Launch).
	Session string
	// Seconds is the PutParam's [Core] Time.
	Seconds float64
}

// Bounds of PlayerSuspendDataMaxLength: SCORM 1.2's smallest permitted maximum, which
// conformant content never exceeds, and SCORM 2004's, which the player's runtime
// (scorm-again) enforces in both dialects.
const (
	MinSuspendData = 4096
	MaxSuspendData = 64000
)

// Limits are what the configuration allows content to store beyond the data model's types.
type Limits struct {
	// SuspendData is the most characters of cmi.suspend_data (PlayerSuspendDataMaxLength);
	// 0 means MaxSuspendData.
	SuspendData int
}

// Check refuses values that exceed the limits, with the code a too-long value gets in d
// (SCORM 1.2: 405 incorrect data type; SCORM 2004: 407 out of range).
func (l Limits) Check(d Dialect, v Values) error {
	max := l.SuspendData
	if max <= 0 {
		max = MaxSuspendData
	}
	if n := utf8.RuneCountInString(v["cmi.suspend_data"]); n > max {
		code := CodeType12
		if d == SCORM2004 {
			code = CodeRange2004
		}
		return &Error{Code: code, Element: "cmi.suspend_data",
			Message: fmt.Sprintf("value of %d characters is longer than %d (PlayerSuspendDataMaxLength)", n, max)}
	}
	return nil
}

// MaxBody bounds a commit body: SCORM 2004 allows 64,000 characters of suspend data, and
// interactions add up; 4 MiB is far above any real commit.
const MaxBody = 4 << 20

// ParseCommit decodes and validates the body of a commit in the flattened format (element name
// to string value; empty collections as {}), the nested JSON format of the API (objects and
// arrays are flattened with dots), plus the commitSequence number. A bad body or value is an
// *Error carrying the SCORM error code.
func ParseCommit(d Dialect, body []byte) (*Commit, error) {
	gen := func(format string, args ...any) error {
		return &Error{Code: CodeGeneral, Message: fmt.Sprintf(format, args...)}
	}
	if len(body) > MaxBody {
		return nil, gen("commit body is larger than %d bytes", MaxBody)
	}
	if fastParse {
		if c, ok := parseFast(d, body); ok {
			return c, nil
		}
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var raw map[string]any
	if err := dec.Decode(&raw); err != nil {
		return nil, gen("commit body is not a JSON object: %v", err)
	}
	if dec.More() {
		return nil, gen("commit body has data after the JSON object")
	}
	c := &Commit{}
	// One map, sized for the body (an element with its value takes 25 bytes or more), is both
	// the flattened form and, with the read-only elements taken out, the commit's values.
	flat := make(map[string]string, len(body)/25)
	for k, v := range raw {
		if k == "commitSequence" {
			n, ok := v.(json.Number)
			seq, err := strconv.ParseInt(string(n), 10, 64)
			if !ok || err != nil || seq < 1 {
				return nil, gen("commitSequence must be a positive integer")
			}
			c.Sequence = seq
			continue
		}
		if err := flatten(k, v, flat, 0); err != nil {
			return nil, err
		}
	}
	if d == SCORM2004 {
		if nav, ok := flat[NavRequestElement]; ok {
			if _, err := Validate(d, NavRequestElement, nav); err != nil {
				return nil, err
			}
			if nav != "_none_" {
				c.NavRequest = nav
			}
			delete(flat, NavRequestElement)
		}
		shared, err := takeSharedWrites(flat)
		if err != nil {
			return nil, err
		}
		c.SharedData = shared
	}
	for k, v := range flat {
		keep, err := Validate(d, k, v)
		if err != nil {
			return nil, err
		}
		if !keep {
			delete(flat, k)
		}
	}
	c.Values = flat
	return c, nil
}

func flatten(key string, v any, out map[string]string, depth int) error {
	if depth > 8 {
		return &Error{Code: CodeGeneral, Element: key, Message: "nested too deeply"}
	}
	switch t := v.(type) {
	case string:
		out[key] = t
	case json.Number:
		out[key] = string(t)
	case bool:
		out[key] = strconv.FormatBool(t)
	case nil:
		out[key] = ""
	case map[string]any:
		for k, sub := range t {
			if k == "" || strings.Contains(k, ".") {
				return &Error{Code: CodeUndefined, Element: key + "." + k, Message: "is not a data model element"}
			}
			if err := flatten(key+"."+k, sub, out, depth+1); err != nil {
				return err
			}
		}
	case []any:
		for i, sub := range t {
			if err := flatten(key+"."+strconv.Itoa(i), sub, out, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// kind is the data type of one element.
type kind int

const (
	kString kind = iota
	kVocab
	kDecimal
	kReal
	kInteger
	kTimespan12
	kTime12
	kDuration
	kTimestamp
	kReadOnly // echoed back by the API; accepted and not stored
)

type element struct {
	// pattern is the element's name with "n" for each collection index.
	pattern string
	kind    kind
	max     int      // kString: longest value in characters
	vocab   []string // kVocab
	// lo, hi bound kDecimal/kReal/kInteger when set.
	bounded bool
	lo, hi  float64
	// blank allows the empty string.
	blank bool
	// lang: a localized string, whose leading {lang=...} delimiter is not part of the
	// characters max counts (RTE 4.1.1.4).
	lang bool
}

func el(pattern string, k kind) element {
	return element{pattern: pattern, kind: k, blank: true}
}

// byPattern indexes a data model by element pattern.
func byPattern(model []element) map[string]*element {
	m := make(map[string]*element, len(model))
	for i := range model {
		m[model[i].pattern] = &model[i]
	}
	return m
}

// patternOf is name with each collection index replaced by "n", the key of byPattern; false
// when an index is not one the data model allows (0-9999, no leading zeros). One pass over
// the name, so a commit costs the same per element however many it carries.
func patternOf(name string) (string, bool) {
	var b strings.Builder
	b.Grow(len(name))
	for seg := range strings.SplitSeq(name, ".") {
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		if seg == "" || seg[0] < '0' || seg[0] > '9' {
			b.WriteString(seg)
			continue
		}
		if len(seg) > 4 || (len(seg) > 1 && seg[0] == '0') {
			return "", false
		}
		for i := 1; i < len(seg); i++ {
			if seg[i] < '0' || seg[i] > '9' {
				return "", false
			}
		}
		b.WriteByte('n')
	}
	return b.String(), true
}

func str(pattern string, max int) element {
	e := el(pattern, kString)
	e.max = max
	return e
}

// langStr is a localized characterstring of at most max characters besides its language.
func langStr(pattern string, max int) element {
	e := str(pattern, max)
	e.lang = true
	return e
}

// maxResponse is the longest learner_response the RTE's smallest permitted maxima allow: a
// performance response of 250 steps, each a 250-character step name and answer joined by
// "[.]", the steps by "[,]" (RTE 4.2.9.2). A correct response pattern may add
// {order_matters=false} before it (maxPattern).
const (
	maxResponse = 250*(250+len("[.]")+250) + 249*len("[,]")
	maxPattern  = maxResponse + len("{order_matters=false}")
)

func vocab(pattern string, words ...string) element {
	e := el(pattern, kVocab)
	e.vocab = words
	return e
}

func num(pattern string, k kind, lo, hi float64) element {
	e := el(pattern, k)
	e.bounded, e.lo, e.hi = true, lo, hi
	return e
}

var interactionTypes12 = []string{"true-false", "choice", "fill-in", "matching", "performance", "sequencing", "likert", "numeric"}
var interactionTypes2004 = []string{"true-false", "choice", "fill-in", "long-fill-in", "matching", "performance", "sequencing", "likert", "numeric", "other"}

var model12 = []element{
	vocab("cmi.core.lesson_status", "passed", "completed", "failed", "incomplete", "browsed", "not attempted"),
	str("cmi.core.lesson_location", 255),
	vocab("cmi.core.exit", "time-out", "suspend", "logout", ""),
	num("cmi.core.score.raw", kDecimal, 0, 100),
	num("cmi.core.score.min", kDecimal, 0, 100),
	num("cmi.core.score.max", kDecimal, 0, 100),
	el("cmi.core.session_time", kTimespan12),
	el("cmi.core.total_time", kTimespan12),
	str("cmi.suspend_data", MaxSuspendData), // Limits.Check applies PlayerSuspendDataMaxLength
	str("cmi.comments", 4096),
	str("cmi.student_preference.language", 255),
	num("cmi.student_preference.audio", kInteger, -1, 100),
	num("cmi.student_preference.speed", kInteger, -100, 100),
	num("cmi.student_preference.text", kInteger, -1, 1),
	str("cmi.objectives.n.id", 255),
	num("cmi.objectives.n.score.raw", kDecimal, 0, 100),
	num("cmi.objectives.n.score.min", kDecimal, 0, 100),
	num("cmi.objectives.n.score.max", kDecimal, 0, 100),
	vocab("cmi.objectives.n.status", "passed", "completed", "failed", "incomplete", "browsed", "not attempted"),
	str("cmi.interactions.n.id", 255),
	str("cmi.interactions.n.objectives.n.id", 255),
	el("cmi.interactions.n.time", kTime12),
	vocab("cmi.interactions.n.type", interactionTypes12...),
	str("cmi.interactions.n.correct_responses.n.pattern", 255),
	num("cmi.interactions.n.weighting", kDecimal, -1e9, 1e9),
	str("cmi.interactions.n.student_response", 255),
	str("cmi.interactions.n.result", 255), // correct|wrong|unanticipated|neutral or a decimal
	el("cmi.interactions.n.latency", kTimespan12),
	el("cmi.core.student_id", kReadOnly), el("cmi.core.student_name", kReadOnly), el("cmi.core.credit", kReadOnly),
	el("cmi.core.entry", kReadOnly), el("cmi.core.lesson_mode", kReadOnly), el("cmi.launch_data", kReadOnly),
	el("cmi.comments_from_lms", kReadOnly), el("cmi.student_data.mastery_score", kReadOnly),
	el("cmi.student_data.max_time_allowed", kReadOnly), el("cmi.student_data.time_limit_action", kReadOnly),
}

var model2004 = []element{
	vocab("cmi.completion_status", "completed", "incomplete", "not attempted", "unknown"),
	vocab("cmi.success_status", "passed", "failed", "unknown"),
	vocab("cmi.exit", "time-out", "suspend", "logout", "normal", ""),
	str("cmi.location", 1000),
	num("cmi.progress_measure", kReal, 0, 1),
	num("cmi.score.scaled", kReal, -1, 1),
	num("cmi.score.raw", kReal, -1e12, 1e12),
	num("cmi.score.min", kReal, -1e12, 1e12),
	num("cmi.score.max", kReal, -1e12, 1e12),
	el("cmi.session_time", kDuration),
	el("cmi.total_time", kDuration),
	str("cmi.suspend_data", MaxSuspendData),
	str("cmi.learner_preference.language", 250),
	num("cmi.learner_preference.audio_level", kReal, 0, 1e12),
	num("cmi.learner_preference.delivery_speed", kReal, 0, 1e12),
	num("cmi.learner_preference.audio_captioning", kInteger, -1, 1),
	langStr("cmi.comments_from_learner.n.comment", 4000),
	str("cmi.comments_from_learner.n.location", 250),
	el("cmi.comments_from_learner.n.timestamp", kTimestamp),
	str("cmi.objectives.n.id", 4000),
	num("cmi.objectives.n.score.scaled", kReal, -1, 1),
	num("cmi.objectives.n.score.raw", kReal, -1e12, 1e12),
	num("cmi.objectives.n.score.min", kReal, -1e12, 1e12),
	num("cmi.objectives.n.score.max", kReal, -1e12, 1e12),
	vocab("cmi.objectives.n.success_status", "passed", "failed", "unknown"),
	vocab("cmi.objectives.n.completion_status", "completed", "incomplete", "not attempted", "unknown"),
	num("cmi.objectives.n.progress_measure", kReal, 0, 1),
	langStr("cmi.objectives.n.description", 250),
	str("cmi.interactions.n.id", 4000),
	vocab("cmi.interactions.n.type", interactionTypes2004...),
	str("cmi.interactions.n.objectives.n.id", 4000),
	el("cmi.interactions.n.timestamp", kTimestamp),
	str("cmi.interactions.n.correct_responses.n.pattern", maxPattern),
	num("cmi.interactions.n.weighting", kReal, -1e12, 1e12),
	str("cmi.interactions.n.learner_response", maxResponse),
	str("cmi.interactions.n.result", 250), // correct|incorrect|unanticipated|neutral or a real
	el("cmi.interactions.n.latency", kDuration),
	langStr("cmi.interactions.n.description", 250),
	el("cmi.learner_id", kReadOnly), el("cmi.learner_name", kReadOnly), el("cmi.credit", kReadOnly),
	el("cmi.entry", kReadOnly), el("cmi.mode", kReadOnly), el("cmi.launch_data", kReadOnly),
	el("cmi.completion_threshold", kReadOnly), el("cmi.scaled_passing_score", kReadOnly),
	el("cmi.max_time_allowed", kReadOnly), el("cmi.time_limit_action", kReadOnly),
	el("cmi.comments_from_lms.n.comment", kReadOnly), el("cmi.comments_from_lms.n.location", kReadOnly),
	el("cmi.comments_from_lms.n.timestamp", kReadOnly),
}

// The data models by pattern, for Validate.
var (
	index12   = byPattern(model12)
	index2004 = byPattern(model2004)
)

var (
	durationRE  = regexp.MustCompile(`^P(\d+Y)?(\d+M)?(\d+D)?(T(\d+H)?(\d+M)?(\d+(\.\d{1,2})?S)?)?$`)
	timestampRE = regexp.MustCompile(`^\d{4}(-\d{2}(-\d{2}(T\d{2}(:\d{2}(:\d{2}(\.\d{1,2})?)?)?(Z|[+-]\d{2}(:\d{2})?)?)?)?)?$`)
)

// Validate checks one element and value of dialect d. keep is false for the read-only
// elements the SCORM API echoes back in every commit (credit, entry, learner id...): those are
// the LMS's to set and are not stored. An element the data model does not define, or a value
// of the wrong type or range, is an *Error with the dialect's code.
func Validate(d Dialect, name, value string) (keep bool, err error) {
	index, typeCode := index12, CodeType12
	if d == SCORM2004 {
		index, typeCode = index2004, CodeType2004
	}
	bad := func(code int, format string, args ...any) error {
		return &Error{Code: code, Element: name, Message: fmt.Sprintf(format, args...)}
	}
	if !utf8.ValidString(value) {
		return false, bad(typeCode, "value is not valid UTF-8")
	}
	var e *element
	if p, ok := patternOf(name); ok {
		e = index[p]
	}
	if d == SCORM2004 && strings.HasPrefix(name, "adl.") {
		return validateADL(name, value, typeCode)
	}
	if e == nil {
		return false, bad(CodeUndefined, "is not an element of the %s data model", d)
	}
	if e.kind == kReadOnly {
		return false, nil
	}
	if value == "" && e.blank {
		// The API renders unset elements as ""; a blank value is "not set", in every type.
		return true, nil
	}
	if err := checkValue(d, e, name, value); err != nil {
		return false, err
	}
	return true, nil
}

// checkValue checks a value of element e (named name) against its type and range.
func checkValue(d Dialect, e *element, name, value string) error {
	typeCode, rangeCode := CodeType12, CodeType12
	if d == SCORM2004 {
		typeCode, rangeCode = CodeType2004, CodeRange2004
	}
	bad := func(code int, format string, args ...any) error {
		return &Error{Code: code, Element: name, Message: fmt.Sprintf(format, args...)}
	}
	switch e.kind {
	case kString:
		if e.lang {
			if rest, ok := strings.CutPrefix(value, "{lang="); ok {
				if _, text, ok := strings.Cut(rest, "}"); ok {
					value = text
				}
			}
		}
		if len(value) > e.max { // no more bytes than the maximum: no more characters either
			if n := utf8.RuneCountInString(value); n > e.max {
				if d == SCORM2004 {
					// SPM: the LMS keeps at least the smallest permitted maximum; more is not an error
					// in the standard, but we bound storage at it.
					return bad(rangeCode, "value of %d characters is longer than %d", n, e.max)
				}
				return bad(typeCode, "value of %d characters is longer than %d", n, e.max)
			}
		}
	case kVocab:
		for _, w := range e.vocab {
			if value == w {
				return nil
			}
		}
		return bad(typeCode, "%q is not one of %s", value, strings.Join(quoted(e.vocab), ", "))
	case kDecimal, kReal, kInteger:
		valid := isDecimal(value)
		if e.kind == kInteger {
			valid = isInteger(value)
		}
		if !valid {
			return bad(typeCode, "%q is not a number", value)
		}
		f, _ := strconv.ParseFloat(value, 64)
		if e.bounded && (f < e.lo || f > e.hi) {
			return bad(rangeCode, "%s is outside %g..%g", value, e.lo, e.hi)
		}
	case kTimespan12:
		if !isTimespan12(value) {
			return bad(typeCode, "%q is not a CMITimespan (HHHH:MM:SS.SS)", value)
		}
	case kTime12:
		if !isTime12(value) {
			return bad(typeCode, "%q is not a CMITime (HH:MM:SS.SS)", value)
		}
	case kDuration:
		if !durationRE.MatchString(value) || value == "P" || strings.HasSuffix(value, "T") {
			return bad(typeCode, "%q is not an ISO 8601 duration", value)
		}
	case kTimestamp:
		if !timestampRE.MatchString(value) {
			return bad(typeCode, "%q is not an ISO 8601 timestamp", value)
		}
	}
	return nil
}

// NavRequestElement is SCORM 2004's adl.nav.request, the navigation request a SCO leaves
// pending for its Terminate.
const NavRequestElement = "adl.nav.request"

// navRequests are the adl.nav.request values without a target (SCORM 2004 RTE 4.4.1).
var navRequests = []string{"_none_", "continue", "previous", "exit", "exitAll", "abandon", "abandonAll", "suspendAll"}

// navTargetRE is a choice or jump request with its target, {target=ID}choice.
var navTargetRE = regexp.MustCompile(`^\{target=[^{}\s]+\}(choice|jump)$`)

// validateADL checks the adl.* namespace of SCORM 2004: adl.nav.request is writable with the
// RTE book's vocabulary; adl.nav.request_valid.* are read-only (the LMS answers them from the
// sequencer) and are dropped, as is adl.data, which ParseCommit takes out as the commit's
// SharedData before validating the rest.
func validateADL(name, value string, typeCode int) (bool, error) {
	switch {
	case name == NavRequestElement:
		for _, w := range navRequests {
			if value == w {
				return true, nil
			}
		}
		if navTargetRE.MatchString(value) {
			return true, nil
		}
		return false, &Error{Code: typeCode, Element: name,
			Message: fmt.Sprintf("%q is not a navigation request (continue, previous, {target=ID}choice, {target=ID}jump, exit, exitAll, abandon, abandonAll, suspendAll or _none_)", value)}
	}
	return false, nil
}

func quoted(ws []string) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = strconv.Quote(w)
	}
	return out
}

func (d Dialect) String() string {
	if d == SCORM2004 {
		return "SCORM 2004"
	}
	return "SCORM 1.2"
}

// Names returns the element names of v in order (for stable output).
func (v Values) Names() []string {
	out := make([]string, 0, len(v))
	for k := range v {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
