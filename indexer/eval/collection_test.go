package eval

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/gob"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/elastic/go-elasticsearch/v8/esapi"

	"github.com/lectern-lms/lectern/indexer"
	"github.com/lectern-lms/lectern/indexer/bleve"
	"github.com/lectern-lms/lectern/indexer/elastic"
	"github.com/lectern-lms/lectern/indexer/embed"
	"github.com/lectern-lms/lectern/indexer/embed/onnx"
	"github.com/lectern-lms/lectern/mappings"
	"github.com/lectern-lms/lectern/mappings/analysis"
	"github.com/lectern-lms/lectern/storage/elastic/elastictest"
)

// TestCollections measures nDCG@10, recall@100 and MRR@10 of lexical, semantic and hybrid
// search, beside a plain BM25 baseline, on the public test collections in the
// subdirectories of $LECTERN_EVAL_COLLECTIONS (LoadCollection; docs/search.md, "Hybrid
// search", says how to get them). Without it the test is skipped: the collections are not
// part of the repository, and CI does not have them. It asserts nothing about the figures
// (they are the docs' measurement), only that every search runs. The model is the installed
// local one unless the environment names another (collectionEmbedders).
func TestCollections(t *testing.T) {
	root := os.Getenv("LECTERN_EVAL_COLLECTIONS")
	if root == "" {
		t.Skip("LECTERN_EVAL_COLLECTIONS is not set (docs/search.md, Hybrid search)")
	}
	dirs, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	e, qe := collectionEmbedders(t)
	t.Logf("model %q (%d dims); queries embedded with %q", e.Model().Name, e.Model().Dims, qe.Model().Name)
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		c, err := LoadCollection(filepath.Join(root, d.Name()))
		if err != nil {
			t.Fatal(err)
		}
		t.Run(c.Name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
			defer cancel()
			ix, err := bleve.Open(t.TempDir(), bleve.Options{Model: Model(e)})
			if err != nil {
				t.Fatal(err)
			}
			defer ix.Close()
			texts := make([]string, len(c.Docs))
			for i, d := range c.Docs {
				texts[i] = d.Text
			}
			start := time.Now()
			vecs, err := embedCached(ctx, e, texts)
			if err != nil {
				t.Fatal(err)
			}
			for i, d := range c.Docs {
				ch := []indexer.Chunk{{Active: true, Location: Location, Text: d.Text, Vector: vecs[i]}}
				if err := ix.IndexContent(ctx, Tenant, d.ID, 1, ch, nil); err != nil {
					t.Fatal(err)
				}
			}
			qtexts := make([]string, len(c.Queries))
			for i, q := range c.Queries {
				qtexts[i] = q.Text
			}
			qvecs, err := embedCached(ctx, qe, qtexts)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %d documents, %d judged queries, indexed in %v", c.Name, len(c.Docs), len(c.Queries), time.Since(start).Round(time.Second))
			bm := NewBM25(c.Docs)
			measure := func(label string, qs []CollectionQuery, qv [][]float32) {
				type run struct {
					name string
					rank func(i int) ([]string, error)
				}
				search := func(q indexer.Query) ([]string, error) {
					q.Tenant, q.Limit = Tenant, Depth
					hits, err := ix.Search(ctx, q)
					var ids []string
					for _, h := range hits {
						ids = append(ids, h.ContentID)
					}
					return ids, err
				}
				parts := func(i int) ([]indexer.Hit, []indexer.Hit, error) {
					lq, sq := indexer.HybridParts(indexer.Query{Tenant: Tenant, Type: indexer.Hybrid, Term: qs[i].Text, Vector: qv[i], Limit: Depth})
					lex, err := ix.Search(ctx, lq)
					if err != nil {
						return nil, nil, err
					}
					sem, err := ix.Search(ctx, sq)
					return lex, sem, err
				}
				fused := func(fuse func(lex, sem []indexer.Hit) []indexer.Hit) func(i int) ([]string, error) {
					return func(i int) ([]string, error) {
						lex, sem, err := parts(i)
						var ids []string
						for _, h := range fuse(lex, sem) {
							ids = append(ids, h.ContentID)
						}
						return ids, err
					}
				}
				runs := []run{
					{"BM25 (baseline)", func(i int) ([]string, error) { return bm.Rank(qs[i].Text, Depth), nil }},
					{"LEXICAL (spec: all lexemes)", func(i int) ([]string, error) {
						return search(indexer.Query{Type: indexer.Lexical, Term: qs[i].Text})
					}},
					{"lexical any-term (hybrid's part)", func(i int) ([]string, error) {
						return search(indexer.Query{Type: indexer.Lexical, Term: qs[i].Text, AnyTerm: true})
					}},
					{"SEMANTIC", func(i int) ([]string, error) {
						return search(indexer.Query{Type: indexer.Semantic, Vector: qv[i]})
					}},
					{"HYBRID (convex, lexical weight by length)", func(i int) ([]string, error) {
						return search(indexer.Query{Type: indexer.Hybrid, Term: qs[i].Text, Vector: qv[i]})
					}},
				}
				if os.Getenv("LECTERN_EVAL_VARIANTS") != "" {
					for _, k := range []int{5, 20, 60, 100} {
						runs = append(runs, run{fmt.Sprintf("variant: RRF k=%d", k), fused(func(l, s []indexer.Hit) []indexer.Hit { return weightedRRF(l, s, k, 1) })})
					}
					for _, w := range []float64{0.3, 0.5, 0.7} {
						runs = append(runs, run{fmt.Sprintf("variant: weighted RRF k=60, lexical weight %.1f", w), fused(func(l, s []indexer.Hit) []indexer.Hit { return weightedRRF(l, s, 60, w) })})
					}
					for _, a := range []float64{0.2, 0.3, 0.5, 0.7} {
						runs = append(runs, run{fmt.Sprintf("variant: convex α=%.1f (min-max)", a), fused(func(l, s []indexer.Hit) []indexer.Hit { return convex(l, s, a) })})
					}
					for _, a := range []float64{0.2, 0.25, 0.3, 0.35, 0.4} {
						runs = append(runs, run{fmt.Sprintf("variant: convex α=%g, lexical /max, semantic /max", a), fused(func(l, s []indexer.Hit) []indexer.Hit { return indexer.Fuse(l, s, a) })})
					}
					for _, ab := range [][2]float64{{0.3, 0.4}, {0.25, 0.5}, {0.3, 0.3}, {0.2, 0.5}, {0.3, 0.5}} {
						a, b := ab[0], ab[1]
						runs = append(runs, run{fmt.Sprintf("variant: convex α=min(1, 20/lexemes)×(%g + %g/lexemes), lexical /max, semantic /max", a, b), func(i int) ([]string, error) {
							n := float64(max(1, len(slices.Compact(slices.Sorted(slices.Values(analysis.Lexemes(qs[i].Text)))))))
							return fusedIDs(parts, i, func(l, s []indexer.Hit) []indexer.Hit { return indexer.Fuse(l, s, min(1, 20/n)*(a+b/n)) })
						}})
					}
					for _, L := range []float64{20, 30} {
						adapt := func(i int, a float64) float64 {
							n := len(slices.Compact(slices.Sorted(slices.Values(analysis.Lexemes(qs[i].Text)))))
							return a * min(1, L/float64(max(n, 1)))
						}
						runs = append(runs, run{fmt.Sprintf("variant: weighted RRF, lexical weight min(1, %g/lexemes)", L), func(i int) ([]string, error) {
							return fusedIDs(parts, i, func(l, s []indexer.Hit) []indexer.Hit { return weightedRRF(l, s, 60, adapt(i, 1)) })
						}})
						for _, a := range []float64{0.3, 0.5} {
							runs = append(runs, run{fmt.Sprintf("variant: convex α=%.1f×min(1, %g/lexemes) (min-max)", a, L), func(i int) ([]string, error) {
								return fusedIDs(parts, i, func(l, s []indexer.Hit) []indexer.Hit { return convex(l, s, adapt(i, a)) })
							}})
						}
						for _, a := range []float64{0.3, 0.4, 0.5} {
							runs = append(runs, run{fmt.Sprintf("variant: convex α=%.1f×min(1, %g/lexemes), lexical /max, semantic /max", a, L), func(i int) ([]string, error) {
								return fusedIDs(parts, i, func(l, s []indexer.Hit) []indexer.Hit { return indexer.Fuse(l, s, adapt(i, a)) })
							}})
						}
					}
				}
				var b strings.Builder
				fmt.Fprintf(&b, "\n| %s | nDCG@10 | recall@100 | MRR@10 |\n|---|---:|---:|---:|\n", label)
				for _, r := range runs {
					var ndcg, recall, rr float64
					for i, q := range qs {
						ids, err := r.rank(i)
						if err != nil {
							t.Fatalf("%s %q: %v", r.name, q.Text, err)
						}
						ndcg += NDCG(ids, q.Rel, 10)
						recall += RecallAt(ids, q.Rel, 100)
						rr += ReciprocalRank(ids, q.Rel, 10)
					}
					n := float64(len(qs))
					fmt.Fprintf(&b, "| %s | %.3f | %.3f | %.3f |\n", r.name, ndcg/n, recall/n, rr/n)
				}
				t.Log(b.String())
			}
			measure(c.Name, c.Queries, qvecs)
			if os.Getenv("LECTERN_EVAL_KNOWN_ITEMS") != "" {
				ki := KnownItems(c, 100)
				t.Logf("%s: %d known-item queries", c.Name, len(ki))
				kt := make([]string, len(ki))
				for i, q := range ki {
					kt[i] = q.Text
				}
				kv, err := embedCached(ctx, qe, kt)
				if err != nil {
					t.Fatal(err)
				}
				measure(c.Name+" known items (one rare word)", ki, kv)
			}
			if os.Getenv("LECTERN_EVAL_LATENCY") != "" {
				latency(t, ctx, ix, c, qvecs)
			}
			if os.Getenv("LECTERN_EVAL_ELASTIC") != "" {
				compareElastic(t, ctx, ix, Model(e), c, vecs, qvecs)
			}
		})
	}
}

