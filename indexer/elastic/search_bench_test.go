package elastic

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/elastic/go-elasticsearch/v8/esapi"

	"github.com/lectern-lms/lectern/indexer"
	"github.com/lectern-lms/lectern/indexer/eval"
	"github.com/lectern-lms/lectern/internal/testenv"
	"github.com/lectern-lms/lectern/mappings"
	"github.com/lectern-lms/lectern/mappings/analysis"
	"github.com/lectern-lms/lectern/storage/elastic"
	"github.com/lectern-lms/lectern/storage/elastic/elastictest"
)

// esBench is the latency benchmarks' index of eval.BenchChunks synthetic chunks, under the
// index prefix lectern_bench_<n>_ of the cluster at LECTERN_TEST_ELASTICSEARCH_URL. It is
// kept between runs and reused when it holds the expected number of chunk and status
// documents; otherwise it is rebuilt.
var esBench struct {
	once sync.Once
	ix   *Index
	err  error
	n    int
}

func openESBench(b *testing.B) *Index {
	b.Helper()
	url := testenv.External(b, "LECTERN_TEST_ELASTICSEARCH_URL")
	eb := &esBench
	eb.once.Do(func() {
		eb.n = eval.BenchChunks(b)
		eb.ix, eb.err = buildESBench(b, url, eb.n)
	})
	if eb.err != nil {
		b.Fatal(eb.err)
	}
	return eb.ix
}

func buildESBench(b *testing.B, url string, n int) (*Index, error) {
	ctx := context.Background()
	c, err := elastic.New(elastic.Config{URLs: []string{url}, IndexPrefix: fmt.Sprintf("lectern_bench_%d_", n)})
	if err != nil {
		return nil, err
	}
	versions := n / eval.ChunksPerVersion
	// An index of an older mapping version (behind the alias) is rebuilt.
	if ix, err := New(ctx, c, Options{}); err == nil && ix.current(ctx) {
		chunks, err1 := ix.count(ctx, kindChunk)
		statuses, err2 := ix.count(ctx, kindStatus)
		if err1 == nil && err2 == nil && chunks == versions*eval.ChunksPerVersion && statuses == versions {
			b.Logf("reusing %s (%d chunks)", ix.alias, chunks)
			return ix, nil
		}
	}
	if err := c.DeleteIndices(ctx, c.Prefix()); err != nil {
		return nil, err
	}
	start := time.Now()
	ix, err := New(ctx, c, Options{Model: eval.SynthModel})
	if err != nil {
		return nil, err
	}
	setRefresh := func(v string) error {
		return c.Do(ctx, "put settings", esapi.IndicesPutSettingsRequest{
			Index: []string{ix.alias}, Body: strings.NewReader(`{"index":{"refresh_interval":` + v + `}}`),
		}, nil)
	}
	if err := setRefresh(`"-1"`); err != nil {
		return nil, err
	}
	// Bulk load the documents IndexContent would write (chunks, fields and the status
	// document of every version), without refreshes: the index is the same, built faster.
	// Indexing through the API is measured by BenchmarkIndexCached.
	jobs := make(chan int)
	errs := make(chan error, 2)
	for range 2 {
		go func() {
			var ops []bulkOp
			flush := func() error {
				err := ix.bulk(ctx, "bench load", ops, "false")
				ops = ops[:0]
				return err
			}
			for v := range jobs {
				ops = append(ops, benchDocs(v)...)
				if len(ops) >= bulkBatch {
					if err := flush(); err != nil {
						errs <- err
						for range jobs {
						}
						return
					}
				}
			}
			errs <- flush()
		}()
	}
	for v := range versions {
		jobs <- v
	}
	close(jobs)
	for range 2 {
		if err := <-errs; err != nil {
			return nil, err
		}
	}
	if err := setRefresh("null"); err != nil {
		return nil, err
	}
	if err := c.Do(ctx, "refresh", esapi.IndicesRefreshRequest{Index: []string{ix.alias}}, nil); err != nil {
		return nil, err
	}
	b.Logf("built %d chunks into %s in %v", n, ix.alias, time.Since(start).Round(time.Second))
	return ix, nil
}

// benchDocs returns the bulk actions that IndexContent sends for synthetic version v.
func benchDocs(v int) []bulkOp {
	chunks, fields := eval.SynthVersion(v)
	cs, fs, st, err := indexer.PrepareContent(eval.SynthTenant, eval.ContentID(v), 1, chunks, fields, eval.SynthModel)
	if err != nil {
		panic(err) // synthetic versions are valid
	}
	return versionDocs(eval.SynthTenant, eval.ContentID(v), 1, cs, fs, st)
}

