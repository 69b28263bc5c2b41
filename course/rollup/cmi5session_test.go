package rollup_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/lectern-lms/lectern/course/registration"
	"github.com/lectern-lms/lectern/course/rollup"
)

// TestFoldCMI5Sessions: the fold keeps, per cmi5 session, the launched statement's time and
// AU, the cmi5 defined verbs in first-seen order, the latest time and the end; satisfied
// statements mark their object; folding the same statements again changes nothing.
func TestFoldCMI5Sessions(t *testing.T) {
	st := func(id, verb, object, stored string, defined bool) json.RawMessage {
		ctx := map[string]any{"extensions": map[string]any{rollup.CMI5SessionExt: "s1"}}
		if defined {
			ctx["contextActivities"] = map[string]any{"category": []any{map[string]any{"id": rollup.CMI5Category}}}
		}
		b, _ := json.Marshal(map[string]any{"id": id, "verb": map[string]any{"id": verb}, "object": map[string]any{"id": object},
			"stored": stored, "context": ctx})
		return b
	}
	raws := []json.RawMessage{
		st("1", rollup.VerbLaunched, "urn:au", "2026-01-01T00:00:00Z", true),
		st("2", rollup.VerbInitialized, "urn:au", "2026-01-01T00:00:01Z", true),
		st("3", "http://adlnet.gov/expapi/verbs/experienced", "urn:au", "2026-01-01T00:00:02Z", false),
		st("4", rollup.VerbCompleted, "urn:au", "2026-01-01T00:00:03Z", true),
		st("5", rollup.VerbSatisfied, "urn:block", "2026-01-01T00:00:03Z", true),
		st("6", rollup.VerbTerminated, "urn:au", "2026-01-01T00:00:04Z", true),
	}
	var f registration.StatementFold
	if !rollup.FoldStatements(&f, raws) {
		t.Fatal("nothing folded")
	}
	s := f.CMI5Sessions["s1"]
	if s == nil || s.ActivityID != "urn:au" || s.Launched.Second() != 0 || s.Last.Second() != 4 || !s.Ended ||
		!slices.Equal(s.Verbs, []string{rollup.VerbInitialized, rollup.VerbCompleted, rollup.VerbTerminated}) {
		t.Fatalf("session: %+v", s)
	}
	if a := f.Activities["urn:block"]; a == nil || !a.Satisfied {
		t.Errorf("satisfied mark: %+v", a)
	}
	if rollup.FoldStatements(&f, raws) {
		t.Error("folding the same statements again changed the fold")
	}
}
