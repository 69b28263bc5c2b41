package eval

import (
	"math"
	"slices"
)

// Relevance judgements: for one query, the gain of each judged document id (0 or absent:
// not relevant). Binary collections use gain 1.
type Judgements map[string]float64

// NDCG returns nDCG@k of a ranking (document ids, best first): the discounted cumulative
// gain of its first k, Σ gain/log2(rank+1), divided by that of the ideal ranking of the
// judged documents. It is 0 when no document has a positive gain.
func NDCG(ranked []string, rel Judgements, k int) float64 {
	var dcg float64
	for i, id := range ranked[:min(k, len(ranked))] {
		if g := rel[id]; g > 0 {
			dcg += g / math.Log2(float64(i+2))
		}
	}
	var gains []float64
	for _, g := range rel {
		if g > 0 {
			gains = append(gains, g)
		}
	}
	slices.SortFunc(gains, func(a, b float64) int { return cmpDesc(a, b) })
	var ideal float64
	for i, g := range gains[:min(k, len(gains))] {
		ideal += g / math.Log2(float64(i+2))
	}
	if ideal == 0 {
		return 0
	}
	return dcg / ideal
}

func cmpDesc(a, b float64) int {
	switch {
	case a > b:
		return -1
	case a < b:
		return 1
	}
	return 0
}

// RecallAt returns the share of the relevant documents (positive gain) among the first k of
// a ranking, 0 when there are none.
func RecallAt(ranked []string, rel Judgements, k int) float64 {
	n := 0
	for _, g := range rel {
		if g > 0 {
			n++
		}
	}
	if n == 0 {
		return 0
	}
	found := 0
	for _, id := range ranked[:min(k, len(ranked))] {
		if rel[id] > 0 {
			found++
		}
	}
	return float64(found) / float64(n)
}

// ReciprocalRank returns 1/rank of the first relevant document among the first k of a
// ranking, 0 when none is there (MRR@k is its mean over the queries).
func ReciprocalRank(ranked []string, rel Judgements, k int) float64 {
	for i, id := range ranked[:min(k, len(ranked))] {
		if rel[id] > 0 {
			return 1 / float64(i+1)
		}
	}
	return 0
}
