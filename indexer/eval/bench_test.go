package eval

import (
	"context"
	"testing"
	"time"
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
