package bleve

import (
	"container/heap"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	blevesearch "github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search/query"

	"github.com/lectern-lms/lectern/indexer"
	"github.com/lectern-lms/lectern/indexer/eval"
	"github.com/lectern-lms/lectern/mappings/analysis"
)

// benchIndex is the latency benchmarks' index of eval.BenchChunks synthetic chunks, built
// once into $HOME/.cache/lectern/bench/bleve-<n> and reused by later runs (a file
// "complete" marks a finished build).
var benchIndex struct {
	once   sync.Once
	ix     *Index
	err    error
	n      int
	matrix []float32 // every chunk vector, normalised, back to back (the raw flat index)
}

func openBenchIndex(b *testing.B) *Index {
	b.Helper()
	bi := &benchIndex
	bi.once.Do(func() {
		bi.n = eval.BenchChunks(b)
		cache, err := eval.CacheDir()
		if err != nil {
			bi.err = err
			return
		}
		dir := filepath.Join(cache, fmt.Sprintf("bleve-%d", bi.n))
		done := filepath.Join(dir, "complete")
		if _, err := os.Stat(done); err != nil {
			if err := os.RemoveAll(dir); err != nil {
				bi.err = err
				return
			}
			start := time.Now()
			ix, err := Open(dir, Options{Model: eval.SynthModel})
			if err != nil {
				bi.err = err
				return
			}
			ctx := context.Background()
			for v := range bi.n / eval.ChunksPerVersion {
				chunks, fields := eval.SynthVersion(v)
				if err := ix.IndexContent(ctx, eval.SynthTenant, eval.ContentID(v), 1, chunks, fields); err != nil {
					bi.err = err
					return
				}
			}
			if err := ix.Close(); err != nil {
				bi.err = err
				return
			}
			if err := os.WriteFile(done, nil, 0o644); err != nil {
				bi.err = err
				return
			}
			b.Logf("built %d chunks into %s in %v", bi.n, dir, time.Since(start).Round(time.Second))
		}
		start := time.Now()
		if bi.ix, bi.err = Open(dir, Options{}); bi.err != nil {
			return
		}
		b.Logf("opened %s in %v", dir, time.Since(start).Round(time.Millisecond))
		// A copy: the raw scan must not share memory (or its cache lines) with the API's.
		if vs := bi.ix.vectors[eval.SynthTenant]; vs != nil {
			bi.matrix = slices.Clone(vs.data)
		}
	})
	if bi.err != nil {
		b.Fatal(bi.err)
	}
	return bi.ix
}

// BenchmarkContentSearch measures search latency (p50/p99 per query, metrics p50-ms and
// p99-ms) on eval.BenchChunks synthetic chunks, per search type, through the API
// (Index.Search: .../api) and as the raw engine query on the same data (.../raw):
//
//   - keyword, phrase, field: raw is the Bleve query equivalent to the search (the same
//     filters and terms, a phrase query for phrases) as one direct bleve SearchRequest for
//     the top 100 hits, without term locations. The API reads the postings of the terms
//     itself (see Index.keyword, phrase and field), applies the filters from its version
//     table, scores every match with package indexer's functions, collapses and sorts.
//   - semantic: the query embedded by the local model, then Index.Search, or (raw) a flat
//     scan of a copy of the same normalised vectors (one contiguous slice, a plain dot
//     product loop), keeping the top 100.
//   - knn: the same without the query embedding (vectors of the evaluation set's queries).
func BenchmarkContentSearch(b *testing.B) {
	e := eval.Embedder(b)
	ix := openBenchIndex(b)
	ctx := context.Background()
	qs := eval.SynthQueries(benchIndex.n / eval.ChunksPerVersion)
	qvecs, err := e.Embed(ctx, qs.Semantic)
	if err != nil {
		b.Fatal(err)
	}
	rawBleve := func(q query.Query) error {
		_, err := ix.bi.SearchInContext(ctx, blevesearch.NewSearchRequestOptions(q, indexer.DefaultLimit, 0, false))
		return err
	}
	base := indexer.Query{Tenant: eval.SynthTenant}
	b.Run("bleve/keyword/api", func(b *testing.B) {
		eval.Latency(b, eval.APISearch(ctx, ix, e, qs, qvecs, "keyword"))
	})
	b.Run("bleve/keyword/raw", func(b *testing.B) {
		eval.Latency(b, func(i int) error {
			var disj []query.Query
			for _, l := range analysis.Lexemes(qs.Keyword[i%len(qs.Keyword)]) {
				t := query.NewTermQuery(l)
				t.SetField("text")
				disj = append(disj, t)
			}
			q := base
			q.Type = indexer.Lexical
			return rawBleve(query.NewConjunctionQuery(append(filter(q, kindChunk), query.NewDisjunctionQuery(disj))))
		})
	})
	b.Run("bleve/phrase/api", func(b *testing.B) {
		eval.Latency(b, eval.APISearch(ctx, ix, e, qs, qvecs, "phrase"))
	})
	b.Run("bleve/phrase/raw", func(b *testing.B) {
		eval.Latency(b, func(i int) error {
			q := base
			q.Type = indexer.Lexical
			terms := analysis.PhraseTerms(strings.Trim(qs.Phrase[i%len(qs.Phrase)], `"`))
			return rawBleve(query.NewConjunctionQuery(append(filter(q, kindChunk), query.NewPhraseQuery(terms, "text_phrase"))))
		})
	})
	b.Run("bleve/field/api", func(b *testing.B) {
		eval.Latency(b, eval.APISearch(ctx, ix, e, qs, qvecs, "field"))
	})
	b.Run("bleve/field/raw", func(b *testing.B) {
		eval.Latency(b, func(i int) error {
			q := base
			q.Type = indexer.FieldSearch
			value := query.NewTermQuery(strings.ToLower(qs.Field[i%len(qs.Field)]))
			value.SetField("value")
			return rawBleve(query.NewConjunctionQuery(append(filter(q, kindField), value)))
		})
	})
	b.Run("bleve/semantic/api", func(b *testing.B) {
		eval.Latency(b, eval.APISearch(ctx, ix, e, qs, qvecs, "semantic"))
	})
	b.Run("bleve/semantic/raw", func(b *testing.B) {
		eval.Latency(b, func(i int) error {
			v, err := e.Embed(ctx, []string{qs.Semantic[i%len(qs.Semantic)]})
			if err != nil {
				return err
			}
			flatTop(benchIndex.matrix, v[0], indexer.DefaultLimit)
			return nil
		})
	})
	b.Run("bleve/knn/api", func(b *testing.B) {
		eval.Latency(b, eval.APISearch(ctx, ix, e, qs, qvecs, "knn"))
	})
	b.Run("bleve/anyterm/api", func(b *testing.B) {
		eval.Latency(b, eval.APISearch(ctx, ix, e, qs, qvecs, "anyterm"))
	})
	b.Run("bleve/hybrid/api", func(b *testing.B) {
		eval.Latency(b, eval.APISearch(ctx, ix, e, qs, qvecs, "hybrid"))
	})
	// Not timed: the share of the exact first 10 that semantic and hybrid search return.
	b.Run("bleve/recall", func(b *testing.B) {
		eval.RecallAgainstExact(b, ix, qs, qvecs, benchIndex.n/eval.ChunksPerVersion)
	})
	b.Run("bleve/knn/raw", func(b *testing.B) {
		eval.Latency(b, func(i int) error {
			flatTop(benchIndex.matrix, qvecs[i%len(qvecs)], indexer.DefaultLimit)
			return nil
		})
	})
}

