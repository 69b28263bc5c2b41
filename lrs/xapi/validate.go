package xapi

import (
	"encoding/json"
	"strings"

	"github.com/lectern-lms/lectern/lrs/xapi/lexical"
)

// VoidVerb is the verb of a voiding statement.
const VoidVerb = "http://adlnet.gov/expapi/verbs/voided"

// SignatureUsageType marks a signed statement's JWS attachment.
const SignatureUsageType = "http://adlnet.gov/expapi/attachments/signature"

// validator checks one statement against the rules of one version. It works on the generic
// decoding (map[string]any with json.Number) so that unknown properties, wrong JSON types and
// nulls, which a struct decoding would silently accept, can all be refused.
type validator struct {
	v Version
}

// checkKeys rejects properties outside allowed (names are case-sensitive) and null values:
// xAPI has no nullable properties outside extension values.
func checkKeys(m map[string]any, path string, allowed ...string) error {
	for k, val := range m {
		ok := false
		for _, a := range allowed {
			if k == a {
				ok = true
				break
			}
		}
		if !ok {
			return errf(path+"."+k, "unknown property")
		}
		if val == nil {
			return errf(path+"."+k, "must not be null")
		}
	}
	return nil
}

func asObject(x any, path string) (map[string]any, error) {
	m, ok := x.(map[string]any)
	if !ok {
		return nil, errf(path, "must be a JSON object")
	}
	return m, nil
}

func asString(x any, path string) (string, error) {
	s, ok := x.(string)
	if !ok {
		return "", errf(path, "must be a string")
	}
	return s, nil
}

// optString returns m[key] as a string, "" and false when absent.
func optString(m map[string]any, key, path string) (string, bool, error) {
	x, ok := m[key]
	if !ok {
		return "", false, nil
	}
	s, err := asString(x, path+"."+key)
	return s, true, err
}

func reqString(m map[string]any, key, path string) (string, error) {
	s, ok, err := optString(m, key, path)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", errf(path+"."+key, "is required")
	}
	return s, nil
}

func iriProp(m map[string]any, key, path string, required bool) (string, error) {
	s, ok, err := optString(m, key, path)
	if err != nil {
		return "", err
	}
	if !ok {
		if required {
			return "", errf(path+"."+key, "is required")
		}
		return "", nil
	}
	if !lexical.ValidIRI(s) {
		return "", errf(path+"."+key, "must be an IRI")
	}
	return s, nil
}

func uuidProp(m map[string]any, key, path string, required bool) error {
	s, ok, err := optString(m, key, path)
	if err != nil {
		return err
	}
	if !ok {
		if required {
			return errf(path+"."+key, "is required")
		}
		return nil
	}
	if !lexical.ValidUUID(s) {
		return errf(path+"."+key, "must be a UUID")
	}
	return nil
}

func boolProp(m map[string]any, key, path string) error {
	if x, ok := m[key]; ok {
		if _, ok := x.(bool); !ok {
			return errf(path+"."+key, "must be a boolean")
		}
	}
	return nil
}

func numProp(m map[string]any, key, path string) (float64, bool, error) {
	x, ok := m[key]
	if !ok {
		return 0, false, nil
	}
	n, ok := x.(json.Number)
	if !ok {
		return 0, false, errf(path+"."+key, "must be a number")
	}
	f, err := n.Float64()
	if err != nil {
		return 0, false, errf(path+"."+key, "must be a finite number")
	}
	return f, true, nil
}

// languageMap checks a language map: an object of RFC 5646 tags to strings.
func languageMap(x any, path string) error {
	m, err := asObject(x, path)
	if err != nil {
		return err
	}
	for k, val := range m {
		if !lexical.ValidLanguageTag(k) {
			return errf(path+"."+k, "not an RFC 5646 language tag")
		}
		if _, ok := val.(string); !ok {
			return errf(path+"."+k, "must be a string")
		}
	}
	return nil
}

func optLanguageMap(m map[string]any, key, path string) error {
	if x, ok := m[key]; ok {
		return languageMap(x, path+"."+key)
	}
	return nil
}

