package cmi5rules

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/lectern-lms/lectern/course"
	"github.com/lectern-lms/lectern/course/registration"
	"github.com/lectern-lms/lectern/course/rollup"
	"github.com/lectern-lms/lectern/lrs/access"
	"github.com/lectern-lms/lectern/storage/statements"
)

const (
	reg      = "7d7c0b8a-6a5e-4d3f-9b0e-2f1e3d4c5b60"
	session  = "s-1"
	auID     = "https://example.com/au/1"
	homePage = "https://lms.example.com"
	learner  = "ann"
)

// stmt is a cmi5 defined statement of the launch's AU session with verb (a short name such
// as "passed"), as an AU writes it; change edits it before it is encoded.
func stmt(verb string, change func(m map[string]any)) json.RawMessage {
	ids := map[string]string{"initialized": rollup.VerbInitialized, "completed": rollup.VerbCompleted, "passed": rollup.VerbPassed,
		"failed": rollup.VerbFailed, "terminated": rollup.VerbTerminated, "experienced": "http://adlnet.gov/expapi/verbs/experienced"}
	m := map[string]any{
		"id":     "00000000-0000-4000-8000-0000000000" + map[string]string{"initialized": "01", "completed": "02", "passed": "03", "failed": "04", "terminated": "05", "experienced": "06"}[verb],
		"actor":  map[string]any{"objectType": "Agent", "account": map[string]any{"homePage": homePage, "name": learner}},
		"verb":   map[string]any{"id": ids[verb]},
		"object": map[string]any{"id": auID},
		"context": map[string]any{"registration": reg,
			"contextActivities": map[string]any{"category": []any{map[string]any{"id": rollup.CMI5Category}}},
			"extensions":        map[string]any{rollup.CMI5SessionExt: session}},
		"timestamp": "2026-12-07T10:00:00.000Z",
	}
	result := map[string]any{"duration": "PT1M"}
	moveOn := false
	switch verb {
	case "initialized":
		result = nil
	case "completed":
		result["completion"], moveOn = true, true
	case "passed":
		result["success"], result["score"], moveOn = true, map[string]any{"scaled": 0.9}, true
	case "failed":
		result["success"], result["score"], moveOn = false, map[string]any{"scaled": 0.3}, true
	case "experienced":
		// cmi5 allowed: no cmi5 category, no rules on its result.
		m["context"].(map[string]any)["contextActivities"] = map[string]any{}
		result = nil
	}
	if result != nil {
		m["result"] = result
	}
	if moveOn {
		cats := m["context"].(map[string]any)["contextActivities"].(map[string]any)
		cats["category"] = append(cats["category"].([]any), map[string]any{"id": CategoryMoveOn})
	}
	if verb == "passed" || verb == "failed" {
		m["context"].(map[string]any)["extensions"].(map[string]any)[ExtMasteryScore] = 0.8
	}
	if change != nil {
		change(m)
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	return b
}

func result(m map[string]any) map[string]any  { return m["result"].(map[string]any) }
func context(m map[string]any) map[string]any { return m["context"].(map[string]any) }
func ext(m map[string]any) map[string]any     { return context(m)["extensions"].(map[string]any) }
func dropMoveOn(m map[string]any) {
	context(m)["contextActivities"] = map[string]any{"category": []any{map[string]any{"id": rollup.CMI5Category}}}
}
func launch(mode string, mastery float64) *course.CMI5Session {
	return &course.CMI5Session{Registration: reg, Session: session, ActivityID: auID, Mode: mode, MasteryScore: &mastery}
}

// TestCheck holds each rule to the requirement it names: a batch that keeps the rules passes
// and is counted in the session's and the AU's fold; one statement that breaks a rule
// refuses the batch with access.ErrForbidden naming the statement and the requirement.
func TestCheck(t *testing.T) {
	initialized := stmt("initialized", nil)
	for _, c := range []struct {
		name    string
		batch   []json.RawMessage
		voiding bool // the xAPI layer saw the first statement void another
		noPrefs bool // the AU has not read the learner preferences
		preview bool // the session has no registration instance
		au      registration.ActivityFold
		mode    string
		want    string // the requirement refused, "" for none
		refused int    // the statement it names
	}{
		{name: "a whole session", batch: []json.RawMessage{initialized, stmt("completed", nil), stmt("passed", nil), stmt("experienced", nil), stmt("terminated", nil)}},
		{name: "an AU voids", batch: []json.RawMessage{initialized}, voiding: true, want: "6.3.0.0-1"},
		{name: "no id", batch: []json.RawMessage{stmt("initialized", func(m map[string]any) { delete(m, "id") })}, want: "9.1.0.0-1"},
		{name: "no timestamp", batch: []json.RawMessage{stmt("initialized", func(m map[string]any) { delete(m, "timestamp") })}, want: "9.7.0.0-1"},
		{name: "after terminated", batch: []json.RawMessage{initialized, stmt("terminated", nil), stmt("experienced", nil)}, want: "9.3.0.0-5", refused: 2},
		{name: "first is not initialized", batch: []json.RawMessage{stmt("completed", nil)}, want: "9.3.0.0-4"},
		{name: "initialized before the preferences", batch: []json.RawMessage{initialized}, noPrefs: true, want: "11.0.0.0-3"},
		{name: "a preview checks each statement alone", batch: []json.RawMessage{stmt("completed", nil)}, preview: true},
		{name: "no session id", batch: []json.RawMessage{stmt("initialized", func(m map[string]any) { delete(ext(m), rollup.CMI5SessionExt) })}, want: "9.6.3.1-4"},
		{name: "another session's id", batch: []json.RawMessage{stmt("initialized", func(m map[string]any) { ext(m)[rollup.CMI5SessionExt] = "s-2" })}, want: "9.6.3.1-4"},
		{name: "another registration", batch: []json.RawMessage{stmt("initialized", func(m map[string]any) { context(m)["registration"] = "b6b0c4c2-1f3e-4d5c-9a8b-7c6d5e4f3a21" })}, want: "9.6.1.0-1"},
		{name: "a timestamp not in UTC", batch: []json.RawMessage{stmt("initialized", func(m map[string]any) { m["timestamp"] = "2026-12-07T10:00:00+02:00" })}, want: "9.7.0.0-2"},
		{name: "a defined verb an AU may not use", batch: []json.RawMessage{initialized, stmt("experienced", func(m map[string]any) {
			context(m)["contextActivities"] = map[string]any{"category": []any{map[string]any{"id": rollup.CMI5Category}}}
		})}, want: "9.3.0.0-1", refused: 1},
		{name: "a group as actor", batch: []json.RawMessage{stmt("initialized", func(m map[string]any) { m["actor"].(map[string]any)["objectType"] = "Group" })}, want: "9.2.0.0-2"},
		{name: "an actor by mbox", batch: []json.RawMessage{stmt("initialized", func(m map[string]any) { m["actor"] = map[string]any{"mbox": "mailto:ann@example.com"} })}, want: "9.2.0.0-3"},
		{name: "another actor", batch: []json.RawMessage{stmt("initialized", func(m map[string]any) { m["actor"].(map[string]any)["account"].(map[string]any)["name"] = "bob" })}, want: "9.2.0.0-3"},
		{name: "another object", batch: []json.RawMessage{stmt("initialized", func(m map[string]any) { m["object"] = map[string]any{"id": "https://example.com/au/2"} })}, want: "8.1.5.0-6"},
		{name: "a verb twice in a session", batch: []json.RawMessage{initialized, stmt("completed", nil), stmt("completed", nil)}, want: "9.3.0.0-2", refused: 2},
		{name: "passed and failed in one session", batch: []json.RawMessage{initialized, stmt("failed", nil), stmt("passed", nil)}, want: "9.3.0.0-3", refused: 2},
		{name: "completed in Browse", mode: "Browse", batch: []json.RawMessage{initialized, stmt("completed", nil)}, want: "10.2.2.0-2", refused: 1},
		{name: "passed in Review", mode: "Review", batch: []json.RawMessage{initialized, stmt("passed", nil)}, want: "10.2.2.0-3", refused: 1},
		{name: "completed again in the registration", au: registration.ActivityFold{Completed: true}, batch: []json.RawMessage{initialized, stmt("completed", nil)}, want: "9.3.3.0-2", refused: 1},
		{name: "passed again in the registration", au: registration.ActivityFold{Passed: true}, batch: []json.RawMessage{initialized, stmt("passed", nil)}, want: "9.3.4.0-3", refused: 1},
		{name: "failed after passed", au: registration.ActivityFold{Passed: true}, batch: []json.RawMessage{initialized, stmt("failed", nil)}, want: "9.3.0.0-8", refused: 1},
		{name: "a score on completed", batch: []json.RawMessage{initialized, stmt("completed", func(m map[string]any) { result(m)["score"] = map[string]any{"scaled": 1} })}, want: "9.5.1.0-2", refused: 1},
		{name: "a raw score without min and max", batch: []json.RawMessage{initialized, stmt("passed", func(m map[string]any) { result(m)["score"] = map[string]any{"raw": 9} })}, want: "9.5.1.0-3", refused: 1},
		{name: "passed without success", batch: []json.RawMessage{initialized, stmt("passed", func(m map[string]any) { delete(result(m), "success") })}, want: "9.5.2.0-1", refused: 1},
		{name: "failed with success", batch: []json.RawMessage{initialized, stmt("failed", func(m map[string]any) { result(m)["success"] = true })}, want: "9.5.2.0-2", refused: 1},
		{name: "success on terminated", batch: []json.RawMessage{initialized, stmt("terminated", func(m map[string]any) { result(m)["success"] = true })}, want: "9.5.2.0-3", refused: 1},
		{name: "completed without completion", batch: []json.RawMessage{initialized, stmt("completed", func(m map[string]any) { delete(result(m), "completion"); dropMoveOn(m) })}, want: "9.5.3.0-1", refused: 1},
		{name: "completion on passed", batch: []json.RawMessage{initialized, stmt("passed", func(m map[string]any) { result(m)["completion"] = true })}, want: "9.5.3.0-2", refused: 1},
		{name: "terminated without duration", batch: []json.RawMessage{initialized, stmt("terminated", func(m map[string]any) { delete(m, "result") })}, want: "9.5.4.1-1", refused: 1},
		{name: "success without the moveOn category", batch: []json.RawMessage{initialized, stmt("passed", dropMoveOn)}, want: "9.6.2.2-1", refused: 1},
		{name: "the moveOn category without success or completion", batch: []json.RawMessage{initialized, stmt("terminated", func(m map[string]any) {
			cats := context(m)["contextActivities"].(map[string]any)
			cats["category"] = append(cats["category"].([]any), map[string]any{"id": CategoryMoveOn})
		})}, want: "9.6.2.2-2", refused: 1},
		{name: "a scored judgement without the masteryScore", batch: []json.RawMessage{initialized, stmt("passed", func(m map[string]any) { delete(ext(m), ExtMasteryScore) })}, want: "9.6.3.2-2", refused: 1},
		{name: "another masteryScore", batch: []json.RawMessage{initialized, stmt("passed", func(m map[string]any) { ext(m)[ExtMasteryScore] = 0.5 })}, want: "9.6.3.2-2", refused: 1},
		{name: "passed below the masteryScore", batch: []json.RawMessage{initialized, stmt("passed", func(m map[string]any) { result(m)["score"] = map[string]any{"scaled": 0.7} })}, want: "9.3.4.0-2", refused: 1},
		{name: "failed at the masteryScore", batch: []json.RawMessage{initialized, stmt("failed", func(m map[string]any) { result(m)["score"] = map[string]any{"scaled": 0.8} })}, want: "9.3.5.0-2", refused: 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			mode := c.mode
			if mode == "" {
				mode = "Normal"
			}
			batch := plain(len(c.batch))
			if c.voiding {
				batch[0].Voids = "00000000-0000-4000-8000-000000000099"
			}
			sess, au := registration.CMI5SessionFold{PrefsRead: !c.noPrefs}, c.au
			err := Check(launch(mode, 0.8), "account:"+homePage+"|"+learner, !c.preview, &sess, &au, c.batch, batch)
			if c.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if !errors.Is(err, access.ErrForbidden) {
				t.Fatalf("got %v, want a refusal of %s", err, c.want)
			}
			if msg := err.Error(); !strings.Contains(msg, "cmi5 "+c.want+":") || !strings.Contains(msg, fmt.Sprintf("statements[%d]", c.refused)) {
				t.Errorf("refusal %q, want requirement %s of statements[%d]", msg, c.want, c.refused)
			}
		})
	}
}

// TestCheckCounts: a batch's own defined statements count in the session's and the AU's fold
// as they pass, so a later batch is held to them.
func TestCheckCounts(t *testing.T) {
	sess, au := registration.CMI5SessionFold{PrefsRead: true}, registration.ActivityFold{}
	batch := []json.RawMessage{stmt("initialized", nil), stmt("completed", nil), stmt("passed", nil), stmt("terminated", nil)}
	if err := Check(launch("Normal", 0.8), "account:"+homePage+"|"+learner, true, &sess, &au, batch, plain(len(batch))); err != nil {
		t.Fatal(err)
	}
	want := []string{rollup.VerbInitialized, rollup.VerbCompleted, rollup.VerbPassed, rollup.VerbTerminated}
	if !slices.Equal(sess.Verbs, want) || !sess.Ended || !au.Completed || !au.Passed {
		t.Errorf("fold after the batch: session %+v, AU %+v", sess, au)
	}
}

// plain is the record store's view of n statements that void nothing.
func plain(n int) []*statements.Statement {
	out := make([]*statements.Statement, n)
	for i := range out {
		out[i] = &statements.Statement{}
	}
	return out
}
