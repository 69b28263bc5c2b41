package elastic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/lectern-lms/lectern/indexer"
	"github.com/lectern-lms/lectern/mappings/analysis"
)

func (ix *Index) keyword(ctx context.Context, q indexer.Query) ([]indexer.Hit, error) {
	lexemes := analysis.Lexemes(q.Term)
	if len(lexemes) == 0 {
		return nil, nil
	}
	if len(lexemes) > maxRankedLexemes {
		return ix.keywordAll(ctx, q, lexemes)
	}
	scope := []any{scopeFilter(q, kindChunk)}
	present := make([]any, len(lexemes))
	for j, l := range lexemes {
		present[j] = termQuery("lex", l)
	}
	// With one lexeme every candidate holds it: N = df.
	weights := indexer.KeywordIDF(1, []int{1})
	if len(lexemes) > 1 {
		n, df, err := ix.keywordStats(ctx, scope, present)
		if err != nil {
			return nil, err
		}
		if slices.Contains(df, 0) && !q.AnyTerm {
			return nil, nil // no version in scope holds every lexeme
		}
		weights = indexer.KeywordIDF(n, df)
	}
	f := slices.Clone(scope)
	if len(lexemes) > 1 && !q.AnyTerm {
		for _, l := range lexemes {
			f = append(f, termQuery("vlex", l))
		}
	}
	var should []any
	for j, l := range lexemes {
		for b := range indexer.KeywordTFBits {
			should = append(should, map[string]any{"term": map[string]any{"lex": map[string]any{
				"value": lexBit(l, b), "boost": weights[j] * float64(int(1)<<b)}}})
		}
	}
	query := map[string]any{"bool": map[string]any{"filter": f, "should": should, "minimum_should_match": 1}}
	raw, err := ix.ranked(ctx, q, query, q.ReturnMatch && q.ContentID != "", "")
	if err != nil {
		return nil, err
	}
	page := make([]indexer.Hit, len(raw))
	for i, h := range raw {
		// Lucene's score is a float32: so is indexer.KeywordScore's.
		page[i] = indexer.Hit{ContentID: h.Source.ContentID, Version: h.Source.Version, Location: h.Source.Location,
			Score: float64(float32(h.Score))}
	}
	dropLocations(q, page)
	if !q.ReturnMatch {
		return page, nil
	}
	if q.ContentID != "" {
		for i := range page {
			page[i].Match = matchedTerms(raw[i].Source.Text, lexemes)
		}
		return page, nil
	}
	// Tenant-wide, the matched words come from every chunk of the version holding a lexeme.
	vkeys := make([]string, len(page))
	for i, h := range page {
		vkeys[i] = versionKey(q.Tenant, h.ContentID, h.Version)
	}
	chunks, err := ix.collectAll(ctx, map[string]any{
		"_source": []string{"version_key", "text"}, "sort": []any{map[string]any{"_shard_doc": "asc"}},
		"query": map[string]any{"bool": map[string]any{
			"filter": append(slices.Clone(scope), map[string]any{"terms": map[string]any{"version_key": vkeys}}),
			"should": present, "minimum_should_match": 1,
		}},
	})
	if err != nil {
		return nil, err
	}
	byVersion := map[string][]hit{}
	for _, c := range chunks {
		k := c.ID[2:strings.LastIndexByte(c.ID, ':')]
		byVersion[k] = append(byVersion[k], c)
	}
	for i := range page {
		cs := byVersion[vkeys[i]]
		slices.SortFunc(cs, func(a, b hit) int { return chunkIndex(a.ID) - chunkIndex(b.ID) })
		texts := make([]string, len(cs))
		for k, c := range cs {
			texts[k] = c.Source.Text
		}
		page[i].Match = matchedTerms(strings.Join(texts, "\n"), lexemes)
	}
	return page, nil
}

// maxRankedLexemes is the most lexemes a keyword query ranked by Elasticsearch may have: each
// costs KeywordTFBits+1 clauses, and a search may hold 1,024 clauses or a few more (the
// engine's limit depends on its heap). Longer queries take keywordAll.
const maxRankedLexemes = 64