// extensions checks an extensions map: keys are IRIs, values are any JSON (null included).
func extensions(m map[string]any, key, path string) error {
	x, ok := m[key]
	if !ok {
		return nil
	}
	e, err := asObject(x, path+"."+key)
	if err != nil {
		return err
	}
	for k := range e {
		if !lexical.ValidIRI(k) {
			return errf(path+"."+key+"."+k, "extension key must be an IRI")
		}
	}
	return nil
}

// statement validates a statement (sub false) or a SubStatement's body (sub true).
func (c *validator) statement(m map[string]any, path string, sub bool) error {
	if sub {
		if err := checkKeys(m, path, "objectType", "actor", "verb", "object", "result", "context", "timestamp", "attachments"); err != nil {
			return err
		}
	} else {
		if err := checkKeys(m, path, "id", "actor", "verb", "object", "result", "context", "timestamp", "stored", "authority", "version", "attachments"); err != nil {
			return err
		}
		if err := uuidProp(m, "id", path, false); err != nil {
			return err
		}
	}
	for _, k := range []string{"actor", "verb", "object"} {
		if _, ok := m[k]; !ok {
			return errf(path+"."+k, "is required")
		}
	}
	if err := c.actor(m["actor"], path+".actor", actorAny); err != nil {
		return err
	}
	verbID, err := c.verb(m["verb"], path+".verb")
	if err != nil {
		return err
	}
	objType, err := c.object(m["object"], path+".object", sub)
	if err != nil {
		return err
	}
	if verbID == VoidVerb && objType != "StatementRef" {
		return errf(path+".object", "a voiding statement's object must be a StatementRef")
	}
	if x, ok := m["result"]; ok {
		if err := c.result(x, path+".result"); err != nil {
			return err
		}
	}
	if x, ok := m["context"]; ok {
		if err := c.context(x, path+".context", objType); err != nil {
			return err
		}
	}
	for _, k := range []string{"timestamp", "stored"} {
		if s, ok, err := optString(m, k, path); err != nil {
			return err
		} else if ok {
			if _, err := lexical.ParseTimestamp(s); err != nil {
				return errf(path+"."+k, "%v", err)
			}
		}
	}
	if x, ok := m["authority"]; ok {
		if err := c.authority(x, path+".authority"); err != nil {
			return err
		}
	}
	if s, ok, err := optString(m, "version", path); err != nil {
		return err
	} else if ok && !reVersion10.MatchString(s) && !(c.v.is20() && reVersion20.MatchString(s)) {
		return errf(path+".version", "unsupported version %q", s)
	}
	if x, ok := m["attachments"]; ok {
		if err := c.attachments(x, path+".attachments"); err != nil {
			return err
		}
	}
	return nil
}

// actor contexts: what an Agent/Group position accepts.
type actorKind int

const (
	actorAny      actorKind = iota // actor, instructor, authority: Agent or Group, objectType optional
	actorAgent                     // group members, contextAgents: Agent only
	actorGroup                     // team, contextGroups: Group only
	actorAsObject                  // statement object: objectType required
)

var ifiKeys = []string{"mbox", "mbox_sha1sum", "openid", "account"}

// ifis validates the inverse functional identifiers present in m and returns how many.
func ifis(m map[string]any, path string) (int, error) {
	n := 0
	for _, k := range ifiKeys {
		x, ok := m[k]
		if !ok {
			continue
		}
		n++
		p := path + "." + k
		switch k {
		case "mbox":
			s, err := asString(x, p)
			if err != nil {
				return 0, err
			}
			addr, ok := strings.CutPrefix(s, "mailto:")
			if !ok || !reEmail.MatchString(addr) {
				return 0, errf(p, `must be a "mailto:" IRI`)
			}
		case "mbox_sha1sum":
			s, err := asString(x, p)
			if err != nil {
				return 0, err
			}
			if !reSHA1Hex.MatchString(s) {
				return 0, errf(p, "must be a hex-encoded SHA-1")
			}
		case "openid":
			s, err := asString(x, p)
			if err != nil {
				return 0, err
			}
			if !lexical.ValidIRI(s) {
				return 0, errf(p, "must be a URI")
			}
		case "account":
			a, err := asObject(x, p)
			if err != nil {
				return 0, err
			}
			if err := checkKeys(a, p, "homePage", "name"); err != nil {
				return 0, err
			}
			hp, err := reqString(a, "homePage", p)
			if err != nil {
				return 0, err
			}
			if !validIRL(hp) {
				return 0, errf(p+".homePage", "must be an IRL")
			}
			if _, err := reqString(a, "name", p); err != nil {
				return 0, err
			}
		}
	}
	return n, nil
}

