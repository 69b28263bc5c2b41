package elastic

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/elastic/go-elasticsearch/v8/esapi"

	"github.com/lectern-lms/lectern/indexer"
	"github.com/lectern-lms/lectern/storage/elastic"
)

// pit is an open point in time.
type pit struct{ id string }

func (ix *Index) openPIT(ctx context.Context) (*pit, error) {
	var res struct {
		ID string `json:"id"`
	}
	err := ix.c.Do(ctx, "open point in time on "+ix.alias, esapi.OpenPointInTimeRequest{Index: []string{ix.alias}, KeepAlive: "1m"}, &res)
	if elastic.IsIndexNotFound(err) {
		if err := ix.recreate(ctx); err != nil {
			return nil, err
		}
		err = ix.c.Do(ctx, "open point in time on "+ix.alias, esapi.OpenPointInTimeRequest{Index: []string{ix.alias}, KeepAlive: "1m"}, &res)
	}
	if err != nil {
		return nil, fmt.Errorf("indexer/elastic: %w", err)
	}
	return &pit{id: res.ID}, nil
}

// closePIT releases a point in time, best effort (it expires by itself otherwise).
func (ix *Index) closePIT(p *pit) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b, _ := json.Marshal(map[string]string{"id": p.id})
	_ = ix.c.Do(ctx, "close point in time", esapi.ClosePointInTimeRequest{Body: bytes.NewReader(b)}, nil)
}

// hit is a search hit with the source fields this package reads.
type hit struct {
	ID     string          `json:"_id"`
	Score  float64         `json:"_score"`
	Sort   json.RawMessage `json:"sort"`
	Source source          `json:"_source"`
	Fields struct {
		Created   []time.Time `json:"created"`
		Updated   []time.Time `json:"updated"`
		ContentID []string    `json:"content_id"`
		Version   []int       `json:"version"`
		Location  []string    `json:"location"`
	} `json:"fields"`
}

type source struct {
	ContentID string `json:"content_id"`
	Version   int    `json:"version"`
	Location  string `json:"location"`
	Text      string `json:"text"`
}

type searchResult struct {
	PitID string `json:"pit_id"`
	Hits  struct {
		Total struct {
			Value int `json:"value"`
		} `json:"total"`
		Hits []hit `json:"hits"`
	} `json:"hits"`
	Aggregations json.RawMessage `json:"aggregations"`
}

// dfsSearch is the search type that gathers term statistics from every shard first.
const dfsSearch = "dfs_query_then_fetch"

// search runs one search request, in the point in time p unless p is nil.
func (ix *Index) search(ctx context.Context, p *pit, body map[string]any, searchType string) (searchResult, error) {
	req := esapi.SearchRequest{SearchType: searchType}
	if p != nil {
		body["pit"] = map[string]any{"id": p.id, "keep_alive": "1m"}
	} else {
		req.Index = []string{ix.alias}
	}
	b, err := json.Marshal(body)
	if err != nil {
		return searchResult{}, fmt.Errorf("indexer/elastic: %w", err)
	}
	req.Body = bytes.NewReader(b)
	var res searchResult
	err = ix.c.Do(ctx, "search "+ix.alias, req, &res)
	if p == nil && elastic.IsIndexNotFound(err) {
		// A lost index is made again (empty) rather than failing every search until someone
		// notices; /readyz meanwhile reported it, and reindex refills it.
		if err := ix.recreate(ctx); err != nil {
			return searchResult{}, err
		}
		req.Body = bytes.NewReader(b)
		err = ix.c.Do(ctx, "search "+ix.alias, req, &res)
	}
	if err != nil {
		return searchResult{}, fmt.Errorf("indexer/elastic: %w", err)
	}
	if p != nil && res.PitID != "" {
		p.id = res.PitID
	}
	return res, nil
}

