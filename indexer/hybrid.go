package indexer

import (
	"context"
	"sync"

	"github.com/lectern-lms/lectern/mappings/analysis"
)

// Hybrid search (a Lectern extension of the spec's search types).
//
// Neither ranking is good alone: the spec's keyword search needs every lexeme, so a question
// of ten words matches almost nothing, and semantic search misses the exact term (a code, a
// name) a learner types. A hybrid search runs two searches of the same scope and fuses their
// rankings:
//
//   - lexical evidence: a keyword search of the term with AnyTerm (every version holding any
//     lexeme, ranked by KeywordScores: idf-weighted, saturating term frequencies, as BM25
//     without length normalisation), or its phrase search when the term is in double quotes;
//   - semantic evidence: a semantic search of the query vector (cosine).
//
// Fuse combines the two lists by a convex combination of their scores, each normalised by the
// best score of its list: a hit's fused score is
//
//	w × lexical/best lexical + (1 − w) × max(cosine, 0)/best cosine,
//
// a hit missing from a list scoring 0 there. Dividing by the best score (and taking 0, not the
// list's worst score, as the floor) is the "theoretical minimum-maximum" normalisation of
// Bruch, Gai and Ingber ("An analysis of fusion functions for hybrid retrieval", ACM TOIS
// 2023): unlike min-max over the list it does not depend on how deep the list goes, and unlike
// reciprocal-rank fusion it keeps how far apart the scores are, so a hit far ahead in one
// list stays ahead.
//
// The lexical weight w depends on the query's length (HybridLexicalWeight): a query of one or
// two words is a keyword — a code, a name, a term of art the model does not know — and the
// document holding it must come first (w 0.7 for one lexeme); a question of a sentence is
// better understood by the model (w near 0.3); and in a paragraph-long query every common
// word is a lexeme, so the any-term keyword ranking gets noisier still (w falls below 0.3
// past 20 lexemes). docs/search.md, "Hybrid search", has the measurements on five public
// collections and on known-item queries this choice rests on, with RRF and the other fusions
// measured beside it.
//
// Both backends return the same lexical scores to the bit (score.go) and, by cosine, the same
// semantic ranking, and Fuse is a pure function of the two, so the hybrid ranking is the same
// on both.

// HybridLexicalWeight returns the weight w of the lexical evidence in a hybrid search of term
// (the semantic evidence weighs 1 − w): with n the number of distinct lexemes of the term
// (stop words do not count; at least 1),
//
//	w = min(1, 20/n) × (0.3 + 0.4/n)
//
// 0.7 for one lexeme, 0.5 for two, 0.35 for eight, 0.32 for twenty, 0.16 for forty.
func HybridLexicalWeight(term string) float64 {
	phrase, _ := Phrase(term)
	n := float64(max(1, len(analysis.Lexemes(phrase))))
	return min(1, 20/n) * (0.3 + 0.4/n)
}

// HybridDepth is the least number of hits of each part a hybrid search fuses; a query whose
// page ends deeper fuses that many.
const HybridDepth = 100

// Fuse returns the fusion (see above) of two ranked hit lists of the same query scope (each
// sorted best first, as Index.Search returns them, so each list's best score is its first),
// with lexical weight w in [0, 1] (HybridLexicalWeight): one hit per distinct (ContentID, Version, Location), whose
// Score is the fused score, in [0, 1], and MatchStrength the same: 1 for a hit first in both
// lists, w for one first in the lexical list alone. A list whose best score is not positive
// adds nothing. A hit's Text is that of the list ranking it better (lexical on a tie). The
// result is sorted by Compare. Fuse modifies neither argument.
func Fuse(lexical, semantic []Hit, w float64) []Hit {
	type key struct {
		id       string
		version  int
		location string
	}
	type fused struct {
		hit  Hit
		rank int // best rank so far, for Text
	}
	at := map[key]int{}
	var out []fused
	add := func(hits []Hit, weight float64) {
		best := 0.0
		if len(hits) > 0 {
			best = hits[0].Score
		}
		for i, h := range hits {
			r := i + 1
			s := 0.0
			if best > 0 {
				s = weight * max(h.Score, 0) / best
			}
			kk := key{h.ContentID, h.Version, h.Location}
			j, ok := at[kk]
			if !ok {
				at[kk] = len(out)
				out = append(out, fused{hit: Hit{ContentID: h.ContentID, Version: h.Version, Location: h.Location,
					Text: cloneText(h.Text), Score: s}, rank: r})
				continue
			}
			out[j].hit.Score += s
			if r < out[j].rank {
				out[j].rank = r
				if h.Text != nil {
					out[j].hit.Text = cloneText(h.Text)
				}
			}
		}
	}
	add(lexical, w)
	add(semantic, 1-w)
	hits := make([]Hit, len(out))
	for i, f := range out {
		f.hit.MatchStrength = Strength(f.hit.Score)
		hits[i] = f.hit
	}
	Sort(hits)
	return hits
}

func cloneText(t *ChunkText) *ChunkText {
	if t == nil {
		return nil
	}
	c := *t
	return &c
}

// HybridParts returns the two searches a hybrid query runs, each asking for the first depth
// hits of the scope: the lexical part (keyword with AnyTerm, or phrase) and the semantic one.
func HybridParts(q Query) (lexical, semantic Query) {
	depth := min(MaxLimit, max(HybridDepth, q.Skip+q.PageSize()))
	q.Skip, q.Limit, q.ReturnMatch = 0, depth, false
	lexical, semantic = q, q
	lexical.Type, lexical.Vector = Lexical, nil
	if _, phrase := Phrase(q.Term); !phrase {
		lexical.AnyTerm = true
	}
	semantic.Type, semantic.Term = Semantic, ""
	return lexical, semantic
}

// SearchHybrid runs a Hybrid query on ix: its two parts (HybridParts) concurrently, then
// Fuse with the term's HybridLexicalWeight, and returns the page q.Skip and q.Limit select. Backends call it from
// Search for Hybrid queries, so every backend fuses the same way.
func SearchHybrid(ctx context.Context, ix Index, q Query) ([]Hit, error) {
	if err := q.Validate(); err != nil {
		return nil, err
	}
	lq, sq := HybridParts(q)
	var (
		wg         sync.WaitGroup
		lex        []Hit
		lerr, serr error
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		lex, lerr = ix.Search(ctx, lq)
	}()
	sem, serr := ix.Search(ctx, sq)
	wg.Wait()
	if lerr != nil {
		return nil, lerr
	}
	if serr != nil {
		return nil, serr
	}
	return Page(Fuse(lex, sem, HybridLexicalWeight(q.Term)), q), nil
}