// actor validates an Agent or Group in a position of the given kind and returns its objectType.
func (c *validator) actor(x any, path string, kind actorKind) error {
	m, err := asObject(x, path)
	if err != nil {
		return err
	}
	ot, hasOT, err := optString(m, "objectType", path)
	if err != nil {
		return err
	}
	if !hasOT {
		if kind == actorAsObject {
			return errf(path+".objectType", "is required for an Agent or Group object")
		}
		if kind == actorGroup {
			return errf(path+".objectType", `must be "Group"`)
		}
		ot = "Agent"
	}
	switch ot {
	case "Agent":
		if kind == actorGroup {
			return errf(path+".objectType", `must be "Group"`)
		}
		if err := checkKeys(m, path, "objectType", "name", "mbox", "mbox_sha1sum", "openid", "account"); err != nil {
			return err
		}
		if _, _, err := optString(m, "name", path); err != nil {
			return err
		}
		n, err := ifis(m, path)
		if err != nil {
			return err
		}
		if n != 1 {
			return errf(path, "an Agent must have exactly one inverse functional identifier, has %d", n)
		}
	case "Group":
		if kind == actorAgent {
			return errf(path+".objectType", `must be "Agent"`)
		}
		if err := checkKeys(m, path, "objectType", "name", "member", "mbox", "mbox_sha1sum", "openid", "account"); err != nil {
			return err
		}
		if _, _, err := optString(m, "name", path); err != nil {
			return err
		}
		n, err := ifis(m, path)
		if err != nil {
			return err
		}
		if n > 1 {
			return errf(path, "a Group must have at most one inverse functional identifier, has %d", n)
		}
		members, hasMembers := m["member"]
		if hasMembers {
			arr, ok := members.([]any)
			if !ok {
				return errf(path+".member", "must be an array of Agents")
			}
			for i, a := range arr {
				if err := c.actor(a, indexPath(path+".member", i), actorAgent); err != nil {
					return err
				}
			}
			if n == 0 && len(arr) == 0 {
				return errf(path+".member", "an anonymous Group must list its members")
			}
		} else if n == 0 {
			return errf(path+".member", "an anonymous Group must list its members")
		}
	default:
		return errf(path+".objectType", `must be "Agent" or "Group"`)
	}
	return nil
}

func indexPath(path string, i int) string {
	return path + "[" + itoa(i) + "]"
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b [20]byte
	n := len(b)
	for i > 0 {
		n--
		b[n] = byte('0' + i%10)
		i /= 10
	}
	return string(b[n:])
}

func (c *validator) authority(x any, path string) error {
	if err := c.actor(x, path, actorAny); err != nil {
		return err
	}
	m := x.(map[string]any)
	if m["objectType"] == "Group" {
		// A Group authority only describes OAuth 3-legged: an anonymous pair of
		// (consumer, user) agents.
		n, _ := ifis(m, path)
		if n != 0 {
			return errf(path, "a Group authority must be anonymous")
		}
		if arr, _ := m["member"].([]any); len(arr) != 2 {
			return errf(path+".member", "a Group authority must have exactly two members")
		}
	}
	return nil
}

func (c *validator) verb(x any, path string) (string, error) {
	m, err := asObject(x, path)
	if err != nil {
		return "", err
	}
	if err := checkKeys(m, path, "id", "display"); err != nil {
		return "", err
	}
	id, err := iriProp(m, "id", path, true)
	if err != nil {
		return "", err
	}
	if err := optLanguageMap(m, "display", path); err != nil {
		return "", err
	}
	return id, nil
}

