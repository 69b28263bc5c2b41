package xapi

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/lectern-lms/lectern/lrs/xapi/lexical"
	"github.com/lectern-lms/lectern/storage/statements"
)

// Statement is one validated statement. It keeps the client's JSON as a generic tree (numbers
// as json.Number, so their text survives exactly) rather than a struct: xAPI requires the
// statement to be returned as it was received, unknown-to-us details included.
type Statement struct {
	m map[string]any
	v Version
}

// decode parses JSON strictly enough for xAPI: valid UTF-8, exactly one value, numbers kept
// as json.Number and no duplicate object keys (which would make the statement ambiguous),
// all in one pass (parseJSON).
func decode(body []byte) (any, error) {
	if !utf8.Valid(body) {
		return nil, &Error{Msg: "body is not valid UTF-8"}
	}
	return parseJSON(body)
}

// ParseStatements validates a PUT/POST body (one statement object, or for POST an array of
// them) against the rules of version v. isArray reports which form was sent. Statement ids
// are lowercased and contextActivities normalised to arrays, as the LRS returns them.
func ParseStatements(body []byte, v Version) (stmts []*Statement, isArray bool, err error) {
	isArray, err = EachStatement(body, v, func(s *Statement, _ int, _ bool) error {
		stmts = append(stmts, s)
		return nil
	})
	if err != nil {
		return nil, isArray, err
	}
	return stmts, isArray, nil
}

// EachStatement is ParseStatements one statement at a time: f gets each statement (its
// index, and whether the body is an array) as soon as it is parsed and validated, so a
// caller that keeps only what it needs of each never holds the tree of the whole batch (a
// generic tree costs several times its JSON). An error from f stops the walk and is
// returned; so is the first invalid statement or malformed JSON, after f has seen the
// statements before it.
func EachStatement(body []byte, v Version, f func(s *Statement, i int, inArray bool) error) (isArray bool, err error) {
	if !utf8.Valid(body) {
		return false, &Error{Msg: "body is not valid UTF-8"}
	}
	p := &parser{b: body}
	p.ws()
	if p.i >= len(p.b) || p.b[p.i] != '[' {
		x, err := parseJSON(body)
		if err != nil {
			return false, err
		}
		if _, ok := x.(map[string]any); !ok {
			return false, &Error{Path: "statement", Msg: "must be a JSON object or an array of them"}
		}
		c := &validator{v: v}
		s, err := c.parsed(x, "statement", nil)
		if err != nil {
			return false, err
		}
		return false, f(s, 0, false)
	}
	if err := p.enter(); err != nil {
		return true, err
	}
	p.i++ // '['
	c := &validator{v: v}
	seen := map[string]bool{}
	p.ws()
	if p.i < len(p.b) && p.b[p.i] == ']' {
		p.i++
	} else {
		for i := 0; ; i++ {
			p.ws()
			x, err := p.value()
			if err != nil {
				return true, err
			}
			s, err := c.parsed(x, indexPath("statements", i), seen)
			if err != nil {
				return true, err
			}
			if err := f(s, i, true); err != nil {
				return true, err
			}
			p.ws()
			if p.i >= len(p.b) {
				return true, p.fail("unexpected end of input in an array")
			}
			if p.b[p.i] == ']' {
				p.i++
				break
			}
			if p.b[p.i] != ',' {
				return true, p.fail("expected ',' or ']' in an array")
			}
			p.i++
		}
	}
	p.depth--
	p.ws()
	if p.i != len(p.b) {
		return true, &Error{Msg: "malformed JSON: trailing data after the value"}
	}
	return true, nil
}

// parsed validates one parsed statement at path and normalises it; seen holds the ids of
// the batch so far (nil for a single statement).
func (c *validator) parsed(x any, path string, seen map[string]bool) (*Statement, error) {
	m, err := asObject(x, path)
	if err != nil {
		return nil, err
	}
	if err := c.statement(m, path, false); err != nil {
		return nil, err
	}
	s := &Statement{m: m, v: c.v}
	s.normalise()
	if id := s.ID(); id != "" && seen != nil {
		if seen[id] {
			return nil, errf(path+".id", "statement id %s given twice in the batch", id)
		}
		seen[id] = true
	}
	return s, nil
}

// normalise applies the representation changes the LRS is allowed to make: lowercase UUIDs
// (their case is not significant) and single context activities wrapped in arrays (the
// LRS must return arrays).
func (s *Statement) normalise() {
	if id, ok := s.m["id"].(string); ok {
		s.m["id"] = strings.ToLower(id)
	}
	normaliseBody(s.m)
	if obj, _ := s.m["object"].(map[string]any); obj != nil && obj["objectType"] == "SubStatement" {
		normaliseBody(obj)
	}
}

