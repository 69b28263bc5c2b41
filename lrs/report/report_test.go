package report_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/lrs/report"
	"github.com/lectern-lms/lectern/storage/statements"
)

func st(t *testing.T, ts time.Time, body map[string]any) *statements.Statement {
	t.Helper()
	raw, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	return &statements.Statement{Raw: raw, Timestamp: ts, Stored: ts.Add(time.Second)}
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestReports(t *testing.T) {
	ts := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	ann := map[string]any{"objectType": "Agent", "name": "Ann", "account": map[string]any{"homePage": "https://lms.example", "name": "ann"}}
	bob := map[string]any{"mbox": "mailto:bob@example.com"}
	act := func(id string) map[string]any {
		return map[string]any{"id": id, "definition": map[string]any{"name": map[string]any{"en-US": "Quiz " + id}}}
	}
	page := []*statements.Statement{
		st(t, ts, map[string]any{"actor": ann, "object": act("http://x/a1"),
			"result": map[string]any{"score": map[string]any{"raw": 7.5, "scaled": 0.75}, "success": true, "completion": false, "duration": "PT1M"}}),
		// no result: no entry, but the actor and activity count
		st(t, ts, map[string]any{"actor": bob, "object": act("http://x/a2")}),
		// object is an agent: ignored everywhere
		st(t, ts, map[string]any{"actor": bob, "object": map[string]any{"objectType": "Agent", "mbox": "mailto:c@example.com"}, "result": map[string]any{"success": true}}),
		// anonymous group: its members are actors
		{Raw: mustJSON(t, map[string]any{"actor": map[string]any{"objectType": "Group", "member": []any{map[string]any{"mbox": "mailto:dan@example.com"}}},
			"object": act("http://x/a1"), "result": map[string]any{"completion": true}}), Stored: ts.Add(time.Second)},
		{Raw: json.RawMessage(`not json`)},
	}
	res := report.Results(page)
	if len(res) != 2 {
		t.Fatalf("results: %+v", res)
	}
	r0 := res[0]
	if r0.Date != "2024-05-01T10:00:00Z" || r0.Result.Score == nil || *r0.Result.Score.Raw != 7.5 || !*r0.Result.Success || *r0.Result.Completion ||
		r0.Result.Duration != "PT1M" || r0.Actor.Account == nil || r0.Actor.Account.Name != "ann" || r0.Actor.Name != "Ann" ||
		r0.Activity.ID != "http://x/a1" || r0.Activity.ObjectType != "Activity" || r0.Activity.Definition.Name["en-US"] != "Quiz http://x/a1" {
		t.Errorf("entry 0: %+v", r0)
	}
	if res[1].Date != "2024-05-01T10:00:01Z" || res[1].Actor.ObjectType != "Group" || res[1].Result.Score != nil || res[1].Result.Success != nil {
		t.Errorf("entry 1 (stored time as date, group actor, only completion): %+v", res[1])
	}
	b, _ := json.Marshal(res[1].Result)
	if string(b) != `{"completion":true}` {
		t.Errorf("absent result properties must be left out: %s", b)
	}

	if _, ok := report.ActivityOf(json.RawMessage(`{"objectType":"StatementRef","id":"x"}`)); ok {
		t.Error("a StatementRef is not an activity")
	}
}