// object validates a statement's object and returns its objectType (defaulted).
func (c *validator) object(x any, path string, sub bool) (string, error) {
	m, err := asObject(x, path)
	if err != nil {
		return "", err
	}
	ot, hasOT, err := optString(m, "objectType", path)
	if err != nil {
		return "", err
	}
	if !hasOT {
		ot = "Activity"
		// An Agent or Group object must say so; without objectType it would be
		// taken for an Activity and fail on its properties anyway, but say why.
		if _, isAct := m["id"]; !isAct {
			for _, k := range append([]string{"member", "name"}, ifiKeys...) {
				if _, ok := m[k]; ok {
					return "", errf(path+".objectType", "is required for an Agent or Group object")
				}
			}
		}
	}
	switch ot {
	case "Activity":
		return ot, c.activity(m, path)
	case "Agent", "Group":
		return ot, c.actor(m, path, actorAsObject)
	case "StatementRef":
		return ot, statementRef(m, path)
	case "SubStatement":
		if sub {
			return "", errf(path+".objectType", "a SubStatement cannot contain a SubStatement")
		}
		return ot, c.statement(m, path, true)
	}
	return "", errf(path+".objectType", "unknown objectType %q", ot)
}

func statementRef(m map[string]any, path string) error {
	if err := checkKeys(m, path, "objectType", "id"); err != nil {
		return err
	}
	if m["objectType"] != "StatementRef" {
		return errf(path+".objectType", `must be "StatementRef"`)
	}
	return uuidProp(m, "id", path, true)
}

func (c *validator) activity(m map[string]any, path string) error {
	if err := checkKeys(m, path, "objectType", "id", "definition"); err != nil {
		return err
	}
	if _, err := iriProp(m, "id", path, true); err != nil {
		return err
	}
	if x, ok := m["definition"]; ok {
		return c.definition(x, path+".definition")
	}
	return nil
}

var interactionTypes = map[string][]string{
	"true-false":   nil,
	"choice":       {"choices"},
	"fill-in":      nil,
	"long-fill-in": nil,
	"matching":     {"source", "target"},
	"performance":  {"steps"},
	"sequencing":   {"choices"},
	"likert":       {"scale"},
	"numeric":      nil,
	"other":        nil,
}

var componentLists = []string{"choices", "scale", "source", "target", "steps"}

func (c *validator) definition(x any, path string) error {
	m, err := asObject(x, path)
	if err != nil {
		return err
	}
	if err := checkKeys(m, path, "name", "description", "type", "moreInfo", "extensions",
		"interactionType", "correctResponsesPattern", "choices", "scale", "source", "target", "steps"); err != nil {
		return err
	}
	if err := optLanguageMap(m, "name", path); err != nil {
		return err
	}
	if err := optLanguageMap(m, "description", path); err != nil {
		return err
	}
	if _, err := iriProp(m, "type", path, false); err != nil {
		return err
	}
	if s, ok, err := optString(m, "moreInfo", path); err != nil {
		return err
	} else if ok && !validIRL(s) {
		return errf(path+".moreInfo", "must be an IRL")
	}
	if err := extensions(m, "extensions", path); err != nil {
		return err
	}
	it, hasIT, err := optString(m, "interactionType", path)
	if err != nil {
		return err
	}
	allowed, known := interactionTypes[it]
	if hasIT && !known {
		return errf(path+".interactionType", "unknown interactionType %q", it)
	}
	if x, ok := m["correctResponsesPattern"]; ok {
		if !hasIT {
			return errf(path+".interactionType", "is required with correctResponsesPattern")
		}
		arr, ok := x.([]any)
		if !ok {
			return errf(path+".correctResponsesPattern", "must be an array of strings")
		}
		for i, e := range arr {
			if _, ok := e.(string); !ok {
				return errf(indexPath(path+".correctResponsesPattern", i), "must be a string")
			}
		}
	}
	for _, list := range componentLists {
		x, ok := m[list]
		if !ok {
			continue
		}
		if !hasIT {
			return errf(path+".interactionType", "is required with %s", list)
		}
		permitted := false
		for _, a := range allowed {
			permitted = permitted || a == list
		}
		if !permitted {
			return errf(path+"."+list, "not allowed for interactionType %q", it)
		}
		arr, ok := x.([]any)
		if !ok {
			return errf(path+"."+list, "must be an array of interaction components")
		}
		ids := map[string]bool{}
		for i, e := range arr {
			p := indexPath(path+"."+list, i)
			cm, err := asObject(e, p)
			if err != nil {
				return err
			}
			if err := checkKeys(cm, p, "id", "description"); err != nil {
				return err
			}
			id, err := reqString(cm, "id", p)
			if err != nil {
				return err
			}
			if ids[id] {
				return errf(p+".id", "duplicate interaction component id %q", id)
			}
			ids[id] = true
			if err := optLanguageMap(cm, "description", p); err != nil {
				return err
			}
		}
	}
	return nil
}