func normaliseBody(m map[string]any) {
	if obj, _ := m["object"].(map[string]any); obj != nil && obj["objectType"] == "StatementRef" {
		if id, ok := obj["id"].(string); ok {
			obj["id"] = strings.ToLower(id)
		}
	}
	ctx, _ := m["context"].(map[string]any)
	if ctx == nil {
		return
	}
	if r, ok := ctx["registration"].(string); ok {
		ctx["registration"] = strings.ToLower(r)
	}
	if st, _ := ctx["statement"].(map[string]any); st != nil {
		if id, ok := st["id"].(string); ok {
			st["id"] = strings.ToLower(id)
		}
	}
	ca, _ := ctx["contextActivities"].(map[string]any)
	for k, v := range ca {
		if _, ok := v.([]any); !ok {
			ca[k] = []any{v}
		}
	}
}

// ID returns the statement id, "" when the client sent none.
func (s *Statement) ID() string {
	id, _ := s.m["id"].(string)
	return id
}

// SetID sets the statement id (lowercased), e.g. from PUT's statementId parameter.
func (s *Statement) SetID(id string) { s.m["id"] = strings.ToLower(id) }

// NewUUID returns a random (version 4) UUID in lowercase canonical form.
func NewUUID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// Complete sets what the LRS owns before storing: the id when absent, timestamp (= stored when
// absent), stored, authority (replacing the client's unless authority is nil, meaning the
// caller trusts the client's) and version when absent ("1.0.0" for 1.0.x requests, "2.0.0"
// for 2.0 requests; a version the client sent is retained, as the suite checks).
func (s *Statement) Complete(authority json.RawMessage, stored time.Time, v Version) {
	if s.ID() == "" {
		s.m["id"] = NewUUID()
	}
	st := lexical.FormatTimestamp(stored)
	s.m["stored"] = st
	if _, ok := s.m["timestamp"]; !ok {
		s.m["timestamp"] = st
	}
	if len(authority) > 0 {
		if a, err := decode(authority); err == nil {
			s.m["authority"] = a
		}
	}
	if _, ok := s.m["version"]; !ok {
		if v.is20() {
			s.m["version"] = "2.0.0"
		} else {
			s.m["version"] = "1.0.0"
		}
	}
}