// collectionEmbedders returns the embedders TestCollections measures with, the documents'
// and the queries' (the same one unless LECTERN_EVAL_EMBEDDINGS_QUERY_MODEL is set):
//
//   - By default the installed local model (Embedder: $LECTERN_TEST_MODEL_DIR, else the
//     default installation) as Lectern runs it: the float model for texts up to
//     onnx.IntegerMinTokens tokens, the integer model past them.
//     LECTERN_EVAL_ONNX_FORM=float runs every text on the float model (model.onnx),
//     LECTERN_EVAL_ONNX_FORM=integer every text on the integer model (model-qint8.onnx).
//   - With LECTERN_EVAL_EMBEDDINGS_URL, the model LECTERN_EVAL_EMBEDDINGS_MODEL of that
//     OpenAI-compatible /v1/embeddings endpoint, through Lectern's own client
//     (embed.NewOpenAI; LECTERN_EVAL_EMBEDDINGS_KEY, when set, is its API key): any
//     embedding server, or a candidate model installed from a package registry and served
//     by scripts/embeddings-server.py (docs/search.md, "Choosing the embedding model").
//     LECTERN_EVAL_EMBEDDINGS_QUERY_MODEL, when set, embeds the queries with that model of
//     the same endpoint instead, for models trained with different prefixes for queries and
//     passages. Lectern embeds queries and chunks alike, so figures measured that way are
//     what such a model could give, not what Lectern would.
//
// Every form has a model name of its own (Model().Name), by which the index and the vector
// cache ($LECTERN_EVAL_CACHE) tell them apart, so that runs of different models never mix.
func collectionEmbedders(t *testing.T) (docs, queries embed.Embedder) {
	t.Helper()
	url := os.Getenv("LECTERN_EVAL_EMBEDDINGS_URL")
	if url == "" {
		if os.Getenv("LECTERN_EVAL_EMBEDDINGS_QUERY_MODEL") != "" {
			t.Fatal("LECTERN_EVAL_EMBEDDINGS_QUERY_MODEL needs LECTERN_EVAL_EMBEDDINGS_URL")
		}
		var e embed.Embedder
		switch form := os.Getenv("LECTERN_EVAL_ONNX_FORM"); form {
		case "":
			e = Embedder(t)
		case "float":
			l := Embedder(t, onnx.WithIntegerModel(false))
			e = renamed{l, l.Model().Name + " (float model on every text)"}
		case "integer":
			l := Embedder(t, onnx.WithIntegerMinTokens(0))
			e = renamed{l, l.Model().Name + " (integer model on every text)"}
		default:
			t.Fatalf("LECTERN_EVAL_ONNX_FORM=%q: want float or integer (or unset for the default)", form)
		}
		return e, e
	}
	open := func(model string) embed.Embedder {
		if model == "" {
			t.Fatal("LECTERN_EVAL_EMBEDDINGS_URL needs LECTERN_EVAL_EMBEDDINGS_MODEL")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		e, err := embed.NewOpenAI(ctx, embed.OpenAIConfig{
			BaseURL:    url,
			Model:      model,
			APIKey:     os.Getenv("LECTERN_EVAL_EMBEDDINGS_KEY"),
			HTTPClient: &http.Client{Timeout: 10 * time.Minute},
		})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	docs = open(os.Getenv("LECTERN_EVAL_EMBEDDINGS_MODEL"))
	queries = docs
	if m := os.Getenv("LECTERN_EVAL_EMBEDDINGS_QUERY_MODEL"); m != "" {
		queries = open(m)
		if queries.Model().Dims != docs.Model().Dims {
			t.Fatalf("query model %q has %d dims, document model %q %d", m, queries.Model().Dims, docs.Model().Name, docs.Model().Dims)
		}
	}
	return docs, queries
}

// renamed is an embedder reporting another model name: the local model's forms share the
// installation's name, and the index and the vector cache know a model by its name.
type renamed struct {
	embed.Embedder
	name string
}

// Model reports the wrapped embedder's dimension under the name r was given.
func (r renamed) Model() embed.Info {
	i := r.Embedder.Model()
	i.Name = r.name
	return i
}

// embedCached embeds texts with e, or reads the vectors a run before stored in
// $LECTERN_EVAL_CACHE for the same model (by name) and texts (so fusion variants can be
// measured without embedding every collection again).
func embedCached(ctx context.Context, e embed.Embedder, texts []string) ([][]float32, error) {
	dir := os.Getenv("LECTERN_EVAL_CACHE")
	if dir == "" {
		return e.Embed(ctx, texts)
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00", e.Model().Name)
	for _, t := range texts {
		fmt.Fprintf(h, "%d:%s", len(t), t)
	}
	file := filepath.Join(dir, hex.EncodeToString(h.Sum(nil))+".gob")
	if f, err := os.Open(file); err == nil {
		defer f.Close()
		var vecs [][]float32
		if err := gob.NewDecoder(f).Decode(&vecs); err == nil && len(vecs) == len(texts) {
			return vecs, nil
		}
	}
	vecs, err := e.Embed(ctx, texts)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := gob.NewEncoder(&b).Encode(vecs); err != nil {
		return nil, err
	}
	return vecs, os.WriteFile(file, b.Bytes(), 0o644)
}

// fusedIDs fuses the parts of query i with fuse and returns the content ids in order.
func fusedIDs(parts func(int) ([]indexer.Hit, []indexer.Hit, error), i int, fuse func(lex, sem []indexer.Hit) []indexer.Hit) ([]string, error) {
	lex, sem, err := parts(i)
	var ids []string
	for _, h := range fuse(lex, sem) {
		ids = append(ids, h.ContentID)
	}
	return ids, err
}

// convex is a convex combination of min-max normalised part scores (a fusion variant
// measured against RRF): α × lexical + (1 − α) × semantic, a hit missing from a part
// scoring 0 there.
func convex(lex, sem []indexer.Hit, alpha float64) []indexer.Hit {
	norm := func(hs []indexer.Hit) map[string]float64 {
		out := map[string]float64{}
		if len(hs) == 0 {
			return out
		}
		hi, lo := hs[0].Score, hs[len(hs)-1].Score
		for _, h := range hs {
			s := 1.0
			if hi > lo {
				s = (h.Score - lo) / (hi - lo)
			}
			out[h.ContentID] = s
		}
		return out
	}
	ln, sn := norm(lex), norm(sem)
	return combine(lex, sem, func(id string) float64 { return alpha*ln[id] + (1-alpha)*sn[id] })
}

// combine returns each content item of lex and sem once, scored by score and sorted.
func combine(lex, sem []indexer.Hit, score func(id string) float64) []indexer.Hit {
	seen := map[string]bool{}
	var out []indexer.Hit
	for _, h := range slices.Concat(lex, sem) {
		if seen[h.ContentID] {
			continue
		}
		seen[h.ContentID] = true
		out = append(out, indexer.Hit{ContentID: h.ContentID, Version: h.Version, Score: score(h.ContentID)})
	}
	indexer.Sort(out)
	return out
}

// compareElastic indexes the collection into Elasticsearch too (LECTERN_EVAL_ELASTIC and
// LECTERN_TEST_ELASTICSEARCH_URL set) and logs, per search type, how many queries rank their
// first 10 and first 100 hits differently from Bleve (ix), and Elasticsearch's hybrid figures.
func compareElastic(t *testing.T, ctx context.Context, ix indexer.Index, model indexer.Model, c *Collection, vecs, qvecs [][]float32) {
	cl := elastictest.NewClient(t, "lectern_evalc")
	es, err := elastic.New(ctx, cl, elastic.Options{Model: model})
	if err != nil {
		t.Fatal(err)
	}
	defer es.Close()
	err = cl.Do(ctx, "put settings", esapi.IndicesPutSettingsRequest{
		Index: []string{cl.Alias(mappings.Content)},
		Body:  strings.NewReader(`{"index":{"refresh_interval":"20ms"}}`),
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for i, d := range c.Docs {
		ch := []indexer.Chunk{{Active: true, Location: Location, Text: d.Text, Vector: vecs[i]}}
		if err := es.IndexContent(ctx, Tenant, d.ID, 1, ch, nil); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("elasticsearch: indexed in %v", time.Since(start).Round(time.Second))
	ids := func(ix indexer.Index, q indexer.Query) []string {
		hits, err := ix.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, h := range hits {
			out = append(out, h.ContentID)
		}
		return out
	}
	for _, typ := range []indexer.SearchType{indexer.Lexical, indexer.Semantic, indexer.Hybrid} {
		var diff10, diff100 int
		var ndcg float64
		for i, q := range c.Queries {
			iq := indexer.Query{Tenant: Tenant, Type: typ, Limit: Depth}
			switch typ {
			case indexer.Lexical:
				iq.Term, iq.AnyTerm = q.Text, true
			case indexer.Semantic:
				iq.Vector = qvecs[i]
			default:
				iq.Term, iq.Vector = q.Text, qvecs[i]
			}
			b, e := ids(ix, iq), ids(es, iq)
			if !slices.Equal(b[:min(10, len(b))], e[:min(10, len(e))]) {
				diff10++
			}
			if !slices.Equal(b, e) {
				diff100++
			}
			ndcg += NDCG(e, q.Rel, 10)
		}
		t.Logf("%s on Elasticsearch: nDCG@10 %.3f; rankings unlike Bleve's: %d of %d queries in the first 10, %d in the first 100",
			typ, ndcg/float64(len(c.Queries)), diff10, len(c.Queries), diff100)
	}
}

// weightedRRF is reciprocal-rank fusion with the lexical list weighing w and the semantic
// one 1 (a fusion variant measured against plain RRF).
func weightedRRF(lex, sem []indexer.Hit, k int, w float64) []indexer.Hit {
	score := map[string]float64{}
	var out []indexer.Hit
	for j, hs := range [][]indexer.Hit{lex, sem} {
		weight := 1.0
		if j == 0 {
			weight = w
		}
		for i, h := range hs {
			if _, ok := score[h.ContentID]; !ok {
				out = append(out, indexer.Hit{ContentID: h.ContentID, Version: h.Version})
			}
			score[h.ContentID] += weight / float64(k+i+1)
		}
	}
	for i := range out {
		out[i].Score = score[out[i].ContentID]
	}
	indexer.Sort(out)
	return out
}

// latency logs p50 and p99 of each search type over the collection's queries, five rounds,
// the three types interleaved query by query so that the machine's load weighs on each alike
// (the query vectors precomputed: embedding costs semantic and hybrid searches the same).
func latency(t *testing.T, ctx context.Context, ix indexer.Index, c *Collection, qvecs [][]float32) {
	types := []indexer.SearchType{indexer.Lexical, indexer.Semantic, indexer.Hybrid}
	ds := make([][]time.Duration, len(types))
	for range 5 {
		for i, q := range c.Queries {
			for k, typ := range types {
				iq := indexer.Query{Tenant: Tenant, Type: typ, Limit: 10}
				switch typ {
				case indexer.Lexical:
					iq.Term, iq.AnyTerm = q.Text, true
				case indexer.Semantic:
					iq.Vector = qvecs[i]
				default:
					iq.Term, iq.Vector = q.Text, qvecs[i]
				}
				start := time.Now()
				if _, err := ix.Search(ctx, iq); err != nil {
					t.Fatal(err)
				}
				ds[k] = append(ds[k], time.Since(start))
			}
		}
	}
	for k, typ := range types {
		p50, p99 := Percentiles(ds[k])
		name := typ.String()
		if typ == indexer.Lexical {
			name = "lexical any-term"
		}
		t.Logf("%s latency (%d searches, limit 10): p50 %v, p99 %v", name, len(ds[k]), p50, p99)
	}
}