func (c *validator) result(x any, path string) error {
	m, err := asObject(x, path)
	if err != nil {
		return err
	}
	if err := checkKeys(m, path, "score", "success", "completion", "response", "duration", "extensions"); err != nil {
		return err
	}
	if sx, ok := m["score"]; ok {
		p := path + ".score"
		s, err := asObject(sx, p)
		if err != nil {
			return err
		}
		if err := checkKeys(s, p, "scaled", "raw", "min", "max"); err != nil {
			return err
		}
		scaled, hasScaled, err := numProp(s, "scaled", p)
		if err != nil {
			return err
		}
		if hasScaled && (scaled < -1 || scaled > 1) {
			return errf(p+".scaled", "must be between -1 and 1")
		}
		raw, hasRaw, err := numProp(s, "raw", p)
		if err != nil {
			return err
		}
		lo, hasMin, err := numProp(s, "min", p)
		if err != nil {
			return err
		}
		hi, hasMax, err := numProp(s, "max", p)
		if err != nil {
			return err
		}
		if hasMin && hasMax && lo >= hi {
			return errf(p+".min", "must be less than max")
		}
		if hasRaw && hasMin && raw < lo {
			return errf(p+".raw", "must not be below min")
		}
		if hasRaw && hasMax && raw > hi {
			return errf(p+".raw", "must not be above max")
		}
	}
	if err := boolProp(m, "success", path); err != nil {
		return err
	}
	if err := boolProp(m, "completion", path); err != nil {
		return err
	}
	if _, _, err := optString(m, "response", path); err != nil {
		return err
	}
	if s, ok, err := optString(m, "duration", path); err != nil {
		return err
	} else if ok && !lexical.ValidDuration(s) {
		return errf(path+".duration", "must be an ISO 8601 duration")
	}
	return extensions(m, "extensions", path)
}

func (c *validator) context(x any, path, objType string) error {
	m, err := asObject(x, path)
	if err != nil {
		return err
	}
	keys := []string{"registration", "instructor", "team", "contextActivities", "revision", "platform", "language", "statement", "extensions"}
	if c.v.is20() {
		keys = append(keys, "contextAgents", "contextGroups")
	}
	if err := checkKeys(m, path, keys...); err != nil {
		return err
	}
	if err := uuidProp(m, "registration", path, false); err != nil {
		return err
	}
	if x, ok := m["instructor"]; ok {
		if err := c.actor(x, path+".instructor", actorAny); err != nil {
			return err
		}
	}
	if x, ok := m["team"]; ok {
		if err := c.actor(x, path+".team", actorGroup); err != nil {
			return err
		}
	}
	if x, ok := m["contextActivities"]; ok {
		p := path + ".contextActivities"
		ca, err := asObject(x, p)
		if err != nil {
			return err
		}
		if err := checkKeys(ca, p, "parent", "grouping", "category", "other"); err != nil {
			return err
		}
		for k, v := range ca {
			list, isArr := v.([]any)
			if !isArr {
				list = []any{v}
			}
			for i, a := range list {
				ap := p + "." + k
				if isArr {
					ap = indexPath(ap, i)
				}
				am, err := asObject(a, ap)
				if err != nil {
					return err
				}
				if ot, ok := am["objectType"]; ok && ot != "Activity" {
					return errf(ap+".objectType", `must be "Activity"`)
				}
				if err := c.activity(am, ap); err != nil {
					return err
				}
			}
		}
	}
	for _, k := range []string{"revision", "platform"} {
		if _, ok, err := optString(m, k, path); err != nil {
			return err
		} else if ok && objType != "Activity" {
			return errf(path+"."+k, "only allowed when the object is an Activity")
		}
	}
	if s, ok, err := optString(m, "language", path); err != nil {
		return err
	} else if ok && !lexical.ValidLanguageTag(s) {
		return errf(path+".language", "not an RFC 5646 language tag")
	}
	if x, ok := m["statement"]; ok {
		sm, err := asObject(x, path+".statement")
		if err != nil {
			return err
		}
		if err := statementRef(sm, path+".statement"); err != nil {
			return err
		}
	}
	if err := extensions(m, "extensions", path); err != nil {
		return err
	}
	for _, spec := range []struct{ key, ot, member string }{
		{"contextAgents", "contextAgent", "agent"}, {"contextGroups", "contextGroup", "group"},
	} {
		x, ok := m[spec.key]
		if !ok {
			continue
		}
		p := path + "." + spec.key
		arr, ok := x.([]any)
		if !ok {
			return errf(p, "must be an array")
		}
		for i, e := range arr {
			ep := indexPath(p, i)
			em, err := asObject(e, ep)
			if err != nil {
				return err
			}
			if err := checkKeys(em, ep, "objectType", spec.member, "relevantTypes"); err != nil {
				return err
			}
			if ot, err := reqString(em, "objectType", ep); err != nil {
				return err
			} else if ot != spec.ot {
				return errf(ep+".objectType", "must be %q", spec.ot)
			}
			mx, ok := em[spec.member]
			if !ok {
				return errf(ep+"."+spec.member, "is required")
			}
			kind := actorAgent
			if spec.member == "group" {
				kind = actorGroup
			}
			if err := c.actor(mx, ep+"."+spec.member, kind); err != nil {
				return err
			}
			if rt, ok := em["relevantTypes"]; ok {
				ra, ok := rt.([]any)
				if !ok || len(ra) == 0 {
					return errf(ep+".relevantTypes", "must be a non-empty array of IRIs")
				}
				for j, t := range ra {
					if s, ok := t.(string); !ok || !lexical.ValidIRI(s) {
						return errf(indexPath(ep+".relevantTypes", j), "must be an IRI")
					}
				}
			}
		}
	}
	return nil
}

