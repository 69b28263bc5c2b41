package eval

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/indexer/embed"
	"github.com/lectern-lms/lectern/indexer/embed/onnx"
)

// BenchmarkEmbed measures the local model's embedding throughput on 1,000 synthetic chunks
// (50 words each) per iteration, one Embed call, and reports chunks/s. Run it with
// -benchtime=1x or 2x: one iteration takes several seconds.
func BenchmarkEmbed(b *testing.B) {
	e := Embedder(b)
	var texts []string
	for v := 0; len(texts) < 1000; v++ {
		chunks, _ := SynthVersion(v)
		for _, c := range chunks {
			texts = append(texts, c.Text)
		}
	}
	texts = texts[:1000]
	ctx := context.Background()
	// Warm up the session (first runs allocate ONNX Runtime's arenas).
	if _, err := e.Embed(ctx, texts[:16]); err != nil {
		b.Fatal(err)
	}
	var total time.Duration
	for b.Loop() {
		s := time.Now()
		if _, err := e.Embed(ctx, texts); err != nil {
			b.Fatal(err)
		}
		total += time.Since(s)
	}
	b.ReportMetric(float64(b.N*len(texts))/total.Seconds(), "chunks/s")
}

// BenchmarkEmbedQuery measures embedding one short query (the evaluation set's), which every
// semantic search through the API pays.
func BenchmarkEmbedQuery(b *testing.B) {
	e := Embedder(b)
	ctx := context.Background()
	q := SynthQueries(1).Semantic
	Latency(b, func(i int) error {
		_, err := e.Embed(ctx, []string{q[i%len(q)]})
		return err
	})
}

// legacyEmbedder is the local model configured as it was before issue 13: the float model only, one session with
// an intra-op thread per CPU, spinning between operators, batches of 8 padded to their
// longest text, and every caller running its batches at once (parallel: the callers).
func legacyEmbedder(b *testing.B, parallel int) *onnx.Embedder {
	return Embedder(b, onnx.WithIntegerModel(false), onnx.WithThreads(runtime.NumCPU()), onnx.WithSpinning(true), onnx.WithParallelRuns(parallel),
		onnx.WithBatchTokens(math.MaxInt32))
}

// BenchmarkEmbedThroughput measures chunks/s of the local model, before (legacyEmbedder) and
// after issue 13 (onnx.New's defaults) in one run, on 1,000 chunks of mixed length as
// content imports make them (importChunks: 50 to 250 words, ~70 to the model's 256 tokens):
//
//   - bulk: one Embed call of all 1,000 (re-indexing, the evaluation set);
//   - import: as content imports ask, one document (one or two chunks) per call from
//     importCallers goroutines at once (the index queue's handlers).
//
// Each case reports chunks/s and CPU-ms/chunk (process CPU time, which the other programs
// on a shared machine disturb less than wall time). Run with -benchtime=1x; -count=3
// runs each case that many times in a row, and scripts/bench-report.sh prints the means and ratios.
func BenchmarkEmbedThroughput(b *testing.B) {
	texts := importChunks(1000)
	const importCallers = 4
	// Documents of one or two chunks, alternating.
	var docs [][]string
	for i := 0; i < len(texts); {
		n := 1 + len(docs)%2
		docs = append(docs, texts[i:min(i+n, len(texts))])
		i += n
	}
	ctx := context.Background()
	for _, c := range []struct {
		name string
		open func(b *testing.B) *onnx.Embedder
		run  func(e *onnx.Embedder) error
	}{
		{"bulk/before", func(b *testing.B) *onnx.Embedder { return legacyEmbedder(b, 1) }, nil},
		{"bulk/after", func(b *testing.B) *onnx.Embedder { return Embedder(b) }, nil},
		{"import/before", func(b *testing.B) *onnx.Embedder { return legacyEmbedder(b, importCallers) }, nil},
		{"import/after", func(b *testing.B) *onnx.Embedder { return Embedder(b) }, nil},
	} {
		perDoc := c.name[:6] == "import"
		b.Run(c.name, func(b *testing.B) {
			e := c.open(b)
			measureEmbed(b, e, texts, func() {
				if !perDoc {
					if _, err := e.Embed(ctx, texts); err != nil {
						b.Fatal(err)
					}
					return
				}
				var wg sync.WaitGroup
				for w := range importCallers {
					wg.Go(func() {
						for d := w; d < len(docs); d += importCallers {
							if _, err := e.Embed(ctx, docs[d]); err != nil {
								b.Error(err)
								return
							}
						}
					})
				}
				wg.Wait()
			})
		})
	}
}

