package runtime

import (
	"context"
	"encoding/json"
	"testing"
)

// TestLearnerObjectives: a learner's global objectives are one record per learner and
// tenant, created on the first update and changed in place after it; a learner with none
// reads nil, and an update that returns nil stores nothing.
func TestLearnerObjectives(t *testing.T) {
	ctx := context.Background()
	s := testStore(t)
	read := func(tenant, learner string) string {
		t.Helper()
		raw, err := s.LearnerObjectives(ctx, tenant, learner)
		if err != nil {
			t.Fatal(err)
		}
		return string(raw)
	}
	update := func(tenant, learner string, fn func(old json.RawMessage) (json.RawMessage, error)) {
		t.Helper()
		if err := s.UpdateLearnerObjectives(ctx, tenant, learner, fn); err != nil {
			t.Fatal(err)
		}
	}
	set := func(v string) func(json.RawMessage) (json.RawMessage, error) {
		return func(json.RawMessage) (json.RawMessage, error) { return json.RawMessage(v), nil }
	}
	if got := read("t1", "ann"); got != "" {
		t.Fatalf("before any update: %q", got)
	}
	update("t1", "ann", set(`{"g":{"satisfiedStatus":true}}`))
	var seen string
	update("t1", "ann", func(old json.RawMessage) (json.RawMessage, error) { seen = string(old); return nil, nil })
	if seen != `{"g":{"satisfiedStatus":true}}` {
		t.Errorf("the second update saw %q", seen)
	}
	update("t1", "ann", set(`{"g":{"satisfiedStatus":true,"satisfied":true}}`))
	for _, tc := range []struct{ tenant, learner, want string }{
		{"t1", "ann", `{"g":{"satisfiedStatus":true,"satisfied":true}}`},
		{"t1", "bob", ""},
		{"t2", "ann", ""},
	} {
		if got := read(tc.tenant, tc.learner); got != tc.want {
			t.Errorf("%s/%s: %q, want %q", tc.tenant, tc.learner, got, tc.want)
		}
	}
}
