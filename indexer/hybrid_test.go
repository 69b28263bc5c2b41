package indexer

import (
	"fmt"
	"math"
	"slices"
	"testing"
)

func TestFuse(t *testing.T) {
	h := func(id string, score float64, loc ...string) Hit {
		x := Hit{ContentID: id, Version: 1, Score: score}
		if len(loc) > 0 {
			x.Location = loc[0]
		}
		return x
	}
	for _, tc := range []struct {
		name      string
		lex, sem  []Hit
		w         float64
		want      []string
		wantScore []float64
	}{
		{"both empty", nil, nil, 0.3, nil, nil},
		{"one list keeps its order, scaled by its best", []Hit{h("a", 300), h("b", 150)}, nil, 0.3,
			[]string{"a", "b"}, []float64{0.3, 0.15}},
		{"first in both scores 1", []Hit{h("a", 7)}, []Hit{h("a", 0.4)}, 0.3, []string{"a"}, []float64{1}},
		{"found by both beats first of one", []Hit{h("a", 10), h("b", 8)}, []Hit{h("c", 0.5), h("b", 0.45)}, 0.3,
			[]string{"b", "c", "a"}, []float64{0.3*0.8 + 0.7*0.9, 0.7, 0.3}},
		{"a hit far ahead in one list stays ahead (ranks would not say so)",
			[]Hit{h("a", 100), h("b", 1)}, []Hit{h("b", 0.50), h("a", 0.49)}, 0.3,
			[]string{"a", "b"}, []float64{0.3 + 0.7*0.98, 0.3*0.01 + 0.7}},
		{"equal fused scores fall to the tie-break", []Hit{h("z", 2), h("y", 1)}, []Hit{h("y", 0.5), h("z", 0.25)}, 0.5,
			[]string{"y", "z"}, []float64{0.75, 0.75}},
		{"a negative cosine counts as 0", nil, []Hit{h("a", 0.5), h("b", -0.2)}, 0.3,
			[]string{"a", "b"}, []float64{0.7, 0}},
		{"a list whose best is 0 adds nothing", []Hit{h("a", 1)}, []Hit{h("b", 0), h("a", 0)}, 0.3,
			[]string{"a", "b"}, []float64{0.3, 0}},
		{"weight 1 is the lexical list alone", []Hit{h("a", 2), h("b", 1)}, []Hit{h("b", 0.9)}, 1,
			[]string{"a", "b"}, []float64{1, 0.5}},
		{"locations are distinct hits", []Hit{h("a", 4, "p1"), h("a", 2, "p2")}, []Hit{h("a", 0.8, "p2")}, 0.3,
			[]string{"a@p2", "a@p1"}, []float64{0.15 + 0.7, 0.3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lex, sem := slices.Clone(tc.lex), slices.Clone(tc.sem)
			got := Fuse(tc.lex, tc.sem, tc.w)
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
				if math.Abs(x.Score-tc.wantScore[i]) > 1e-12 {
					t.Errorf("%s: score %v, want %v", ids[i], x.Score, tc.wantScore[i])
				}
				if x.MatchStrength == nil || *x.MatchStrength != x.Score {
					t.Errorf("%s: strength %v, want its score %v", ids[i], x.MatchStrength, x.Score)
				}
			}
		})
	}
}

func TestFuseText(t *testing.T) {
	lex := []Hit{{ContentID: "b", Score: 2}, {ContentID: "a", Score: 1, Text: &ChunkText{Location: "l", Text: "lexical"}}}
	sem := []Hit{{ContentID: "a", Score: 0.5, Text: &ChunkText{Location: "s", Text: "semantic"}}}
	got := Fuse(lex, sem, 0.3)
	for _, x := range got {
		if x.ContentID == "a" && (x.Text == nil || x.Text.Text != "semantic") {
			t.Errorf("a's text %+v, want the semantic one (ranked better there)", x.Text)
		}
	}
	sem[0].Text.Text = "changed"
	for _, x := range got {
		if x.ContentID == "a" && x.Text.Text != "semantic" {
			t.Error("Fuse shares Text with its argument")
		}
	}
}
func TestHybridLexicalWeight(t *testing.T) {
	for _, tc := range []struct {
		term string
		want float64
	}{
		{"ERR4401", 0.7},
		{"the", 0.7}, // no lexeme counts as one
		{"router reset", 0.5},
		{"reset the Router, resetting routers", 0.5}, // stop words and repeated lexemes do not count
		{`"reset the router"`, 0.5},                  // a phrase counts its lexemes
		{"one two three four five six seven eight", 0.35},
	} {
		if got := HybridLexicalWeight(tc.term); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("HybridLexicalWeight(%q) = %v, want %v", tc.term, got, tc.want)
		}
	}
	var long string
	for i := range 40 {
		long += fmt.Sprintf(" x%d", i)
	}
	if got := HybridLexicalWeight(long); math.Abs(got-0.5*(0.3+0.01)) > 1e-12 {
		t.Errorf("forty lexemes: %v, want %v", got, 0.5*(0.3+0.01))
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
