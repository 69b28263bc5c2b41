package bleve

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	index "github.com/blevesearch/bleve_index_api"

	"github.com/lectern-lms/lectern/indexer"
	"github.com/lectern-lms/lectern/mappings/analysis"
)

// phrase finds the chunks holding the phrase from the postings of its terms in field
// "text_phrase", with their positions: a conjunction of the terms' postings, led by the
// rarest term, then, in each chunk holding every term, the positions where the terms stand
// in order. Their number is the score, PhraseOccurrences of the chunk's text: "text_phrase"
// holds one term per word of analysis.Tokens (the lexeme, or StopPlaceholder for a stop
// word) at consecutive positions, so the positions give the same count without loading and
// re-analysing the text. The filters are applied from the version table, as in
// keywordCandidates. The caller holds ix.mu.
func (ix *Index) phrase(ctx context.Context, q indexer.Query, phrase string) ([]indexer.Hit, error) {
	terms := analysis.PhraseTerms(phrase)
	if !slices.ContainsFunc(terms, func(s string) bool { return s != analysis.StopPlaceholder }) {
		return []indexer.Hit{}, nil
	}
	r, err := ix.reader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	// One reader per distinct term; at[j] is the reader of terms[j].
	type postings struct {
		tfr index.TermFieldReader
		d   *index.TermFieldDoc
		pos []uint64 // positions in the current document, sorted
	}
	var ps []*postings
	at := make([]int, len(terms))
	defer func() {
		for _, p := range ps {
			p.tfr.Close()
		}
	}()
	for j, t := range terms {
		if k := slices.Index(terms, t); k < j {
			at[j] = at[k]
			continue
		}
		tfr, err := r.TermFieldReader(ctx, []byte(t), "text_phrase", true, false, true)
		if err != nil {
			return nil, fmt.Errorf("indexer/bleve: postings: %w", err)
		}
		at[j] = len(ps)
		ps = append(ps, &postings{tfr: tfr})
	}
	order := slices.Clone(ps)
	slices.SortStableFunc(order, func(a, b *postings) int { return cmp.Compare(a.tfr.Count(), b.tfr.Count()) })
	lead, rest := order[0], order[1:]

	var hits []indexer.Hit
	best := map[*version]int{} // tenant-wide: index in hits of the version's best chunk
	var target index.IndexInternalID
	next := func(p *postings, advance bool) (bool, error) {
		var err error
		if advance {
			p.d, err = p.tfr.Advance(target, p.d)
		} else {
			p.d, err = p.tfr.Next(p.d)
		}
		if err != nil {
			return false, fmt.Errorf("indexer/bleve: postings: %w", err)
		}
		return p.d != nil, nil
	}
	ok, err := next(lead, false)
	for n := 0; ok && err == nil; n++ {
		if n%1024 == 1023 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		doc := lead.d.ID.Value()
		// Bring every other term's postings to the lead's document; when one has none there,
		// the lead jumps to that one's next document instead.
		aligned := true
		for _, p := range rest {
			if p.d == nil || p.d.ID.Value() < doc {
				target = index.NewIndexInternalID(target, doc)
				if ok, err = next(p, true); !ok {
					break
				}
			}
			if p.d.ID.Value() > doc {
				target = index.NewIndexInternalID(target, p.d.ID.Value())
				ok, err = next(lead, true)
				aligned = false
				break
			}
		}
		if !ok || err != nil || !aligned {
			continue
		}
		for _, p := range ps {
			p.pos = p.pos[:0]
			for _, v := range p.d.Vectors {
				p.pos = append(p.pos, v.Pos)
			}
			slices.Sort(p.pos)
		}
		count := 0
		for _, start := range ps[at[0]].pos {
			j := 1
			for ; j < len(terms); j++ {
				if _, found := slices.BinarySearch(ps[at[j]].pos, start+uint64(j)); !found {
					break
				}
			}
			if j == len(terms) {
				count++
			}
		}
		if count > 0 {
			if err := ix.phraseHit(r, lead.d.ID, count, &q, &hits, best); err != nil {
				return nil, err
			}
		}
		ok, err = next(lead, false)
	}
	if err != nil {
		return nil, err
	}
	page := indexer.Page(indexer.Collapse(hits, q), q)
	if q.ReturnMatch {
		re := analysis.MatchRegex(phrase)
		for i := range page {
			page[i].Match = re
		}
	}
	return page, nil
}

// phraseHit adds the chunk document id, holding count occurrences of a phrase, to hits if q
// admits it; tenant-wide it keeps only each version's best chunk (best: index in hits), so
// that Collapse sorts versions, not chunks.
func (ix *Index) phraseHit(r index.IndexReader, id index.IndexInternalID, count int, q *indexer.Query, hits *[]indexer.Hit, best map[*version]int) error {
	ext, err := r.ExternalID(id)
	if err != nil {
		return fmt.Errorf("indexer/bleve: document id: %w", err)
	}
	if ext == "" || ext[0] != 'c' {
		return nil
	}
	v, i, ok := ix.chunkOf(ext)
	if !ok || !v.admits(q) {
		return nil
	}
	h := indexer.Hit{ContentID: v.contentID, Version: v.version, Location: v.locations[i], Score: float64(count)}
	if q.ContentID != "" {
		*hits = append(*hits, h)
		return nil
	}
	if b, ok := best[v]; !ok {
		best[v] = len(*hits)
		*hits = append(*hits, h)
	} else if indexer.Compare(h, (*hits)[b]) < 0 {
		(*hits)[b] = h
	}
	return nil
}
