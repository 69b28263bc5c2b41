package xapi

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/lrs/xapi/lexical"
)

func TestParseVersionHeader(t *testing.T) {
	for h, want := range map[string]Version{"1.0": V103, "1.0.0": V103, "1.0.3": V103, "1.0.9": V103, "2.0": V200, "2.0.0": V200} {
		if v, err := ParseVersionHeader(h); err != nil || v != want {
			t.Errorf("%q: %v %v", h, v, err)
		}
	}
	for _, h := range []string{"", "1", "1.1", "0.95", "2.1.0", "1.0.x", "3.0"} {
		if _, err := ParseVersionHeader(h); err == nil {
			t.Errorf("%q accepted", h)
		}
	}
}

func parseOne(t *testing.T, body string, v Version) *Statement {
	t.Helper()
	stmts, _, err := ParseStatements([]byte(body), v)
	if err != nil {
		t.Fatal(err)
	}
	return stmts[0]
}

func decodeMap(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return m
}

func TestCompleteAndFields(t *testing.T) {
	body := `{"id":"9E13CEFD-53D3-4EAC-B5ED-2CF6693903BB",
	 "actor":{"objectType":"Group","mbox":"mailto:g@example.com","member":[{"mbox":"mailto:m@example.com"}]},
	 "verb":{"id":"http://example.com/v"},
	 "object":{"objectType":"SubStatement","actor":{"openid":"http://o.example/s"},"verb":{"id":"http://example.com/v2"},
	   "object":{"id":"http://example.com/subobj"},"context":{"contextActivities":{"parent":{"id":"http://example.com/subparent"}}}},
	 "context":{"registration":"EC531277-B57B-4C15-8D91-D292C5B2B8F7","instructor":{"account":{"homePage":"http://example.com","name":"teach"}},
	   "contextActivities":{"parent":{"id":"http://example.com/parent"},"grouping":[{"id":"http://example.com/grouping"}]}},
	 "result":{"score":{"raw":1.50}},
	 "attachments":[{"usageType":"http://example.com/u","display":{"en":"a"},"contentType":"text/plain","length":3,"sha2":"BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD"}]}`
	s := parseOne(t, body, V103)
	if s.ID() != "9e13cefd-53d3-4eac-b5ed-2cf6693903bb" {
		t.Fatalf("id %q", s.ID())
	}
	stored := time.Date(2024, 3, 1, 10, 0, 0, 123_000_000, time.UTC)
	s.Complete(json.RawMessage(`{"objectType":"Agent","mbox":"mailto:lrs@example.com"}`), stored, V103)
	m := decodeMap(t, s.JSON())
	if m["stored"] != "2024-03-01T10:00:00.123Z" || m["timestamp"] != m["stored"] || m["version"] != "1.0.0" {
		t.Fatalf("completed: %v %v %v", m["stored"], m["timestamp"], m["version"])
	}
	if !strings.Contains(string(s.JSON()), `"raw":1.50`) {
		t.Errorf("number text not kept: %s", s.JSON())
	}
	parent := m["context"].(map[string]any)["contextActivities"].(map[string]any)["parent"]
	if _, ok := parent.([]any); !ok {
		t.Errorf("single context activity not wrapped in an array: %v", parent)
	}
	f := s.Fields()
	if f.ID != s.ID() || f.VerbID != "http://example.com/v" || f.Registration != "ec531277-b57b-4c15-8d91-d292c5b2b8f7" ||
		!f.Stored.Equal(stored) || !f.Timestamp.Equal(stored) || f.Activity != "" || f.Voids != "" || f.Hash == "" || len(f.Raw) == 0 {
		t.Fatalf("fields: %+v", f)
	}
	if want := []string{"mbox:mailto:g@example.com", "mbox:mailto:m@example.com"}; !reflect.DeepEqual(f.Agents, want) {
		t.Errorf("Agents = %v", f.Agents)
	}
	for _, want := range []string{"mbox:mailto:lrs@example.com", "account:http://example.com|teach", "openid:http://o.example/s", "mbox:mailto:m@example.com"} {
		if !slices.Contains(f.RelatedAgents, want) {
			t.Errorf("RelatedAgents %v lacks %s", f.RelatedAgents, want)
		}
	}
	for _, want := range []string{"http://example.com/parent", "http://example.com/grouping", "http://example.com/subobj", "http://example.com/subparent"} {
		if !slices.Contains(f.RelatedActivities, want) {
			t.Errorf("RelatedActivities %v lacks %s", f.RelatedActivities, want)
		}
	}
	if !reflect.DeepEqual(f.AttachmentHashes, []string{"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"}) {
		t.Errorf("AttachmentHashes = %v", f.AttachmentHashes)
	}

	// client's timestamp, version and authority are kept when the caller passes no authority
	s2 := parseOne(t, string(stmtJSON(mod{"timestamp", "2020-01-01T00:00:00Z"}, mod{"version", "2.0.0"},
		mod{"authority", raw(`{"mbox":"mailto:c@example.com"}`)})), V200)
	s2.Complete(nil, stored, V200)
	m2 := decodeMap(t, s2.JSON())
	if m2["timestamp"] != "2020-01-01T00:00:00Z" || m2["version"] != "2.0.0" || !lexical.ValidUUID(s2.ID()) ||
		m2["authority"].(map[string]any)["mbox"] != "mailto:c@example.com" {
		t.Fatalf("completed: %s", s2.JSON())
	}
	s3 := parseOne(t, string(stmtJSON()), V200)
	s3.Complete(nil, stored, V200)
	if decodeMap(t, s3.JSON())["version"] != "2.0.0" {
		t.Errorf("2.0 default version: %s", s3.JSON())
	}
	if f := s3.Fields(); f.Activity != "http://example.com/activities/a1" || !reflect.DeepEqual(f.Agents, []string{"mbox:mailto:ann@example.com"}) {
		t.Errorf("fields: %+v", f)
	}
}

