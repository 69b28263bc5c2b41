package eval

import (
	"math"
	"testing"
)

func TestMetrics(t *testing.T) {
	rel := Judgements{"a": 3, "b": 1, "c": 0, "d": 2}
	for _, tc := range []struct {
		name             string
		ranked           []string
		k                int
		ndcg, recall, rr float64
	}{
		{"ideal", []string{"a", "d", "b"}, 10, 1, 1, 1},
		{"nothing relevant", []string{"c", "x"}, 10, 0, 0, 0},
		{"empty", nil, 10, 0, 0, 0},
		{"second place", []string{"x", "a"}, 10,
			(3 / math.Log2(3)) / (3 + 2/math.Log2(3) + 1.0/2), 1.0 / 3, 0.5},
		{"cut off at k", []string{"x", "a"}, 1, 0, 0, 0},
		{"reversed", []string{"b", "d", "a"}, 10,
			(1 + 2/math.Log2(3) + 3.0/2) / (3 + 2/math.Log2(3) + 1.0/2), 1, 1},
	} {
		if got := NDCG(tc.ranked, rel, tc.k); math.Abs(got-tc.ndcg) > 1e-12 {
			t.Errorf("%s: nDCG %v, want %v", tc.name, got, tc.ndcg)
		}
		if got := RecallAt(tc.ranked, rel, tc.k); math.Abs(got-tc.recall) > 1e-12 {
			t.Errorf("%s: recall %v, want %v", tc.name, got, tc.recall)
		}
		if got := ReciprocalRank(tc.ranked, rel, tc.k); math.Abs(got-tc.rr) > 1e-12 {
			t.Errorf("%s: RR %v, want %v", tc.name, got, tc.rr)
		}
	}
	if NDCG([]string{"a"}, Judgements{}, 10) != 0 || RecallAt([]string{"a"}, nil, 10) != 0 {
		t.Error("no relevant documents: want 0")
	}
}
