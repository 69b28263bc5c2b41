package eval

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/lectern-lms/lectern/indexer"
	"github.com/lectern-lms/lectern/indexer/embed"
	"github.com/lectern-lms/lectern/mappings/analysis"
)

// Synthetic data for the benchmarks: content versions of ChunksPerVersion chunks, each of
// WordsPerChunk words drawn from a Zipf distribution over Vocabulary (so that common words
// match most chunks and rare ones a few, as in real text), with a stop word every fifth
// word; a random unit vector of SynthModel per chunk; one TITLE field per version. Everything
// is a deterministic function of the version number.
const (
	ChunksPerVersion = 20
	WordsPerChunk    = 50
	// SynthTenant is the tenant of the synthetic content.
	SynthTenant = "bench"
)

// SynthModel is the model recorded by indexes of synthetic chunks: the local model's
// dimension count, so that real query embeddings can search them. The vectors are random,
// not embeddings; latency does not depend on what they mean (for HNSW random vectors are, if
// anything, the harder case).
var SynthModel = indexer.Model{Name: "bench-random-384", Dims: 384}

// Vocabulary is the distinct words of the evaluation set, lower case, in a fixed order:
// real English words for the synthetic text.
var Vocabulary = func() []string {
	seen := map[string]bool{}
	var out []string
	for _, it := range Set {
		for _, w := range strings.FieldsFunc(strings.ToLower(it.Passage+" "+it.Query), func(r rune) bool { return !unicode.IsLetter(r) }) {
			if len(w) < 3 || seen[w] || analysis.IsStopWord(w) {
				continue
			}
			seen[w] = true
			out = append(out, w)
		}
	}
	// A fixed, arbitrary order decides the Zipf ranks: sort by a hash-like key so that rank
	// is unrelated to the topic a word comes from.
	slices.SortFunc(out, func(a, b string) int { return strings.Compare(reverse(a), reverse(b)) })
	return out
}()

func reverse(s string) string {
	r := []rune(s)
	slices.Reverse(r)
	return string(r)
}

var stopFill = []string{"the", "of", "and", "to", "in", "a", "is", "for"}