// importChunks returns n chunks of one to five synthetic 50-word chunks joined (50 to 250
// words, up to about content.ChunkChars characters), deterministically.
func importChunks(n int) []string {
	var pieces []string
	for v := 0; len(pieces) < 3*n; v++ {
		chunks, _ := SynthVersion(v)
		for _, c := range chunks {
			pieces = append(pieces, c.Text)
		}
	}
	out := make([]string, n)
	for i, p := 0, 0; i < n; i++ {
		k := 1 + (i*7)%5
		out[i] = strings.Join(pieces[p:p+k], " ")
		p += k
	}
	return out
}

// BenchmarkEmbedModels measures the embedding models that run through the Go ONNX path side
// by side, for docs/search.md "Choosing the embedding model": on the texts of
// BenchmarkEmbedThroughput (importChunks(1000), 50 to 250 words), one Embed call of all of
// them per iteration, as onnx.New runs them by default (one intra-op thread per run, a run
// per CPU). The cases:
//
//   - default: the installed model as Lectern runs it (the float model up to
//     onnx.IntegerMinTokens tokens, the integer model past them; these chunks are all past);
//   - float: every text on the float model (model.onnx);
//   - integer: every text on the integer model (model-qint8.onnx);
//   - one case per model directory in $LECTERN_BENCH_MODEL_DIRS (colon-separated, named by
//     the directory's base name), run as onnx.New runs it by default.
//
// Each reports chunks/s, CPU-ms/chunk and peak-RSS-MiB (the process's ru_maxrss after the
// case: it includes everything the process loaded before, so run one case per process, e.g.
// -bench 'BenchmarkEmbedModels/float$', to attribute it). With $LECTERN_BENCH_TEXTS_OUT
// set, the texts are first written there as a JSON array, so that scripts/embeddings-server.py
// --bench times other encoders on exactly these texts. Run with -benchtime=1x.
func BenchmarkEmbedModels(b *testing.B) {
	texts := importChunks(1000)
	if out := os.Getenv("LECTERN_BENCH_TEXTS_OUT"); out != "" {
		raw, err := json.Marshal(texts)
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(out, raw, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	type model struct {
		name string
		open func(b *testing.B) embed.Embedder
	}
	models := []model{
		{"default", func(b *testing.B) embed.Embedder { return Embedder(b) }},
		{"float", func(b *testing.B) embed.Embedder { return Embedder(b, onnx.WithIntegerModel(false)) }},
		{"integer", func(b *testing.B) embed.Embedder { return Embedder(b, onnx.WithIntegerMinTokens(0)) }},
	}
	for _, dir := range filepath.SplitList(os.Getenv("LECTERN_BENCH_MODEL_DIRS")) {
		if dir == "" {
			continue
		}
		models = append(models, model{filepath.Base(dir), func(b *testing.B) embed.Embedder {
			e, err := onnx.New(dir)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { e.Close() })
			return e
		}})
	}
	ctx := context.Background()
	for _, m := range models {
		b.Run(m.name, func(b *testing.B) {
			e := m.open(b)
			measureEmbed(b, e, texts, func() {
				if _, err := e.Embed(ctx, texts); err != nil {
					b.Fatal(err)
				}
			})
			b.ReportMetric(float64(peakRSS())/(1<<20), "peak-RSS-MiB")
		})
	}
}

// measureEmbed warms e up (its arenas), then times run, which embeds texts once, per
// benchmark iteration, and reports chunks/s and the process's CPU-ms per chunk.
func measureEmbed(b *testing.B, e embed.Embedder, texts []string, run func()) {
	if _, err := e.Embed(context.Background(), texts[:16]); err != nil {
		b.Fatal(err)
	}
	var wall, cpu time.Duration
	for b.Loop() {
		s, c0 := time.Now(), processCPU()
		run()
		wall += time.Since(s)
		cpu += processCPU() - c0
	}
	b.ReportMetric(float64(b.N*len(texts))/wall.Seconds(), "chunks/s")
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N*len(texts)), "CPU-ms/chunk")
}