// current reports whether the index behind the alias is of the current mapping version.
func (ix *Index) current(ctx context.Context) bool {
	m, err := ix.readMapping(ctx)
	return err == nil && m.index == ix.c.Index(mappings.Content)
}

// count returns the number of documents of kind.
func (ix *Index) count(ctx context.Context, kind string) (int, error) {
	var res struct {
		Count int `json:"count"`
	}
	b, _ := json.Marshal(map[string]any{"query": termQuery("kind", kind)})
	err := ix.c.Do(ctx, "count", esapi.CountRequest{Index: []string{ix.alias}, Body: bytes.NewReader(b)}, &res)
	return res.Count, err
}

// rawSearch sends one _search request with body to the index and reads the whole answer:
// the raw engine query, timed at the HTTP client.
func (ix *Index) rawSearch(ctx context.Context, body map[string]any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	res, err := esapi.SearchRequest{Index: []string{ix.alias}, Body: bytes.NewReader(b)}.Do(ctx, ix.c.Raw())
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if _, err := io.Copy(io.Discard, res.Body); err != nil {
		return err
	}
	if res.IsError() {
		return fmt.Errorf("raw search: %s", res.Status())
	}
	return nil
}

// BenchmarkContentSearch measures search latency (p50/p99 per query, metrics p50-ms and
// p99-ms) on eval.BenchChunks synthetic chunks, per search type, through the API
// (Index.Search: .../api) and as the raw engine query on the same data (.../raw): one
// _search request, timed at the HTTP client, with the engine's plain query for the same
// filters and terms (keyword: a should of term queries on text, BM25; phrase: the
// match_phrase; semantic: a kNN clause with k 100 and 200 candidates) asking for the top 100
// hits, without a point in time, with their content id, version and location from _source
// as a plain client reads them. The API sends one _search that ranks, collapses and pages
// (keyword queries of several lexemes first send a size-0 count request for their weights,
// which the shard request cache answers when the query repeats — the 50 queries each run
// several times; phrase searches then fetch the text of one hit per distinct score) and
// loads no stored field for lexical and field searches (see the package comment), so it can
// be faster than raw. semantic includes the query embedding on both sides; knn is the same
// without it.
func BenchmarkContentSearch(b *testing.B) {
	e := eval.Embedder(b)
	ix := openESBench(b)
	ctx := context.Background()
	qs := eval.SynthQueries(esBench.n / eval.ChunksPerVersion)
	qvecs, err := e.Embed(ctx, qs.Semantic)
	if err != nil {
		b.Fatal(err)
	}
	base := indexer.Query{Tenant: eval.SynthTenant}
	// lean, when set, makes the raw queries read content_id, version and location from doc
	// values instead of _source (the .../raw-lean cases), as the API does: the fairest
	// baseline for a user who knows that trick.
	lean := false
	fetch := func(body map[string]any) map[string]any {
		if lean {
			body["_source"], body["stored_fields"], body["docvalue_fields"] = false, "_none_", chunkSource
		} else {
			body["_source"] = chunkSource
		}
		return body
	}
	raw := func(q indexer.Query, kind string, must map[string]any) error {
		return ix.rawSearch(ctx, fetch(map[string]any{
			"size":  indexer.DefaultLimit,
			"query": map[string]any{"bool": map[string]any{"filter": filters(q, kind), "must": must}},
		}))
	}
	knn := func(v []float32) error {
		q := base
		q.Type = indexer.Semantic
		return ix.rawSearch(ctx, fetch(map[string]any{
			"size": indexer.DefaultLimit,
			"knn": map[string]any{"field": "embedding", "query_vector": v, "k": indexer.DefaultLimit,
				"num_candidates": 2 * indexer.DefaultLimit, "filter": filters(q, kindChunk)},
		}))
	}
	b.Run("elastic/keyword/api", func(b *testing.B) {
		eval.Latency(b, eval.APISearch(ctx, ix, e, qs, qvecs, "keyword"))
	})
	rawKeyword := func(b *testing.B) {
		eval.Latency(b, func(i int) error {
			var should []any
			for j, l := range analysis.Lexemes(qs.Keyword[i%len(qs.Keyword)]) {
				should = append(should, map[string]any{"term": map[string]any{"lex": map[string]any{"value": l, "_name": fmt.Sprint(j)}}})
			}
			q := base
			q.Type = indexer.Lexical
			return raw(q, kindChunk, map[string]any{"bool": map[string]any{"should": should, "minimum_should_match": 1}})
		})
	}
	b.Run("elastic/keyword/raw", func(b *testing.B) { lean = false; rawKeyword(b) })
	b.Run("elastic/keyword/raw-lean", func(b *testing.B) { lean = true; rawKeyword(b) })
	b.Run("elastic/phrase/api", func(b *testing.B) {
		eval.Latency(b, eval.APISearch(ctx, ix, e, qs, qvecs, "phrase"))
	})
	rawPhrase := func(b *testing.B) {
		eval.Latency(b, func(i int) error {
			q := base
			q.Type = indexer.Lexical
			terms := analysis.PhraseTerms(strings.Trim(qs.Phrase[i%len(qs.Phrase)], `"`))
			return raw(q, kindChunk, map[string]any{"match_phrase": map[string]any{"phrase": strings.Join(terms, " ")}})
		})
	}
	b.Run("elastic/phrase/raw", func(b *testing.B) { lean = false; rawPhrase(b) })
	b.Run("elastic/phrase/raw-lean", func(b *testing.B) { lean = true; rawPhrase(b) })
	b.Run("elastic/field/api", func(b *testing.B) {
		eval.Latency(b, eval.APISearch(ctx, ix, e, qs, qvecs, "field"))
	})
	rawField := func(b *testing.B) {
		eval.Latency(b, func(i int) error {
			q := base
			q.Type = indexer.FieldSearch
			return raw(q, kindField, map[string]any{"bool": map[string]any{"filter": []any{termQuery("value", qs.Field[i%len(qs.Field)])}}})
		})
	}
	b.Run("elastic/field/raw", func(b *testing.B) { lean = false; rawField(b) })
	b.Run("elastic/field/raw-lean", func(b *testing.B) { lean = true; rawField(b) })
	b.Run("elastic/semantic/api", func(b *testing.B) {
		eval.Latency(b, eval.APISearch(ctx, ix, e, qs, qvecs, "semantic"))
	})
	rawSemantic := func(b *testing.B) {
		eval.Latency(b, func(i int) error {
			v, err := e.Embed(ctx, []string{qs.Semantic[i%len(qs.Semantic)]})
			if err != nil {
				return err
			}
			return knn(v[0])
		})
	}
	b.Run("elastic/semantic/raw", func(b *testing.B) { lean = false; rawSemantic(b) })
	b.Run("elastic/semantic/raw-lean", func(b *testing.B) { lean = true; rawSemantic(b) })
	b.Run("elastic/knn/api", func(b *testing.B) {
		eval.Latency(b, eval.APISearch(ctx, ix, e, qs, qvecs, "knn"))
	})
	b.Run("elastic/anyterm/api", func(b *testing.B) {
		eval.Latency(b, eval.APISearch(ctx, ix, e, qs, qvecs, "anyterm"))
	})
	b.Run("elastic/hybrid/api", func(b *testing.B) {
		eval.Latency(b, eval.APISearch(ctx, ix, e, qs, qvecs, "hybrid"))
	})
	// Not timed: the share of the exact first 10 that semantic and hybrid search return.
	b.Run("elastic/recall", func(b *testing.B) {
		eval.RecallAgainstExact(b, ix, qs, qvecs, esBench.n/eval.ChunksPerVersion)
	})
	rawKnn := func(b *testing.B) {
		eval.Latency(b, func(i int) error { return knn(qvecs[i%len(qvecs)]) })
	}
	b.Run("elastic/knn/raw", func(b *testing.B) { lean = false; rawKnn(b) })
	b.Run("elastic/knn/raw-lean", func(b *testing.B) { lean = true; rawKnn(b) })
}

// BenchmarkIndexCached measures indexing throughput with cached vectors (see
// eval.BenchIndexCached): 1,000 chunks per iteration through IndexContent into a fresh index
// with the production settings (refresh_interval 1s; every IndexContent forces a refresh),
// from one goroutine (seq) and from eight (par8). Reports chunks/s.
func BenchmarkIndexCached(b *testing.B) {
	open := func(b *testing.B) indexer.Index {
		c := elastictest.NewClient(b, "lectern_bench_idx")
		ix, err := New(context.Background(), c, Options{Model: eval.SynthModel})
		if err != nil {
			b.Fatal(err)
		}
		return ix
	}
	b.Run("elastic/seq", func(b *testing.B) { eval.BenchIndexCached(b, open, 1) })
	b.Run("elastic/par8", func(b *testing.B) { eval.BenchIndexCached(b, open, 8) })
}
