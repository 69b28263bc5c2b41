package elastic

import (
	"context"
	"slices"
	"strings"

	"github.com/lectern-lms/lectern/indexer"
	"github.com/lectern-lms/lectern/mappings/analysis"
)

func (ix *Index) phrase(ctx context.Context, q indexer.Query, phrase string) ([]indexer.Hit, error) {
	terms := analysis.PhraseTerms(phrase)
	if !slices.ContainsFunc(terms, func(s string) bool { return s != analysis.StopPlaceholder }) {
		return nil, nil
	}
	// The terms are Go's, as in the documents (phraseField); the field's whitespace analyzer
	// only splits them apart again.
	mp := map[string]any{"match_phrase": map[string]any{"phrase": strings.Join(terms, " ")}}
	query := map[string]any{"bool": map[string]any{"filter": scopeFilter(q, kindChunk), "must": mp}}
	page, ok, err := ix.phraseRanked(ctx, q, query, terms)
	if err == nil && !ok {
		// Elasticsearch's order is not the occurrence counts' (it should be): rank in Go.
		page, err = ix.phraseAll(ctx, q, query, terms)
	}
	if err != nil {
		return nil, err
	}
	if q.ReturnMatch {
		re := analysis.MatchRegex(phrase)
		for i := range page {
			page[i].Match = re
		}
	}
	return page, nil
}

// phraseRanked returns the page of a phrase search as Elasticsearch ranks it, with the
// occurrence counts as scores; ok is false when the counts do not fall as the scores do.
func (ix *Index) phraseRanked(ctx context.Context, q indexer.Query, query map[string]any, terms []string) (page []indexer.Hit, ok bool, err error) {
	raw, err := ix.ranked(ctx, q, query, false, ix.phraseSearchType)
	if err != nil {
		return nil, false, err
	}
	// Equal scores mean equal occurrence counts: count them in one hit per score, whose
	// texts a second request fetches (cheaper than the text of every hit in the first).
	reps := map[float64]int{} // score → index in raw of the hit to count in
	var keys []chunkKey
	for i, h := range raw {
		if _, ok := reps[h.Score]; !ok {
			reps[h.Score] = i
			keys = append(keys, chunkKey{h.Source.ContentID, h.Source.Version, h.Source.Location})
		}
	}
	texts, err := ix.chunkTexts(ctx, q, keys)
	if err != nil {
		return nil, false, err
	}
	count := make(map[float64]int, len(reps))
	for s, i := range reps {
		h := raw[i]
		text, found := texts[chunkKey{h.Source.ContentID, h.Source.Version, h.Source.Location}]
		if !found {
			return nil, false, nil // deleted since: phraseAll sees the index as it is now
		}
		count[s] = indexer.PhraseOccurrences(text, terms)
	}
	page = make([]indexer.Hit, len(raw))
	for i, h := range raw {
		page[i] = indexer.Hit{ContentID: h.Source.ContentID, Version: h.Source.Version, Location: h.Source.Location,
			Score: float64(count[h.Score])}
		if page[i].Score == 0 || i > 0 && (page[i].Score > page[i-1].Score ||
			page[i].Score == page[i-1].Score && h.Score != raw[i-1].Score) {
			return nil, false, nil
		}
	}
	dropLocations(q, page)
	return page, true, nil
}

// phraseAll is phrase search by counting the occurrences in every hit, in Go.
func (ix *Index) phraseAll(ctx context.Context, q indexer.Query, query map[string]any, terms []string) ([]indexer.Hit, error) {
	raw, err := ix.collectAll(ctx, map[string]any{"query": query, "_source": chunkTextSource,
		"sort": []any{map[string]any{"_shard_doc": "asc"}}})
	if err != nil {
		return nil, err
	}
	hits := make([]indexer.Hit, len(raw))
	parallel(len(raw), func(i int) {
		h := raw[i]
		hits[i] = indexer.Hit{ContentID: h.Source.ContentID, Version: h.Source.Version, Location: h.Source.Location,
			Score: float64(indexer.PhraseOccurrences(h.Source.Text, terms))}
	})
	return indexer.Page(indexer.Collapse(hits, q), q), nil
}
