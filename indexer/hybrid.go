package indexer

import (
	"context"
	"sync"
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
// Fuse combines the two ranked lists by reciprocal-rank fusion: a hit at rank r (1-based) in
// a list earns 1/(RRFK + r), and a hit's fused score is the sum over the lists holding it.
// Ranks, not scores, are fused, so the lexical scores (unbounded) and the cosines (which
// bunch up between 0.2 and 0.6) need no normalisation, and a hit both lists find ranks above
// one only a single list finds at a similar rank. docs/search.md, "Hybrid search", has the
// measurements this choice rests on.
//
// Both backends return the same lexical ranking (score.go) and, by cosine, the same semantic
// one, and Fuse is a pure function of the two, so the hybrid ranking is the same on both.

// RRFK is the rank constant k of reciprocal-rank fusion (Cormack, Clarke and Büttcher,
// SIGIR 2009, who found 60 a robust choice; docs/search.md compares others).
const RRFK = 60

// HybridDepth is the least number of hits of each part a hybrid search fuses; a query whose
// page ends deeper fuses that many.
const HybridDepth = 100

// Fuse returns the reciprocal-rank fusion of two ranked hit lists of the same query scope
// (each sorted best first, as Index.Search returns them): one hit per distinct (ContentID,
// Version, Location), whose Score is the sum over the lists of 1/(k + rank) and whose
// MatchStrength is that score divided by the best possible one, 2/(k+1), so in [0, 1]: 1
// for a hit first in both lists, 0.5 for one first in a single list. A hit's Text is that of
// the list ranking it better (lexical on a tie). The result is sorted by Compare. Fuse
// modifies neither argument; k must be positive.
func Fuse(lexical, semantic []Hit, k int) []Hit {
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
	add := func(hits []Hit) {
		for i, h := range hits {
			r := i + 1
			s := 1 / float64(k+r)
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
	add(lexical)
	add(semantic)
	best := 2 / float64(k+1)
	hits := make([]Hit, len(out))
	for i, f := range out {
		f.hit.MatchStrength = Strength(f.hit.Score / best)
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
// Fuse with RRFK, and returns the page q.Skip and q.Limit select. Backends call it from
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
	return Page(Fuse(lex, sem, RRFK), q), nil
}
