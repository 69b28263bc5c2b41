package embed

import (
	"context"
	"sync"
)

// Coalescer is an Embedder that merges Embed calls made at the same time into one call of
// the wrapped embedder. Content imports embed per document (a title and some 60 candidate
// phrases of one to three words for the generated fields, one or two chunks), from several
// index tasks at once; the local model sorts a call's texts by length into batches, so one
// call of several documents' texts makes fuller batches of more even lengths, with less
// padding, than each document alone (issue 27: about a fifth less model CPU for the
// generation's texts). Calls are merged only while the wrapped embedder is busy: an idle
// Coalescer passes a call straight on, so a lone call waits for nothing.
//
// Use it for imports only: a search query merged into an import's call would lose the
// model's priority for short calls.
type Coalescer struct {
	inner    Embedder
	maxTexts int
	calls    int

	mu      sync.Mutex
	pending []*coalesced
	running int // merged calls in flight
}

// CoalesceOptions tune a Coalescer; the zero value is ready to use.
type CoalesceOptions struct {
	// MaxTexts is the most texts of one merged call (default 512); a call with more is
	// passed on alone.
	MaxTexts int
	// Calls is how many merged calls run at once (default 2): while one finishes its last,
	// partly filled batch, the next keeps the model's other runs busy.
	Calls int
}

type coalesced struct {
	ctx   context.Context
	texts []string
	vecs  [][]float32
	err   error
	done  chan struct{}
}

// NewCoalescer wraps inner.
func NewCoalescer(inner Embedder, opts CoalesceOptions) *Coalescer {
	if opts.MaxTexts <= 0 {
		opts.MaxTexts = 512
	}
	if opts.Calls <= 0 {
		opts.Calls = 2
	}
	return &Coalescer{inner: inner, maxTexts: opts.MaxTexts, calls: opts.Calls}
}

// Model returns the wrapped embedder's Info.
func (c *Coalescer) Model() Info { return c.inner.Model() }

// Embed embeds texts, in one call of the wrapped embedder with the texts of other calls
// waiting at the same time. The wrapped embedder's vector of a text must not depend on the
// texts embedded with it (true of the local model, which masks the padding out of the mean,
// and of an embeddings API), so the answer is the one a call alone would get. When ctx ends first, Embed
// returns its error; the merged call goes on for the others.
func (c *Coalescer) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) == 0 || len(texts) >= c.maxTexts {
		return c.inner.Embed(ctx, texts)
	}
	r := &coalesced{ctx: ctx, texts: texts, done: make(chan struct{})}
	c.mu.Lock()
	c.pending = append(c.pending, r)
	if c.running < c.calls {
		c.running++
		go c.serve()
	}
	c.mu.Unlock()
	select {
	case <-r.done:
		return r.vecs, r.err
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// serve runs merged calls while calls are waiting.
func (c *Coalescer) serve() {
	for {
		c.mu.Lock()
		var group []*coalesced
		n := 0
		for len(c.pending) > 0 && (len(group) == 0 || n+len(c.pending[0].texts) <= c.maxTexts) {
			r := c.pending[0]
			c.pending = c.pending[1:]
			if r.ctx.Err() != nil {
				r.err = context.Cause(r.ctx)
				close(r.done)
				continue
			}
			group = append(group, r)
			n += len(r.texts)
		}
		if len(group) == 0 {
			c.running--
			c.mu.Unlock()
			return
		}
		c.mu.Unlock()
		c.run(group, n)
	}
}

// run embeds the texts of group in one call, under a context that ends when every caller's
// has ended.
func (c *Coalescer) run(group []*coalesced, n int) {
	if len(group) == 1 {
		r := group[0]
		r.vecs, r.err = c.inner.Embed(r.ctx, r.texts)
		close(r.done)
		return
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(group[0].ctx))
	defer cancel()
	var mu sync.Mutex
	live := len(group)
	for _, r := range group {
		stop := context.AfterFunc(r.ctx, func() {
			mu.Lock()
			defer mu.Unlock()
			if live--; live == 0 {
				cancel()
			}
		})
		defer stop()
	}
	texts := make([]string, 0, n)
	for _, r := range group {
		texts = append(texts, r.texts...)
	}
	vecs, err := c.inner.Embed(ctx, texts)
	at := 0
	for _, r := range group {
		if err != nil {
			r.err = err
		} else {
			r.vecs = vecs[at : at+len(r.texts) : at+len(r.texts)]
		}
		at += len(r.texts)
		close(r.done)
	}
}