func TestVoidTargetAndAttachments(t *testing.T) {
	s := parseOne(t, string(stmtJSON(mod{"verb.id", VoidVerb}, mod{"object", raw(`{"objectType":"StatementRef","id":"9E13CEFD-53D3-4EAC-B5ED-2CF6693903BB"}`)})), V103)
	if s.VoidTarget() != "9e13cefd-53d3-4eac-b5ed-2cf6693903bb" {
		t.Errorf("VoidTarget = %q", s.VoidTarget())
	}
	if s.RefTarget() != "9e13cefd-53d3-4eac-b5ed-2cf6693903bb" || s.Fields().Target != s.RefTarget() {
		t.Errorf("RefTarget = %q, Fields().Target = %q", s.RefTarget(), s.Fields().Target)
	}
	ref := parseOne(t, string(stmtJSON(mod{"object", raw(`{"objectType":"StatementRef","id":"9E13CEFD-53D3-4EAC-B5ED-2CF6693903BB"}`)})), V103)
	if f := ref.Fields(); f.Target != "9e13cefd-53d3-4eac-b5ed-2cf6693903bb" || f.Voids != "" {
		t.Errorf("StatementRef fields: Target %q, Voids %q", f.Target, f.Voids)
	}
	if parseOne(t, string(stmtJSON()), V103).Fields().Target != "" {
		t.Error("non-StatementRef statement has a target")
	}
	if parseOne(t, string(stmtJSON()), V103).VoidTarget() != "" {
		t.Error("non-voiding statement has a void target")
	}
	sha := strings.Repeat("ab", 32)
	s = parseOne(t, string(stmtJSON(mod{"attachments", raw(`[{"usageType":"` + SignatureUsageType + `","display":{"en":"s"},"contentType":"application/octet-stream","length":10,"sha2":"` + sha + `"}]`)})), V103)
	want := []AttachmentRef{{UsageType: SignatureUsageType, ContentType: "application/octet-stream", SHA2: sha, Length: 10, Signature: true}}
	if got := s.Attachments(); !reflect.DeepEqual(got, want) {
		t.Errorf("Attachments = %+v", got)
	}
}

func TestAgents(t *testing.T) {
	for js, want := range map[string]string{
		`{"mbox":"mailto:a@example.com"}`:                                                  "mbox:mailto:a@example.com",
		`{"objectType":"Agent","mbox_sha1sum":"CD9B00A5611F94EAA7B1661EDAB976068E364975"}`: "mbox_sha1sum:cd9b00a5611f94eaa7b1661edab976068e364975",
		`{"openid":"http://o.example/1"}`:                                                  "openid:http://o.example/1",
		`{"account":{"homePage":"http://example.com","name":"x"}}`:                         "account:http://example.com|x",
		`{"objectType":"Group","mbox":"mailto:g@example.com"}`:                             "mbox:mailto:g@example.com",
	} {
		_, ifi, err := ParseAgent([]byte(js), V103)
		if err != nil || ifi != want {
			t.Errorf("ParseAgent(%s) = %q, %v", js, ifi, err)
		}
	}
	for _, js := range []string{`{"name":"x"}`, `{"mbox":"a@example.com"}`, `{"objectType":"Group","member":[{"mbox":"mailto:a@example.com"}]}`, `x`, `[]`} {
		if _, _, err := ParseAgent([]byte(js), V103); err == nil {
			t.Errorf("ParseAgent(%s) accepted", js)
		}
	}
	agent, _, _ := ParseAgent([]byte(`{"objectType":"Agent","name":"Ann","mbox":"mailto:a@example.com"}`), V103)
	p := Person(agent)
	want := map[string]any{"objectType": "Person", "name": []any{"Ann"}, "mbox": []any{"mailto:a@example.com"}}
	if !reflect.DeepEqual(p, want) {
		t.Errorf("Person = %v", p)
	}
}