// collectAll returns every hit of body (whose sort must be set), page by page in one point
// in time, with _shard_doc as the last sort key so that search_after never skips a tie.
func (ix *Index) collectAll(ctx context.Context, body map[string]any) ([]hit, error) {
	p, err := ix.openPIT(ctx)
	if err != nil {
		return nil, err
	}
	defer ix.closePIT(p)
	sort, _ := body["sort"].([]any)
	if len(sort) == 0 || !slices.ContainsFunc(sort, func(s any) bool { m, ok := s.(map[string]any); return ok && m["_shard_doc"] != nil }) {
		body["sort"] = append(slices.Clone(sort), map[string]any{"_shard_doc": "asc"})
	}
	body["size"] = pageSize
	body["track_total_hits"] = false
	var out []hit
	for {
		res, err := ix.search(ctx, p, body, "")
		if err != nil {
			return nil, err
		}
		hits := res.Hits.Hits
		out = append(out, hits...)
		if len(hits) < pageSize {
			return out, nil
		}
		body["search_after"] = hits[len(hits)-1].Sort
	}
}

// Search implements indexer.Index.
func (ix *Index) Search(ctx context.Context, q indexer.Query) ([]indexer.Hit, error) {
	if ix.closed.Load() {
		return nil, errClosed
	}
	if err := q.Validate(); err != nil {
		return nil, err
	}
	if err := indexer.CheckQueryModel(q, ix.model); err != nil {
		return nil, err
	}
	if q.Type == indexer.Hybrid {
		return indexer.SearchHybrid(ctx, ix, q)
	}
	var (
		hits []indexer.Hit
		err  error
	)
	switch q.Type {
	case indexer.Semantic:
		hits, err = ix.semantic(ctx, q)
	case indexer.FieldSearch:
		hits, err = ix.field(ctx, q)
	default:
		if phrase, ok := indexer.Phrase(q.Term); ok {
			hits, err = ix.phrase(ctx, q, phrase)
		} else {
			hits, err = ix.keyword(ctx, q)
		}
	}
	if err != nil {
		return nil, err
	}
	if hits == nil {
		hits = []indexer.Hit{}
	}
	if err := ix.texts(ctx, q, hits); err != nil {
		return nil, err
	}
	return hits, nil
}

// texts sets the Text of every hit of a query with ReturnText: the chunks' texts, in one
// request (after the search, like phrase counting's: the hits' own requests load no text).
// A chunk deleted in between leaves its hit with an empty text.
func (ix *Index) texts(ctx context.Context, q indexer.Query, hits []indexer.Hit) error {
	if !indexer.TextKeys(q, hits) {
		return nil
	}
	keys := make([]chunkKey, len(hits))
	for i, h := range hits {
		keys[i] = chunkKey{h.ContentID, h.Version, h.Text.Location}
	}
	texts, err := ix.chunkTexts(ctx, q, keys)
	if err != nil {
		return err
	}
	for i := range hits {
		hits[i].Text.Text = texts[keys[i]]
	}
	return nil
}

// maxResultWindow is the most hits one search request returns (index.max_result_window).
const maxResultWindow = 10000

// ranked returns the page of chunk hits that q selects among the chunks matching query
// (filters included), in chunkSort order, each hit with Elasticsearch's score; tenant-wide
// one per version (its best chunk, whose Location the caller drops: see dropLocations).
// Within maxResultWindow it is one search request that collapses and pages; beyond it every
// hit is collected. withText fetches each hit's text too.
//
// Without text, the request loads no stored field (stored_fields _none_: no _id, no
// _source) and the hits' content id, version and location are read from their sort values:
// the fetch phase is then nearly free, where loading and filtering the _source of each hit
// (which holds its embedding) cost more than the query itself (~50 µs a hit at 100k chunks).
func (ix *Index) ranked(ctx context.Context, q indexer.Query, query map[string]any, withText bool, searchType string) ([]hit, error) {
	if q.Skip+q.PageSize() > ix.window {
		src := chunkSource
		if withText {
			src = chunkTextSource
		}
		all, err := ix.collectAll(ctx, map[string]any{"query": query, "_source": src, "sort": slices.Clone(chunkSort)})
		if err != nil {
			return nil, err
		}
		hits := make([]indexer.Hit, len(all))
		for i, h := range all {
			hits[i] = indexer.Hit{ContentID: h.Source.ContentID, Version: h.Source.Version, Location: h.Source.Location,
				Score: h.Score, Match: i}
		}
		var out []hit
		for _, h := range indexer.Page(indexer.Collapse(hits, q), q) {
			out = append(out, all[h.Match.(int)])
		}
		return out, nil
	}
	body := map[string]any{
		"query": query, "sort": chunkSort, "track_total_hits": false,
		"from": q.Skip, "size": q.PageSize(),
	}
	if withText {
		body["_source"] = chunkTextSource
	} else {
		body["_source"], body["stored_fields"] = false, "_none_"
	}
	if q.ContentID == "" {
		body["collapse"] = map[string]any{"field": "version_key"}
	}
	res, err := ix.search(ctx, nil, body, searchType)
	if err != nil {
		return nil, err
	}
	if !withText {
		for i := range res.Hits.Hits {
			if err := res.Hits.Hits[i].fromChunkSort(); err != nil {
				return nil, err
			}
		}
	}
	return res.Hits.Hits, nil
}

