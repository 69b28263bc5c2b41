package indexer

import (
	"math"
	"slices"
	"testing"
)

func TestFuse(t *testing.T) {
	h := func(id string, loc ...string) Hit {
		x := Hit{ContentID: id, Version: 1, Score: 99}
		if len(loc) > 0 {
			x.Location = loc[0]
		}
		return x
	}
	for _, tc := range []struct {
		name          string
		lex, sem      []Hit
		k             int
		want          []string
		wantScore     []float64
		wantStrengths []float64
	}{
		{"both empty", nil, nil, 60, nil, nil, nil},
		{"one list keeps its order", []Hit{h("a"), h("b")}, nil, 60, []string{"a", "b"},
			[]float64{1.0 / 61, 1.0 / 62}, []float64{0.5, 61.0 / 124}},
		{"first in both", []Hit{h("a")}, []Hit{h("a")}, 60, []string{"a"}, []float64{2.0 / 61}, []float64{1}},
		{"found by both beats first of one", []Hit{h("a"), h("b")}, []Hit{h("c"), h("b")}, 60,
			[]string{"b", "a", "c"}, []float64{2.0 / 62, 1.0 / 61, 1.0 / 61}, nil},
		{"equal fused scores fall to the tie-break", []Hit{h("z"), h("y")}, []Hit{h("y"), h("z")}, 60,
			[]string{"y", "z"}, []float64{1.0/61 + 1.0/62, 1.0/61 + 1.0/62}, nil},
		{"small k favours the top ranks", []Hit{h("a"), h("b"), h("c")}, []Hit{h("c"), h("d")}, 1,
			[]string{"c", "a", "b", "d"}, []float64{1.0/4 + 1.0/2, 1.0 / 2, 1.0 / 3, 1.0 / 3}, nil},
		{"locations are distinct hits", []Hit{h("a", "p1"), h("a", "p2")}, []Hit{h("a", "p2")}, 60,
			[]string{"a@p2", "a@p1"}, []float64{1.0/62 + 1.0/61, 1.0 / 61}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lex, sem := slices.Clone(tc.lex), slices.Clone(tc.sem)
			got := Fuse(tc.lex, tc.sem, tc.k)
			if !slices.EqualFunc(lex, tc.lex, func(a, b Hit) bool { return a.ContentID == b.ContentID && a.Score == b.Score }) ||
				!slices.EqualFunc(sem, tc.sem, func(a, b Hit) bool { return a.ContentID == b.ContentID && a.Score == b.Score }) {
				t.Error("Fuse modified its arguments")
			}
			var ids []string
			for _, x := range got {
				s := x.ContentID
				if x.Location != "" {
					s += "@" + x.Location
				}
				ids = append(ids, s)
			}
			if !slices.Equal(ids, tc.want) {
				t.Fatalf("order %q, want %q", ids, tc.want)
			}
			for i, x := range got {
				if math.Abs(x.Score-tc.wantScore[i]) > 1e-15 {
					t.Errorf("%s: score %v, want %v", ids[i], x.Score, tc.wantScore[i])
				}
				best := 2 / float64(tc.k+1)
				if x.MatchStrength == nil || math.Abs(*x.MatchStrength-x.Score/best) > 1e-15 || *x.MatchStrength > 1 {
					t.Errorf("%s: strength %v, want %v", ids[i], x.MatchStrength, x.Score/best)
				}
				if tc.wantStrengths != nil && math.Abs(*x.MatchStrength-tc.wantStrengths[i]) > 1e-12 {
					t.Errorf("%s: strength %v, want %v", ids[i], *x.MatchStrength, tc.wantStrengths[i])
				}
			}
		})
	}
}

func TestFuseText(t *testing.T) {
	lex := []Hit{{ContentID: "b"}, {ContentID: "a", Text: &ChunkText{Location: "l", Text: "lexical"}}}
	sem := []Hit{{ContentID: "a", Text: &ChunkText{Location: "s", Text: "semantic"}}}
	got := Fuse(lex, sem, RRFK)
	for _, x := range got {
		if x.ContentID == "a" && (x.Text == nil || x.Text.Text != "semantic") {
			t.Errorf("a's text %+v, want the semantic one (ranked better there)", x.Text)
		}
	}
	sem[0].Text.Text = "changed"
	if got[0].Text.Text != "semantic" {
		t.Error("Fuse shares Text with its argument")
	}
}

func TestHybridParts(t *testing.T) {
	q := Query{Tenant: "t", Type: Hybrid, Term: "carrot cake", Vector: []float32{1}, Skip: 95, Limit: 10, ReturnText: true}
	lq, sq := HybridParts(q)
	if lq.Type != Lexical || !lq.AnyTerm || lq.Vector != nil || lq.Skip != 0 || lq.Limit != 105 || !lq.ReturnText || lq.Term != q.Term {
		t.Errorf("lexical part %+v", lq)
	}
	if sq.Type != Semantic || sq.Term != "" || sq.Limit != 105 || len(sq.Vector) != 1 {
		t.Errorf("semantic part %+v", sq)
	}
	if err := lq.Validate(); err != nil {
		t.Error(err)
	}
	if err := sq.Validate(); err != nil {
		t.Error(err)
	}
	q.Term, q.Skip = `"carrot cake"`, 0
	if lq, _ = HybridParts(q); lq.AnyTerm || lq.Limit != HybridDepth {
		t.Errorf("phrase part %+v: want no AnyTerm, depth %d", lq, HybridDepth)
	}
	q.Skip, q.Limit = MaxLimit, MaxLimit
	if lq, _ = HybridParts(q); lq.Limit != MaxLimit {
		t.Errorf("deep page: part limit %d, want %d", lq.Limit, MaxLimit)
	}
}