func TestMergeActivity(t *testing.T) {
	old := json.RawMessage(`{"objectType":"Activity","id":"http://example.com/a","definition":{"name":{"en-US":"A"},"type":"http://example.com/t1","extensions":{"http://example.com/e1":1}}}`)
	nw := json.RawMessage(`{"id":"http://example.com/a","definition":{"name":{"fr":"Un A"},"description":{"en-US":"d"},"type":"http://example.com/t2","extensions":{"http://example.com/e2":2}}}`)
	got := decodeMap(t, MergeActivity(old, nw))
	want := decodeMap(t, []byte(`{"objectType":"Activity","id":"http://example.com/a","definition":{"name":{"en-US":"A","fr":"Un A"},"description":{"en-US":"d"},"type":"http://example.com/t2","extensions":{"http://example.com/e1":1,"http://example.com/e2":2}}}`))
	if !reflect.DeepEqual(got, want) {
		t.Errorf("merged = %v", got)
	}
	if got := decodeMap(t, MergeActivity(nil, nw)); !reflect.DeepEqual(got, decodeMap(t, nw)) {
		t.Errorf("merge into nothing = %v", got)
	}

	// a statement's Activities gathers object and context activities with definitions
	s := parseOne(t, string(stmtJSON(mod{"object.definition", raw(`{"name":{"en":"x"}}`)},
		mod{"context", raw(`{"contextActivities":{"parent":[{"id":"http://example.com/p","definition":{"type":"http://example.com/t"}},{"id":"http://example.com/nodef"}]}}`)})), V103)
	acts := s.Activities()
	if len(acts) != 2 || acts["http://example.com/activities/a1"] == nil || acts["http://example.com/p"] == nil {
		t.Errorf("Activities = %v", acts)
	}
}

