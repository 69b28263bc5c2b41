package eval

import (
	"slices"
	"testing"

	"github.com/lectern-lms/lectern/mappings/analysis"
)

// TestSetDisjoint checks the evaluation set's design mechanically: enough passages and
// queries, unique ids, and no query sharing a content lexeme (mappings/analysis.Lexemes:
// stemmed, stop words dropped) with its target passage.
func TestSetDisjoint(t *testing.T) {
	if len(Set) < 60 {
		t.Errorf("the set has %d items, want at least 60", len(Set))
	}
	ids := map[string]bool{}
	for _, it := range Set {
		if ids[it.ID] {
			t.Errorf("id %q occurs twice", it.ID)
		}
		ids[it.ID] = true
		q := analysis.Lexemes(it.Query)
		if len(q) == 0 {
			t.Errorf("%s: query %q has no lexemes", it.ID, it.Query)
		}
		p := analysis.Lexemes(it.Passage)
		var shared []string
		for _, l := range q {
			if slices.Contains(p, l) {
				shared = append(shared, l)
			}
		}
		if len(shared) > 0 {
			t.Errorf("%s: query %q shares lexemes %q with its passage", it.ID, it.Query, shared)
		}
	}
}
