package embed

import (
	"context"
	"time"
)

// Observe wraps e so that observe hears, after every Embed call, how many vectors it computed
// (0 when the call failed) and how long it took. Wrap the bare model, below any [Cached], when
// only computed vectors should count. The hook is a plain func so that the instrumentation
// above this package (cmd/lectern's metrics) is never imported by it. A nil e or observe
// returns e unchanged.
func Observe(e Embedder, observe func(vectors int, d time.Duration)) Embedder {
	if e == nil || observe == nil {
		return e
	}
	return &observed{Embedder: e, observe: observe}
}

type observed struct {
	Embedder
	observe func(vectors int, d time.Duration)
}

func (o *observed) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	start := time.Now()
	vecs, err := o.Embedder.Embed(ctx, texts)
	n := len(vecs)
	if err != nil {
		n = 0
	}
	o.observe(n, time.Since(start))
	return vecs, err
}