// filter returns the Bleve queries selecting the documents of kind that q may find: the
// filters of the raw engine queries (Search applies them from its version table instead).
func filter(q indexer.Query, kind string) []query.Query {
	term := func(field, value string) query.Query {
		t := query.NewTermQuery(value)
		t.SetField(field)
		return t
	}
	out := []query.Query{term("kind", kind), term("tenant", q.Tenant)}
	if q.ContentID != "" {
		out = append(out, term("content_id", q.ContentID))
	}
	if q.Version != nil {
		out = append(out, term("version", strconv.Itoa(*q.Version)))
	}
	if len(q.Tags) > 0 {
		var tags []query.Query
		for _, t := range q.Tags {
			tags = append(tags, term("tags", t))
		}
		out = append(out, query.NewDisjunctionQuery(tags))
	}
	if !q.IncludeInactive {
		out = append(out, term("active", "true"))
	}
	return out
}

// flatTop returns the rows of matrix (vectors of len(q) back to back) with the k largest
// dot products with q: the raw exact kNN the embedded backend's semantic search amounts to.
func flatTop(matrix, q []float32, k int) []int {
	d := len(q)
	h := &scoreHeap{}
	for row := 0; row*d < len(matrix); row++ {
		v := matrix[row*d : row*d+d]
		var dot float32
		for j, x := range v {
			dot += x * q[j]
		}
		if h.Len() < k {
			heap.Push(h, scored{row, dot})
		} else if dot > (*h)[0].score {
			(*h)[0] = scored{row, dot}
			heap.Fix(h, 0)
		}
	}
	out := make([]int, h.Len())
	for i := len(out) - 1; i >= 0; i-- {
		out[i] = heap.Pop(h).(scored).row
	}
	return out
}

type scored struct {
	row   int
	score float32
}

// scoreHeap is a min-heap of scores.
type scoreHeap []scored

func (h scoreHeap) Len() int           { return len(h) }
func (h scoreHeap) Less(i, j int) bool { return h[i].score < h[j].score }
func (h scoreHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *scoreHeap) Push(x any)        { *h = append(*h, x.(scored)) }
func (h *scoreHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// BenchmarkIndexCached measures indexing throughput with cached vectors (see
// eval.BenchIndexCached): 1,000 chunks per iteration into a fresh index, from one goroutine
// (seq) and from eight (par8). Reports chunks/s.
func BenchmarkIndexCached(b *testing.B) {
	open := func(b *testing.B) indexer.Index {
		ix, err := Open(b.TempDir(), Options{Model: eval.SynthModel})
		if err != nil {
			b.Fatal(err)
		}
		return ix
	}
	b.Run("bleve/seq", func(b *testing.B) { eval.BenchIndexCached(b, open, 1) })
	b.Run("bleve/par8", func(b *testing.B) { eval.BenchIndexCached(b, open, 8) })
}