// SynthVersion returns the chunks and fields of synthetic version number n (content id
// ContentID(n), version 1).
func SynthVersion(n int) ([]indexer.Chunk, []indexer.Field) {
	rng := rand.New(rand.NewSource(int64(n) + 1))
	zipf := rand.NewZipf(rng, 1.1, 2, uint64(len(Vocabulary)-1))
	chunks := make([]indexer.Chunk, ChunksPerVersion)
	words := make([]string, WordsPerChunk)
	for i := range chunks {
		for j := range words {
			if j%5 == 4 {
				words[j] = stopFill[rng.Intn(len(stopFill))]
			} else {
				words[j] = Vocabulary[zipf.Uint64()]
			}
		}
		chunks[i] = indexer.Chunk{Active: true, Location: "slide " + strconv.Itoa(i+1), Text: strings.Join(words, " "),
			Vector: randomUnit(rng, SynthModel.Dims)}
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	fields := []indexer.Field{{FieldType: indexer.FieldTitle, Value: Title(n), Created: now, Updated: now}}
	return chunks, fields
}

// ContentID is the content id of synthetic version n.
func ContentID(n int) string { return fmt.Sprintf("content-%06d", n) }

// Title is the TITLE field value of synthetic version n.
func Title(n int) string {
	return fmt.Sprintf("Course %d: %s and %s", n, Vocabulary[n%len(Vocabulary)], Vocabulary[(n*7+3)%len(Vocabulary)])
}

func randomUnit(rng *rand.Rand, dims int) []float32 {
	v := make([]float32, dims)
	var s float64
	for i := range v {
		x := rng.NormFloat64()
		v[i] = float32(x)
		s += x * x
	}
	inv := 1 / math.Sqrt(s)
	for i := range v {
		v[i] = float32(float64(v[i]) * inv)
	}
	return v
}

// Queries are the search terms the latency benchmarks cycle through, each a deterministic
// function of the number of versions indexed.
type Queries struct {
	// Keyword are two-word lexical terms of mid-frequency words (Zipf ranks 30–300).
	Keyword []string
	// Phrase are three-word phrases (word, stop word, word; in double quotes) cut from indexed chunks, so each has
	// at least one match.
	Phrase []string
	// Field are titles of indexed versions.
	Field []string
	// Semantic are the evaluation set's queries, embedded at search time.
	Semantic []string
}

// SynthQueries returns the queries for an index of versions synthetic versions.
func SynthQueries(versions int) Queries {
	rng := rand.New(rand.NewSource(42))
	var q Queries
	for range 50 {
		a, b := 30+rng.Intn(270), 30+rng.Intn(270)
		q.Keyword = append(q.Keyword, Vocabulary[a]+" "+Vocabulary[b])
		n := rng.Intn(versions)
		chunks, _ := SynthVersion(n)
		w := strings.Fields(chunks[rng.Intn(len(chunks))].Text)
		q.Phrase = append(q.Phrase, `"`+strings.Join(w[3:6], " ")+`"`)
		q.Field = append(q.Field, Title(rng.Intn(versions)))
	}
	for _, it := range Set {
		q.Semantic = append(q.Semantic, it.Query)
	}
	return q
}

// APISearch returns the operation a "<backend>/<kind>/api" latency case times: the port's
// Search with the i-th query of kind (keyword, phrase, field, semantic — the query embedded
// inside the call — or knn, with precomputed vectors; anyterm, the semantic queries' texts as
// an any-term keyword search, and hybrid, text and precomputed vector, the parts of which are
// anyterm and knn), tenant-wide, so every backend runs exactly the same API calls.
func APISearch(ctx context.Context, ix indexer.Index, e embed.Embedder, qs Queries, qvecs [][]float32, kind string) func(i int) error {
	return func(i int) error {
		q := indexer.Query{Tenant: SynthTenant}
		switch kind {
		case "keyword":
			q.Type, q.Term = indexer.Lexical, qs.Keyword[i%len(qs.Keyword)]
		case "phrase":
			q.Type, q.Term = indexer.Lexical, qs.Phrase[i%len(qs.Phrase)]
		case "field":
			q.Type, q.Term = indexer.FieldSearch, qs.Field[i%len(qs.Field)]
		case "semantic":
			v, err := e.Embed(ctx, []string{qs.Semantic[i%len(qs.Semantic)]})
			if err != nil {
				return err
			}
			q.Type, q.Vector = indexer.Semantic, v[0]
		case "knn":
			q.Type, q.Vector = indexer.Semantic, qvecs[i%len(qvecs)]
		case "anyterm":
			q.Type, q.Term, q.AnyTerm = indexer.Lexical, qs.Semantic[i%len(qs.Semantic)], true
		case "hybrid":
			q.Type, q.Term, q.Vector = indexer.Hybrid, qs.Semantic[i%len(qs.Semantic)], qvecs[i%len(qvecs)]
		default:
			return fmt.Errorf("unknown search kind %q", kind)
		}
		_, err := ix.Search(ctx, q)
		return err
	}
}

// Percentiles returns the 50th and 99th percentile of ds (nearest rank), which it sorts.
func Percentiles(ds []time.Duration) (p50, p99 time.Duration) {
	if len(ds) == 0 {
		return 0, 0
	}
	slices.Sort(ds)
	at := func(p float64) time.Duration {
		i := int(math.Ceil(p*float64(len(ds)))) - 1
		return ds[min(max(i, 0), len(ds)-1)]
	}
	return at(0.50), at(0.99)
}

// Latency runs op b.N times (op gets the iteration number), timing each call, and reports
// the 50th and 99th percentile in milliseconds as the metrics "p50-ms" and "p99-ms".
func Latency(b *testing.B, op func(i int) error) {
	b.Helper()
	ds := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		s := time.Now()
		if err := op(i); err != nil {
			b.Fatal(err)
		}
		ds = append(ds, time.Since(s))
	}
	p50, p99 := Percentiles(ds)
	b.ReportMetric(float64(p50.Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(p99.Microseconds())/1000, "p99-ms")
}

// BenchChunks is the number of chunks of the latency benchmarks' index:
// $LECTERN_BENCH_CHUNKS, default 100,000.
func BenchChunks(b testing.TB) int {
	n := 100_000
	if s := os.Getenv("LECTERN_BENCH_CHUNKS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n < ChunksPerVersion {
			b.Fatalf("LECTERN_BENCH_CHUNKS=%q: want a number of at least %d", s, ChunksPerVersion)
		}
	}
	return n
}