// marshal encodes without HTML escaping: the stored statement should read as sent.
func marshal(x any) []byte {
	if b, ok := appendTree(nil, x); ok {
		return b
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(x); err != nil {
		return nil
	}
	return bytes.TrimRight(buf.Bytes(), "\n")
}

// JSON returns the statement as stored.
func (s *Statement) JSON() []byte { return marshal(s.m) }

// VoidTarget returns the id this statement voids, "" if it is not a voiding statement.
func (s *Statement) VoidTarget() string {
	verb, _ := s.m["verb"].(map[string]any)
	if verb == nil || verb["id"] != VoidVerb {
		return ""
	}
	obj, _ := s.m["object"].(map[string]any)
	if obj == nil || obj["objectType"] != "StatementRef" {
		return ""
	}
	id, _ := obj["id"].(string)
	return strings.ToLower(id)
}

// RefTarget returns the id (lowercase) the statement's object points at when it is a
// StatementRef (voiding statements included), "" otherwise.
func (s *Statement) RefTarget() string {
	obj, _ := s.m["object"].(map[string]any)
	if obj == nil || obj["objectType"] != "StatementRef" {
		return ""
	}
	id, _ := obj["id"].(string)
	return strings.ToLower(id)
}

// AttachmentRef is one attachment declared by a statement.
type AttachmentRef struct {
	UsageType, ContentType, SHA2, FileURL string
	Length                                int64
	// Signature marks the JWS of a signed statement.
	Signature bool
}

// Attachments returns the statement's declared attachments (the SubStatement's included:
// their content travels in the same multipart request).
func (s *Statement) Attachments() []AttachmentRef {
	var out []AttachmentRef
	add := func(m map[string]any) {
		arr, _ := m["attachments"].([]any)
		for _, e := range arr {
			a, _ := e.(map[string]any)
			if a == nil {
				continue
			}
			r := AttachmentRef{}
			r.UsageType, _ = a["usageType"].(string)
			r.ContentType, _ = a["contentType"].(string)
			r.SHA2, _ = a["sha2"].(string)
			r.SHA2 = strings.ToLower(r.SHA2)
			r.FileURL, _ = a["fileUrl"].(string)
			if n, ok := a["length"].(json.Number); ok {
				r.Length, _ = n.Int64()
			}
			r.Signature = r.UsageType == SignatureUsageType
			out = append(out, r)
		}
	}
	add(s.m)
	if obj, _ := s.m["object"].(map[string]any); obj != nil && obj["objectType"] == "SubStatement" {
		add(obj)
	}
	return out
}

// Fields returns the index fields for storage/statements: everything but Tenant (the
// caller's). Raw is the statement as stored, so call it after Complete.
func (s *Statement) Fields() statements.Statement {
	raw := s.JSON()
	f := statements.Statement{
		ID:     s.ID(),
		Raw:    raw,
		Hash:   hashTree(s.m),
		Voids:  s.VoidTarget(),
		Target: s.RefTarget(),
	}
	if ts, ok := s.m["timestamp"].(string); ok {
		if t, err := lexical.ParseTimestamp(ts); err == nil {
			f.Timestamp = t.UTC()
		}
	}
	if st, ok := s.m["stored"].(string); ok {
		if t, err := lexical.ParseTimestamp(st); err == nil {
			f.Stored = t.UTC()
		}
	}
	if verb, _ := s.m["verb"].(map[string]any); verb != nil {
		f.VerbID, _ = verb["id"].(string)
	}
	agents := newSet()
	related := newSet()
	acts := newSet()
	// actor and an Agent/Group object are "the" agents of the statement
	addActor(agents, s.m["actor"])
	obj, _ := s.m["object"].(map[string]any)
	if obj != nil {
		switch objectType(obj) {
		case "Agent", "Group":
			addActor(agents, obj)
		case "Activity":
			f.Activity, _ = obj["id"].(string)
		}
	}
	related.add(agents.list...)
	addActor(related, s.m["authority"])
	collectRelated(s.m, related, acts)
	if obj != nil && obj["objectType"] == "SubStatement" {
		addActor(related, obj["actor"])
		collectRelated(obj, related, acts)
	}
	f.Agents = agents.list
	f.RelatedAgents = related.list
	f.RelatedActivities = acts.list
	if ctx, _ := s.m["context"].(map[string]any); ctx != nil {
		f.Registration, _ = ctx["registration"].(string)
	}
	f.Result, f.ReportActors = reportFields(s.m)
	for _, a := range s.Attachments() {
		if !slices.Contains(f.AttachmentHashes, a.SHA2) {
			f.AttachmentHashes = append(f.AttachmentHashes, a.SHA2)
		}
	}
	return f
}

// objectType returns an object's objectType, defaulting to Activity.
func objectType(obj map[string]any) string {
	if ot, ok := obj["objectType"].(string); ok {
		return ot
	}
	return "Activity"
}

type set struct {
	seen map[string]bool
	list []string
}

func newSet() *set { return &set{seen: map[string]bool{}} }

func (s *set) add(vals ...string) {
	for _, v := range vals {
		if v != "" && !s.seen[v] {
			s.seen[v] = true
			s.list = append(s.list, v)
		}
	}
}

// addActor adds an Agent's or Group's IFI and its members' IFIs.
func addActor(s *set, x any) {
	m, _ := x.(map[string]any)
	if m == nil {
		return
	}
	if ifi, err := IFI(m); err == nil {
		s.add(ifi)
	}
	members, _ := m["member"].([]any)
	for _, e := range members {
		if mm, _ := e.(map[string]any); mm != nil {
			if ifi, err := IFI(mm); err == nil {
				s.add(ifi)
			}
		}
	}
}

// collectRelated adds the agents and activities of one statement body (object and context).
func collectRelated(m map[string]any, agents, acts *set) {
	if obj, _ := m["object"].(map[string]any); obj != nil {
		switch objectType(obj) {
		case "Agent", "Group":
			addActor(agents, obj)
		case "Activity":
			id, _ := obj["id"].(string)
			acts.add(id)
		}
	}
	ctx, _ := m["context"].(map[string]any)
	if ctx == nil {
		return
	}
	addActor(agents, ctx["instructor"])
	addActor(agents, ctx["team"])
	for _, k := range []string{"contextAgents", "contextGroups"} {
		arr, _ := ctx[k].([]any)
		for _, e := range arr {
			if em, _ := e.(map[string]any); em != nil {
				addActor(agents, em["agent"])
				addActor(agents, em["group"])
			}
		}
	}
	ca, _ := ctx["contextActivities"].(map[string]any)
	for _, k := range []string{"parent", "grouping", "category", "other"} {
		list, _ := ca[k].([]any)
		for _, e := range list {
			if am, _ := e.(map[string]any); am != nil {
				id, _ := am["id"].(string)
				acts.add(id)
			}
		}
	}
}

// Activities returns the activity objects of the statement (object, context activities, and
// the SubStatement's) that carry a definition, by id, for MergeActivity. An activity given
// twice with definitions is merged in statement order.
func (s *Statement) Activities() map[string]json.RawMessage {
	out := map[string]json.RawMessage{}
	add := func(x any) {
		am, _ := x.(map[string]any)
		if am == nil || objectType(am) != "Activity" {
			return
		}
		if _, ok := am["definition"]; !ok {
			return
		}
		id, _ := am["id"].(string)
		if id == "" {
			return
		}
		raw := marshal(am)
		if old, ok := out[id]; ok && !bytes.Equal(old, raw) {
			raw = MergeActivity(old, raw)
		}
		out[id] = raw
	}
	body := func(m map[string]any) {
		add(m["object"])
		ctx, _ := m["context"].(map[string]any)
		ca, _ := ctx["contextActivities"].(map[string]any)
		for _, k := range []string{"parent", "grouping", "category", "other"} {
			list, _ := ca[k].([]any)
			for _, e := range list {
				add(e)
			}
		}
	}
	body(s.m)
	if obj, _ := s.m["object"].(map[string]any); obj != nil && obj["objectType"] == "SubStatement" {
		body(obj)
	}
	return out
}