func (c *validator) attachments(x any, path string) error {
	arr, ok := x.([]any)
	if !ok {
		return errf(path, "must be an array")
	}
	for i, e := range arr {
		p := indexPath(path, i)
		m, err := asObject(e, p)
		if err != nil {
			return err
		}
		if err := checkKeys(m, p, "usageType", "display", "description", "contentType", "length", "sha2", "fileUrl"); err != nil {
			return err
		}
		ut, err := iriProp(m, "usageType", p, true)
		if err != nil {
			return err
		}
		d, ok := m["display"]
		if !ok {
			return errf(p+".display", "is required")
		}
		if err := languageMap(d, p+".display"); err != nil {
			return err
		}
		if err := optLanguageMap(m, "description", p); err != nil {
			return err
		}
		ct, err := reqString(m, "contentType", p)
		if err != nil {
			return err
		}
		if !validMediaType(ct) {
			return errf(p+".contentType", "must be an Internet Media Type")
		}
		if ut == SignatureUsageType && mediaType(ct) != "application/octet-stream" {
			return errf(p+".contentType", "a signature must be application/octet-stream")
		}
		ln, ok := m["length"]
		if !ok {
			return errf(p+".length", "is required")
		}
		if n, ok := ln.(json.Number); !ok || !isNonNegInt(string(n)) {
			return errf(p+".length", "must be a non-negative integer")
		}
		sha, err := reqString(m, "sha2", p)
		if err != nil {
			return err
		}
		if !validSHA2(sha) {
			return errf(p+".sha2", "must be a hex SHA-2 digest")
		}
		if s, ok, err := optString(m, "fileUrl", p); err != nil {
			return err
		} else if ok && !validIRL(s) {
			return errf(p+".fileUrl", "must be an IRL")
		}
	}
	return nil
}

func isNonNegInt(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// validSHA2 accepts hex digests of the SHA-2 sizes (224, 256, 384, 512 bits).
func validSHA2(s string) bool {
	switch len(s) {
	case 56, 64, 96, 128:
	default:
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i] | 0x20
		if !(c >= '0' && c <= '9') && !(c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// mediaType returns the lowercase type/subtype of a Content-Type value.
func mediaType(ct string) string {
	t, _, _ := strings.Cut(ct, ";")
	return strings.ToLower(strings.TrimSpace(t))
}

func validMediaType(ct string) bool {
	t := mediaType(ct)
	a, b, ok := strings.Cut(t, "/")
	return ok && a != "" && b != "" && !strings.ContainsAny(t, " \t\"")
}
