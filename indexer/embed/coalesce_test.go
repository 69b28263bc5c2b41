package embed

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"sync"
	"testing"
)

// gatedEmbedder records each call's texts and holds every call until release is closed;
// a text's vector is [len(text)].
type gatedEmbedder struct {
	mu      sync.Mutex
	calls   [][]string
	started chan struct{}
	release chan struct{}
	err     error
}

func (g *gatedEmbedder) Model() Info { return Info{Name: "gated", Dims: 1} }

func (g *gatedEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	g.mu.Lock()
	g.calls = append(g.calls, slices.Clone(texts))
	g.mu.Unlock()
	g.started <- struct{}{}
	select {
	case <-g.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if g.err != nil {
		return nil, g.err
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = []float32{float32(len(t))}
	}
	return out, nil
}

func (c *Coalescer) waiting() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.pending)
}

// TestCoalescerMerges: while one call runs, the calls that come meanwhile wait and then run
// together in one call of the model, each caller getting its own vectors in order.
func TestCoalescerMerges(t *testing.T) {
	inner := &gatedEmbedder{started: make(chan struct{}, 10), release: make(chan struct{})}
	c := NewCoalescer(inner, CoalesceOptions{Calls: 1})
	ctx := context.Background()
	inputs := [][]string{{"a"}, {"bb", "ccc"}, {"dddd"}, {"eeeee", "ffffff", "g"}}
	results := make([][][]float32, len(inputs))
	var wg sync.WaitGroup
	run := func(i int) {
		wg.Go(func() {
			v, err := c.Embed(ctx, inputs[i])
			if err != nil {
				t.Error(err)
			}
			results[i] = v
		})
	}
	run(0)
	<-inner.started // the first call runs alone, at once
	for i := 1; i < len(inputs); i++ {
		run(i)
	}
	for c.waiting() < len(inputs)-1 { // the others queue behind the running call
		runtime.Gosched()
	}
	close(inner.release)
	<-inner.started
	wg.Wait()
	if len(inner.calls) != 2 || len(inner.calls[0]) != 1 || len(inner.calls[1]) != 6 {
		t.Fatalf("model calls %q, want the first alone and the other three merged", inner.calls)
	}
	for i, in := range inputs {
		if len(results[i]) != len(in) {
			t.Fatalf("call %d: %d vectors for %d texts", i, len(results[i]), len(in))
		}
		for j, text := range in {
			if results[i][j][0] != float32(len(text)) {
				t.Errorf("call %d text %q: vector %v", i, text, results[i][j])
			}
		}
	}
}

// TestCoalescerCancel: a caller whose context ends gets its error at once, and the merged
// call goes on for the others; an error of the model reaches every caller of the call.
func TestCoalescerCancel(t *testing.T) {
	inner := &gatedEmbedder{started: make(chan struct{}, 10), release: make(chan struct{})}
	c := NewCoalescer(inner, CoalesceOptions{Calls: 1})
	first := make(chan error, 1)
	go func() { _, err := c.Embed(context.Background(), []string{"x"}); first <- err }()
	<-inner.started
	cctx, cancel := context.WithCancel(context.Background())
	gone := make(chan error, 1)
	go func() { _, err := c.Embed(cctx, []string{"gone"}); gone <- err }()
	kept := make(chan [][]float32, 1)
	go func() { v, _ := c.Embed(context.Background(), []string{"kept!"}); kept <- v }()
	for c.waiting() < 2 {
		runtime.Gosched()
	}
	cancel()
	if err := <-gone; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled caller: %v", err)
	}
	close(inner.release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	<-inner.started
	if v := <-kept; len(v) != 1 || v[0][0] != 5 {
		t.Fatalf("kept caller: %v", v)
	}

	boom := errors.New("boom")
	failing := &gatedEmbedder{started: make(chan struct{}, 10), release: make(chan struct{}), err: boom}
	close(failing.release)
	c = NewCoalescer(failing, CoalesceOptions{})
	if _, err := c.Embed(context.Background(), []string{"y"}); !errors.Is(err, boom) {
		t.Fatalf("model error: %v", err)
	}
}
