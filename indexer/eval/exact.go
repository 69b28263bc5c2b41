package eval

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sync"
	"testing"

	"github.com/lectern-lms/lectern/indexer"
)

// ExactSemantic returns, for each query vector, the first k synthetic versions of an index of
// versions versions ranked by the cosine of their best chunk, best first: what an exact
// (brute-force) tenant-wide semantic search returns, computed here from SynthVersion's vectors
// without any index, to measure an approximate index's recall against. Hits carry ContentID,
// Version 1 and the cosine as Score; equal cosines are ordered as Sort orders them.
func ExactSemantic(versions int, qvecs [][]float32, k int) [][]indexer.Hit {
	norms := make([]float64, len(qvecs))
	for i, q := range qvecs {
		var s float64
		for _, x := range q {
			s += float64(x) * float64(x)
		}
		norms[i] = math.Sqrt(s)
	}
	// best[q][v]: the best cosine of version v for query q.
	best := make([][]float64, len(qvecs))
	for i := range best {
		best[i] = make([]float64, versions)
	}
	workers := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for v := w; v < versions; v += workers {
				chunks, _ := SynthVersion(v)
				for qi, q := range qvecs {
					top := math.Inf(-1)
					for _, c := range chunks {
						var dot, cn float64
						for j, x := range c.Vector {
							dot += float64(x) * float64(q[j])
							cn += float64(x) * float64(x)
						}
						top = max(top, dot/(math.Sqrt(cn)*norms[qi]))
					}
					best[qi][v] = top
				}
			}
		}()
	}
	wg.Wait()
	out := make([][]indexer.Hit, len(qvecs))
	for qi := range qvecs {
		hits := make([]indexer.Hit, versions)
		for v := range versions {
			hits[v] = indexer.Hit{ContentID: ContentID(v), Version: 1, Score: best[qi][v]}
		}
		indexer.Sort(hits)
		out[qi] = hits[:min(k, len(hits))]
	}
	return out
}

// RecallAgainstExact reports, as the metrics recall@10 and hybrid-recall@10, how many of the
// first 10 results of exact search ix's tenant-wide semantic and hybrid searches of the
// semantic queries (qvecs their vectors) find, on average: semantic against ExactSemantic;
// hybrid against indexer.Fuse of ix's own any-term keyword part (exact on every backend) and
// the exact semantic part. An exact index reports 1 for both.
func RecallAgainstExact(b *testing.B, ix indexer.Index, qs Queries, qvecs [][]float32, versions int) {
	b.Helper()
	ctx := context.Background()
	exact := ExactSemantic(versions, qvecs, indexer.HybridDepth)
	var sem, hyb float64
	for i, v := range qvecs {
		q := indexer.Query{Tenant: SynthTenant, Type: indexer.Semantic, Vector: v, Limit: 10}
		got, err := ix.Search(ctx, q)
		if err != nil {
			b.Fatal(err)
		}
		sem += overlap(got, exact[i][:min(10, len(exact[i]))])
		h := indexer.Query{Tenant: SynthTenant, Type: indexer.Hybrid, Term: qs.Semantic[i], Vector: v, Limit: 10}
		got, err = ix.Search(ctx, h)
		if err != nil {
			b.Fatal(err)
		}
		lq, _ := indexer.HybridParts(h)
		lex, err := ix.Search(ctx, lq)
		if err != nil {
			b.Fatal(err)
		}
		want := indexer.Page(indexer.Fuse(lex, exact[i], indexer.HybridLexicalWeight(h.Term)), h)
		hyb += overlap(got, want)
	}
	n := float64(len(qvecs))
	b.ReportMetric(sem/n, "recall@10")
	b.ReportMetric(hyb/n, "hybrid-recall@10")
}

// overlap returns the share of want's hits (by content id and version) that got holds.
func overlap(got, want []indexer.Hit) float64 {
	if len(want) == 0 {
		return 1
	}
	in := map[string]bool{}
	for _, h := range got {
		in[fmt.Sprint(h.ContentID, "/", h.Version)] = true
	}
	n := 0
	for _, h := range want {
		if in[fmt.Sprint(h.ContentID, "/", h.Version)] {
			n++
		}
	}
	return float64(n) / float64(len(want))
}