// CacheDir returns $LECTERN_CACHE_DIR/bench (default $HOME/.cache/lectern/bench), where
// benchmarks keep indexes built once between runs.
func CacheDir() (string, error) {
	base := os.Getenv("LECTERN_CACHE_DIR")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		base = filepath.Join(home, ".cache", "lectern")
	}
	return filepath.Join(base, "bench"), nil
}

// WarmCache returns a Cached embedder whose cache already holds a vector for every text
// (the synthetic ones), over an inner embedder that fails when asked: what indexing
// re-embeds nothing costs.
func WarmCache(texts []string, vecs [][]float32) *embed.Cached {
	info := embed.Info{Name: SynthModel.Name, Dims: SynthModel.Dims}
	lru := embed.NewLRU(len(texts) + 1)
	entries := make(map[string][]float32, len(texts))
	for i, t := range texts {
		entries[embed.CacheKey(info, t)] = vecs[i]
	}
	lru.Put(entries)
	return embed.NewCached(noEmbedder{info}, lru)
}

type noEmbedder struct{ info embed.Info }

func (n noEmbedder) Model() embed.Info { return n.info }

func (n noEmbedder) Embed(context.Context, []string) ([][]float32, error) {
	return nil, errors.New("eval: cache miss in a cached-vector benchmark")
}

// IndexCached indexes versions [first, first+count) of synthetic content into ix, taking
// their vectors from e (see WarmCache): the indexing benchmark's unit of work. It returns
// the number of chunks indexed.
func IndexCached(ctx context.Context, ix indexer.Index, e embed.Embedder, first, count int) (int, error) {
	n := 0
	for v := first; v < first+count; v++ {
		chunks, fields := SynthVersion(v)
		texts := make([]string, len(chunks))
		for i, c := range chunks {
			texts[i] = c.Text
		}
		vecs, err := e.Embed(ctx, texts)
		if err != nil {
			return n, err
		}
		for i := range chunks {
			chunks[i].Vector = vecs[i]
		}
		if err := ix.IndexContent(ctx, SynthTenant, ContentID(v), 1, chunks, fields); err != nil {
			return n, err
		}
		n += len(chunks)
	}
	return n, nil
}

// BenchIndexCached is the body of the backends' BenchmarkIndexCached: per iteration, 1,000
// synthetic chunks (50 versions of 20, with a TITLE field each) go into a fresh index (open,
// not timed) through an embed.Cached whose cache holds every vector (WarmCache), from
// workers goroutines taking versions in turn. It reports chunks/s.
func BenchIndexCached(b *testing.B, open func(b *testing.B) indexer.Index, workers int) {
	const versions = 1000 / ChunksPerVersion
	var texts []string
	var vecs [][]float32
	for v := range versions {
		chunks, _ := SynthVersion(v)
		for _, c := range chunks {
			texts, vecs = append(texts, c.Text), append(vecs, c.Vector)
		}
	}
	e := WarmCache(texts, vecs)
	ctx := context.Background()
	var total time.Duration
	chunks := 0
	for b.Loop() {
		b.StopTimer()
		ix := open(b)
		b.StartTimer()
		s := time.Now()
		errs := make(chan error, workers)
		counts := make(chan int, workers)
		for w := range workers {
			go func() {
				n := 0
				for v := w; v < versions; v += workers {
					k, err := IndexCached(ctx, ix, e, v, 1)
					if err != nil {
						errs <- err
						counts <- n
						return
					}
					n += k
				}
				errs <- nil
				counts <- n
			}()
		}
		for range workers {
			if err := <-errs; err != nil {
				b.Fatal(err)
			}
			chunks += <-counts
		}
		total += time.Since(s)
		b.StopTimer()
		ix.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(chunks)/total.Seconds(), "chunks/s")
}
