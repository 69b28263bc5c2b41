package skilleval

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/lectern-lms/lectern/content/taxonomy"
)

// TestSet validates the evaluation set: every expected skill is a taxonomy name, no item
// repeats one, each item expects 2 to 5 (so recall@5 can reach 1), and the taxonomy survives
// the import parser unchanged (distinct names, nothing trimmed or folded).
func TestSet(t *testing.T) {
	if len(Set) != 12 {
		t.Errorf("%d descriptions, docs/benchmarks.md reports 12", len(Set))
	}
	for i, it := range Set {
		if strings.TrimSpace(it.Text) == "" {
			t.Errorf("item %d: empty text", i)
		}
		if n := len(it.Skills); n < 2 || n > 5 {
			t.Errorf("item %d: %d expected skills, want 2 to 5", i, n)
		}
		for j, s := range it.Skills {
			if !slices.Contains(Taxonomy, s) {
				t.Errorf("item %d: expected skill %q is not in the taxonomy", i, s)
			}
			if slices.Contains(it.Skills[:j], s) {
				t.Errorf("item %d: %q expected twice", i, s)
			}
		}
	}
	var csv bytes.Buffer
	csv.WriteString("preferredLabel\n")
	for _, s := range Taxonomy {
		csv.WriteString(s + "\n")
	}
	got, err := taxonomy.Parse(csv.Bytes(), "preferredLabel")
	if err != nil || !slices.Equal(got, Taxonomy) {
		t.Fatalf("taxonomy through the import parser: %d names (want %d), %v", len(got), len(Taxonomy), err)
	}
}

func TestScore(t *testing.T) {
	got := make([][]string, len(Set))
	for i, it := range Set {
		got[i] = it.Skills
	}
	if s := Score(got, 5, Exact); s.Precision != 1 || s.Recall != 1 {
		t.Fatalf("the expected answers: %v", s)
	}
	if s := Score(make([][]string, len(Set)), 5, Exact); s.Precision != 0 || s.Recall != 0 {
		t.Fatalf("no answers: %v", s)
	}
	// One right answer given twice (it counts once) and a wrong one on the first item: P 1/3
	// and R 1/4 there, the other eleven perfect.
	got[0] = []string{Set[0].Skills[0], Set[0].Skills[0], "weld metal"}
	s := Score(got, 5, Exact)
	if wantP, wantR := (11+1.0/3)/12, (11+1.0/4)/12; math.Abs(s.Precision-wantP) > 1e-9 || math.Abs(s.Recall-wantR) > 1e-9 {
		t.Fatalf("partly right: %v, want P %.4f R %.4f", s, wantP, wantR)
	}
	if !Overlap("Sql queries", "write SQL queries") || Overlap("chest compressions", "perform CPR") {
		t.Fatal("overlap")
	}
}

func TestKeywordBaseline(t *testing.T) {
	got := KeywordBaseline("We bake bread and cook meals every morning.", Taxonomy, 5)
	if len(got) < 2 || !slices.Contains(got[:2], "bake bread") || !slices.Contains(got[:2], "cook meals") {
		t.Fatalf("baseline %q: want bake bread and cook meals first (all their words occur)", got)
	}
	if got := KeywordBaseline("Nothing relevant here.", Taxonomy, 5); len(got) != 0 {
		t.Fatalf("baseline without shared words: %q", got)
	}
}