func TestFormat(t *testing.T) {
	body := `{"id":"9e13cefd-53d3-4eac-b5ed-2cf6693903bb",
	 "actor":{"objectType":"Agent","name":"Ann","mbox":"mailto:a@example.com"},
	 "verb":{"id":"http://example.com/v","display":{"en-US":"did","en-GB":"did (gb)","fr":"a fait"}},
	 "object":{"objectType":"SubStatement","actor":{"objectType":"Group","name":"G","mbox":"mailto:g@example.com","member":[{"mbox":"mailto:m@example.com"}]},
	   "verb":{"id":"http://example.com/v2","display":{"en-US":"x"}},
	   "object":{"objectType":"Activity","id":"http://example.com/a","definition":{"name":{"en":"N","en-GB":"N gb"},"description":{"de":"D"},
	     "interactionType":"choice","choices":[{"id":"c","description":{"en-US":"C","fr":"C fr"}}]}}},
	 "context":{"instructor":{"objectType":"Group","member":[{"name":"M","mbox":"mailto:m@example.com"}]},
	   "contextActivities":{"parent":[{"id":"http://example.com/p","definition":{"name":{"en-US":"P"}}}]}},
	 "authority":{"objectType":"Agent","name":"LRS","mbox":"mailto:lrs@example.com"}}`
	if got, err := Format([]byte(body), "exact", nil); err != nil || string(got) != body {
		t.Fatalf("exact changed the statement: %v", err)
	}
	if _, err := Format([]byte(body), "full", nil); err == nil {
		t.Fatal("unknown format accepted")
	}
	ids, err := Format([]byte(body), "ids", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := decodeMap(t, []byte(`{"id":"9e13cefd-53d3-4eac-b5ed-2cf6693903bb",
	 "actor":{"objectType":"Agent","mbox":"mailto:a@example.com"},
	 "verb":{"id":"http://example.com/v"},
	 "object":{"objectType":"SubStatement","actor":{"objectType":"Group","mbox":"mailto:g@example.com"},"verb":{"id":"http://example.com/v2"},"object":{"id":"http://example.com/a"}},
	 "context":{"instructor":{"objectType":"Group","member":[{"mbox":"mailto:m@example.com"}]},"contextActivities":{"parent":[{"id":"http://example.com/p"}]}},
	 "authority":{"objectType":"Agent","mbox":"mailto:lrs@example.com"}}`))
	if got := decodeMap(t, ids); !reflect.DeepEqual(got, want) {
		t.Errorf("ids:\n got %s", ids)
	}
	can, err := Format([]byte(body), "canonical", []string{"en-GB"})
	if err != nil {
		t.Fatal(err)
	}
	cm := decodeMap(t, can)
	if d := cm["verb"].(map[string]any)["display"]; !reflect.DeepEqual(d, map[string]any{"en-GB": "did (gb)"}) {
		t.Errorf("verb display = %v", d)
	}
	def := cm["object"].(map[string]any)["object"].(map[string]any)["definition"].(map[string]any)
	if !reflect.DeepEqual(def["name"], map[string]any{"en-GB": "N gb"}) || !reflect.DeepEqual(def["description"], map[string]any{"de": "D"}) {
		t.Errorf("definition = %v", def)
	}
	if c := def["choices"].([]any)[0].(map[string]any)["description"]; !reflect.DeepEqual(c, map[string]any{"en-US": "C"}) {
		t.Errorf("choice description = %v", c)
	}
	if a := cm["actor"].(map[string]any); a["name"] != "Ann" {
		t.Errorf("canonical dropped the actor's name: %v", a)
	}
	lm := map[string]any{"en-US": 1, "fr-CA": 2, "de": 3}
	for langs, want := range map[string]string{"fr": "fr-CA", "de-AT,fr": "de", "ja": "en-US", "*": "en-US", "fr-CA;q=1": "fr-CA", "de-DE": "de"} {
		if got := BestLanguage(lm, strings.Split(langs, ",")); got != want {
			t.Errorf("BestLanguage(%s) = %s, want %s", langs, got, want)
		}
	}
}

func TestContentHash(t *testing.T) {
	base := `{"actor":{"objectType":"Group","mbox":"mailto:g@example.com","member":[{"mbox":"mailto:a@example.com"},{"mbox":"mailto:b@example.com"}]},
	 "verb":{"id":"http://example.com/v","display":{"en":"v"}},"object":{"id":"http://example.com/a","definition":{"name":{"en":"A"}}},
	 "context":{"registration":"ec531277-b57b-4c15-8d91-d292c5b2b8f7","contextActivities":{"parent":[{"id":"http://example.com/p"}]}},
	 "result":{"duration":"PT1.234S"}}`
	same := []string{
		// LRS-assigned properties, display, definition, member order, UUID case, single context activity,
		// duration beyond 0.01 s, property order
		`{"id":"9e13cefd-53d3-4eac-b5ed-2cf6693903bb","stored":"2020-01-01T00:00:00Z","timestamp":"2020-01-01T00:00:00Z","version":"1.0.0","authority":{"mbox":"mailto:x@example.com"},
		 "result":{"duration":"PT1.23S"},
		 "actor":{"member":[{"mbox":"mailto:b@example.com"},{"mbox":"mailto:a@EXAMPLE.com"}],"mbox":"mailto:g@example.com","objectType":"Group"},
		 "verb":{"id":"http://example.com/v","display":{"fr":"v"}},"object":{"objectType":"Activity","id":"http://example.com/a"},
		 "context":{"registration":"EC531277-B57B-4C15-8D91-D292C5B2B8F7","contextActivities":{"parent":{"id":"http://example.com/p","definition":{}}}}}`,
	}
	different := []string{
		strings.Replace(base, "http://example.com/v\"", "http://example.com/w\"", 1),
		strings.Replace(base, "mailto:a@example.com", "mailto:c@example.com", 1),
		strings.Replace(base, "PT1.234S", "PT1.3S", 1),
		strings.Replace(base, `"result":{"duration":"PT1.234S"}`, `"result":{"duration":"PT1.234S","success":true}`, 1),
	}
	h := ContentHash([]byte(base))
	for i, s := range same {
		if ContentHash([]byte(s)) != h {
			t.Errorf("same[%d] hashes differently", i)
		}
	}
	for i, s := range different {
		if ContentHash([]byte(s)) == h {
			t.Errorf("different[%d] hashes the same", i)
		}
	}
	if ContentHash([]byte("not json")) == ContentHash([]byte("not json either")) {
		t.Error("invalid JSON collides")
	}
}