// keywordAll is keyword search for queries of many lexemes: every candidate is fetched (one
// terms query) and scored in Go, from its text.
func (ix *Index) keywordAll(ctx context.Context, q indexer.Query, lexemes []string) ([]indexer.Hit, error) {
	raw, err := ix.collectAll(ctx, map[string]any{
		"_source": chunkTextSource, "sort": []any{map[string]any{"_shard_doc": "asc"}},
		"query": map[string]any{"bool": map[string]any{
			"filter": append(filters(q, kindChunk), map[string]any{"terms": map[string]any{"lex": lexemes}}),
		}},
	})
	if err != nil {
		return nil, err
	}
	counts := make([][]int, len(raw))
	parallel(len(raw), func(i int) { counts[i] = indexer.TermCounts(raw[i].Source.Text, lexemes) })
	scores := indexer.KeywordScores(counts)
	// Every lexeme must occur in the version, in any of its chunks (unless q.AnyTerm).
	type vk struct {
		id string
		v  int
	}
	held := map[vk][]bool{}
	for i, h := range raw {
		k := vk{h.Source.ContentID, h.Source.Version}
		if held[k] == nil {
			held[k] = make([]bool, len(lexemes))
		}
		for j, n := range counts[i] {
			held[k][j] = held[k][j] || n > 0
		}
	}
	var hits []indexer.Hit
	texts := map[vk][]hit{}
	for i, h := range raw {
		k := vk{h.Source.ContentID, h.Source.Version}
		if slices.Contains(held[k], false) && !q.AnyTerm {
			continue
		}
		texts[k] = append(texts[k], h)
		hits = append(hits, indexer.Hit{ContentID: h.Source.ContentID, Version: h.Source.Version,
			Location: h.Source.Location, Score: scores[i]})
	}
	page := indexer.Page(indexer.Collapse(hits, q), q)
	if q.ReturnMatch {
		for i := range page {
			cs := texts[vk{page[i].ContentID, page[i].Version}]
			slices.SortFunc(cs, func(a, b hit) int { return chunkIndex(a.ID) - chunkIndex(b.ID) })
			var ts []string
			for _, c := range cs {
				if q.ContentID == "" || c.Source.Location == page[i].Location {
					ts = append(ts, c.Source.Text)
				}
			}
			page[i].Match = matchedTerms(strings.Join(ts, "\n"), lexemes)
		}
	}
	return page, nil
}

func matchedTerms(text string, lexemes []string) []string {
	terms := analysis.MatchedTerms(text, lexemes)
	if terms == nil {
		terms = []string{}
	}
	return terms
}

// keywordStats returns the number of candidates (the chunks in scope holding a lexeme) and
// how many of them hold each lexeme: one size-0 request.
func (ix *Index) keywordStats(ctx context.Context, scope, present []any) (int, []int, error) {
	named := map[string]any{}
	for j, p := range present {
		named[strconv.Itoa(j)] = p
	}
	res, err := ix.search(ctx, nil, map[string]any{
		"size": 0, "track_total_hits": true,
		"query": map[string]any{"bool": map[string]any{
			"filter": append(slices.Clone(scope), map[string]any{"bool": map[string]any{"should": present, "minimum_should_match": 1}}),
		}},
		"aggs": map[string]any{"df": map[string]any{"filters": map[string]any{"filters": named}}},
	}, "")
	if err != nil {
		return 0, nil, err
	}
	var aggs struct {
		DF struct {
			Buckets map[string]struct {
				DocCount int `json:"doc_count"`
			} `json:"buckets"`
		} `json:"df"`
	}
	if err := json.Unmarshal(res.Aggregations, &aggs); err != nil {
		return 0, nil, fmt.Errorf("indexer/elastic: keyword statistics: %w", err)
	}
	df := make([]int, len(present))
	for j := range df {
		b, ok := aggs.DF.Buckets[strconv.Itoa(j)]
		if !ok {
			return 0, nil, errors.New("indexer/elastic: keyword statistics: missing bucket")
		}
		df[j] = b.DocCount
	}
	return res.Hits.Total.Value, df, nil
}
