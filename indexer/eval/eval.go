// Package eval measures the quality and speed of content search (package indexer) with the
// real embedding model (indexer/embed):
//
//   - Set is a hand-written evaluation set: short learning passages, each with one
//     paraphrased query that shares no content lexeme with it (TestSetDisjoint), so a
//     lexical search cannot find the target and a semantic one has to.
//   - Load indexes the set into an indexer.Index, Evaluate runs every query as a lexical
//     and as a semantic search and returns recall@5 and MRR (TestEvaluation, docs/search.md).
//   - Synthetic, Percentiles and Model support the benchmarks in this package and in the
//     backends' packages (docs/benchmarks.md, "Content search (issue 5)").
package eval

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/lectern-lms/lectern/indexer"
	"github.com/lectern-lms/lectern/indexer/embed"
	"github.com/lectern-lms/lectern/indexer/embed/onnx"
	"github.com/lectern-lms/lectern/internal/testenv"
)

// Tenant is the tenant the evaluation set is indexed under.
const Tenant = "eval"

// Location is the location of a passage's one chunk.
const Location = "passage"

// K is the cut-off of recall@K.
const K = 5

// Depth is how many hits each query asks for; a target ranked below it counts as not found
// (reciprocal rank 0).
const Depth = 100

// Result is the quality of one search type on the set.
type Result struct {
	// Type is the search type measured.
	Type indexer.SearchType
	// Queries is the number of queries run.
	Queries int
	// RecallAtK is the share of queries whose target is among the first K hits.
	RecallAtK float64
	// MRR is the mean reciprocal rank of the target (0 when not among the first Depth hits).
	MRR float64
	// Ranks is the 1-based rank of each query's target (0 when not found), in Set order.
	Ranks []int
}

// String formats r for a log line.
func (r Result) String() string {
	return fmt.Sprintf("%-8s recall@%d %.3f  MRR %.3f  (%d queries)", r.Type, K, r.RecallAtK, r.MRR, r.Queries)
}

// Model converts an embedder's identity into the index's.
func Model(e embed.Embedder) indexer.Model {
	i := e.Model()
	return indexer.Model{Name: i.Name, Dims: i.Dims}
}

// Load embeds the passages of set with e and indexes each as a content item (version 1, one
// active chunk at Location) of Tenant.
func Load(ctx context.Context, ix indexer.Index, e embed.Embedder, set []Item) error {
	texts := make([]string, len(set))
	for i, it := range set {
		texts[i] = it.Passage
	}
	vecs, err := e.Embed(ctx, texts)
	if err != nil {
		return fmt.Errorf("eval: embed passages: %w", err)
	}
	for i, it := range set {
		c := []indexer.Chunk{{Active: true, Location: Location, Text: it.Passage, Vector: vecs[i]}}
		if err := ix.IndexContent(ctx, Tenant, it.ID, 1, c, nil); err != nil {
			return fmt.Errorf("eval: index %s: %w", it.ID, err)
		}
	}
	return nil
}

// Evaluate runs every query of set against ix (loaded by Load) as a lexical keyword search
// and as a semantic search (the query embedded with e), and returns the quality of each.
func Evaluate(ctx context.Context, ix indexer.Index, e embed.Embedder, set []Item) (lexical, semantic Result, err error) {
	queries := make([]string, len(set))
	for i, it := range set {
		queries[i] = it.Query
	}
	vecs, err := e.Embed(ctx, queries)
	if err != nil {
		return lexical, semantic, fmt.Errorf("eval: embed queries: %w", err)
	}
	lexical, semantic = Result{Type: indexer.Lexical}, Result{Type: indexer.Semantic}
	for i, it := range set {
		for _, r := range []*Result{&lexical, &semantic} {
			q := indexer.Query{Tenant: Tenant, Type: r.Type, Limit: Depth}
			if r.Type == indexer.Semantic {
				q.Vector = vecs[i]
			} else {
				q.Term = it.Query
			}
			hits, err := ix.Search(ctx, q)
			if err != nil {
				return lexical, semantic, fmt.Errorf("eval: %s search %q: %w", r.Type, it.Query, err)
			}
			r.Ranks = append(r.Ranks, Rank(hits, it.ID))
		}
	}
	lexical.score()
	semantic.score()
	return lexical, semantic, nil
}

// Rank returns the 1-based rank of content id among hits, 0 when absent.
func Rank(hits []indexer.Hit, id string) int {
	for i, h := range hits {
		if h.ContentID == id {
			return i + 1
		}
	}
	return 0
}

func (r *Result) score() {
	r.Queries = len(r.Ranks)
	if r.Queries == 0 {
		return
	}
	var found, rr float64
	for _, k := range r.Ranks {
		if k > 0 && k <= K {
			found++
		}
		if k > 0 {
			rr += 1 / float64(k)
		}
	}
	r.RecallAtK = found / float64(r.Queries)
	r.MRR = rr / float64(r.Queries)
}

// Embedder returns the installed local embedding model (onnx.New) for a test or benchmark:
// from $LECTERN_TEST_MODEL_DIR, else onnx.DefaultModelDir. When none is installed the test
// is skipped locally but fails when CI is set: in CI a missing model must not pass silently.
// The embedder is closed when the test ends; opts configure it (onnx.New).
func Embedder(t testing.TB, opts ...onnx.Option) *onnx.Embedder {
	t.Helper()
	dir := os.Getenv("LECTERN_TEST_MODEL_DIR")
	if dir == "" {
		dir = onnx.DefaultModelDir(testenv.CacheDir())
	}
	e, err := onnx.New(dir, opts...)
	if err != nil {
		if errors.Is(err, onnx.ErrNoModel) && os.Getenv("CI") == "" {
			t.Skipf("no embedding model installed (%v); run scripts/install-model.sh", err)
		}
		t.Fatalf("embedding model required: %v", err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}