// fromChunkSort sets the hit's content id, version and location from its chunkSort values.
func (h *hit) fromChunkSort() error {
	return h.fromSort(nil, &h.Source.ContentID, &h.Source.Version, &h.Source.Location)
}

// fromSort decodes the hit's sort values into dst, one pointer per sort key (nil skips a
// key). A missing value (null) is an error: every key read this way is set on every
// document it sorts.
func (h *hit) fromSort(dst ...any) error {
	var v []json.RawMessage
	err := json.Unmarshal(h.Sort, &v)
	if err == nil && len(v) != len(dst) {
		err = fmt.Errorf("%d sort values, want %d", len(v), len(dst))
	}
	for i := 0; err == nil && i < len(dst); i++ {
		switch {
		case dst[i] == nil:
		case string(v[i]) == "null":
			err = fmt.Errorf("sort value %d is missing", i)
		default:
			err = json.Unmarshal(v[i], dst[i])
		}
	}
	if err != nil {
		return fmt.Errorf("indexer/elastic: sort values %s: %w", h.Sort, err)
	}
	return nil
}

// chunkTexts returns the texts of the chunks keys of q's tenant, in one request.
func (ix *Index) chunkTexts(ctx context.Context, q indexer.Query, keys []chunkKey) (map[chunkKey]string, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	// Only chunks have a location: no kind filter. One key is the usual case (most hits of
	// a phrase occur once), and a flat conjunction is then the cheapest query.
	should := make([]any, len(keys))
	for i, k := range keys {
		should[i] = map[string]any{"bool": map[string]any{"filter": []any{termQuery("tenant_id", q.Tenant),
			termQuery("content_id", k.contentID), termQuery("version", k.version), termQuery("location", k.location)}}}
	}
	query := should[0]
	if len(should) > 1 {
		query = map[string]any{"bool": map[string]any{"should": should, "minimum_should_match": 1}}
	}
	res, err := ix.search(ctx, nil, map[string]any{
		"size": len(keys), "track_total_hits": false, "_source": chunkTextSource, "query": query,
	}, "")
	if err != nil {
		return nil, err
	}
	texts := make(map[chunkKey]string, len(keys))
	for _, h := range res.Hits.Hits {
		texts[chunkKey{h.Source.ContentID, h.Source.Version, h.Source.Location}] = h.Source.Text
	}
	return texts, nil
}

// parallel calls f(i) for every i in [0, n), spread over GOMAXPROCS goroutines when n is
// large enough to make it worth it, and returns when every call has.
func parallel(n int, f func(i int)) {
	const minPerWorker = 64
	workers := min(runtime.GOMAXPROCS(0), n/minPerWorker)
	if workers <= 1 {
		for i := range n {
			f(i)
		}
		return
	}
	var wg sync.WaitGroup
	per := (n + workers - 1) / workers
	for lo := 0; lo < n; lo += per {
		hi := min(lo+per, n)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := lo; i < hi; i++ {
				f(i)
			}
		}()
	}
	wg.Wait()
}
