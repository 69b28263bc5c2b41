//go:build cgo

package onnx

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/lectern-lms/lectern/indexer/embed"
)

// Embedder is the default, local [embed.Embedder]: a MiniLM-class BERT sentence model run
// on the CPU by ONNX Runtime, with BERT WordPiece tokenization, attention-mask
// mean pooling and L2 normalisation (the sentence-transformers recipe for
// all-MiniLM-L6-v2).
//
// An Embedder is safe for concurrent use; ONNX Runtime sessions support
// concurrent Run calls. Close releases the native resources.
type Embedder struct {
	info      embed.Info
	tok       *wordPiece
	batchSize int
	// batchTokens bounds a batch's padded size (sequences × longest); see Embed.
	batchTokens int
	// intMin is the length past which a text runs on integer (IntegerMinTokens).
	intMin int

	inputNames   []string // order of the session inputs
	pooledOutput bool     // model already returns [batch, dims]

	// slots bounds the runs in flight across every caller: one per core with one intra-op
	// thread each, so concurrent index tasks and searches share the CPU instead of
	// oversubscribing it.
	slots *runSlots
	// bufs recycles the int64 input buffers of a run.
	bufs sync.Pool

	mu      sync.RWMutex // guards session against Close during Embed
	session *ort.DynamicAdvancedSession
	// integer runs texts longer than IntegerMinTokens, one per run (see IntegerMinTokens);
	// nil without an integer model.
	integer *ort.DynamicAdvancedSession
	runtime *runtimeRef
}

// New loads the model installed in dir (see scripts/install-model.sh and
// [DefaultModelDir]). dir must hold lectern-model.json, the ONNX model, the
// WordPiece vocabulary and the ONNX Runtime shared library. A missing
// installation yields an error wrapping [ErrNoModel].
func New(dir string, opts ...Option) (*Embedder, error) {
	cfg := config{batchSize: 32, batchTokens: 256, threads: 1, integer: true, intMin: IntegerMinTokens}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.batchSize <= 0 {
		return nil, fmt.Errorf("embed: batch size must be positive, got %d", cfg.batchSize)
	}
	if cfg.batchTokens <= 0 {
		return nil, fmt.Errorf("embed: batch tokens must be positive, got %d", cfg.batchTokens)
	}
	if cfg.parallel <= 0 {
		cfg.parallel = max(1, runtime.NumCPU()/max(cfg.threads, 1))
	}
	m, err := readManifest(dir)
	if err != nil {
		return nil, err
	}
	tok, err := loadWordPiece(filepath.Join(dir, m.VocabFile), m.DoLowerCase, m.MaxTokens)
	if err != nil {
		return nil, fmt.Errorf("embed: %w", err)
	}
	lib := cfg.library
	if lib == "" {
		lib = filepath.Join(dir, m.RuntimeLibrary)
	}
	rt, err := acquireRuntime(lib)
	if err != nil {
		return nil, err
	}
	e := &Embedder{info: embed.Info{Name: m.Name, Dims: m.Dims}, tok: tok, batchSize: cfg.batchSize, batchTokens: cfg.batchTokens,
		intMin: cfg.intMin, slots: newRunSlots(cfg.parallel), runtime: rt}
	intFile := ""
	if cfg.integer && m.IntegerModelFile != "" {
		intFile = filepath.Join(dir, m.IntegerModelFile)
	}
	if err := e.open(filepath.Join(dir, m.ModelFile), intFile, cfg.threads, cfg.spinning); err != nil {
		rt.release()
		return nil, err
	}
	return e, nil
}

// Model reports the model name and dimension from the installation manifest.
func (e *Embedder) Model() embed.Info { return e.info }

// Close releases the session and, with the last user, the ONNX Runtime
// environment. Embed after Close fails.
func (e *Embedder) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.session == nil {
		return nil
	}
	err := e.session.Destroy()
	if e.integer != nil {
		err = errors.Join(err, e.integer.Destroy())
		e.integer = nil
	}
	e.session = nil
	e.runtime.release()
	return err
}

// Embed embeds texts. Each text is tokenized once; texts are sorted by token count and cut
// into batches of similar length (at most WithBatchSize texts and WithBatchTokens padded
// tokens, so padding stays small and long chunks run alone), and the batches run on up to
// WithParallelRuns runs at once, shared with every other caller. A text's vector does not
// depend on its batch: padding is masked out of the mean. Results come back in input order.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	if len(texts) == 0 {
		return out, nil
	}
	ids := make([][]int32, len(texts))
	order := make([]int, len(texts))
	for i, t := range texts {
		ids[i] = e.tok.encode(t)
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return len(ids[a]) - len(ids[b]) })

	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.session == nil {
		return nil, errors.New("embed: embedder is closed")
	}
	// Batches from the longest down: the slowest runs start first, so the last one to
	// finish is short. A text for the integer model runs alone (see IntegerMinTokens).
	var batches [][]int
	for end := len(order); end > 0; {
		start, width := end-1, len(ids[order[end-1]])
		if e.integer == nil || width <= e.intMin {
			for start > 0 && end-start < e.batchSize && (end-start+1)*width <= e.batchTokens {
				start--
			}
		}
		batches = append(batches, order[start:end])
		end = start
	}
	// A short call (a search query) goes before the queued runs of long ones (imports), so
	// searching stays fast while content is being indexed.
	tokens := 0
	for _, s := range ids {
		tokens += len(s)
	}
	urgent := tokens <= urgentTokens
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(len(batches), e.slots.size) {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= len(batches) || ctx.Err() != nil {
					return
				}
				if !e.slots.acquire(ctx, urgent) {
					return
				}
				batch := batches[i]
				seqs := make([][]int32, len(batch))
				for j, idx := range batch {
					seqs[j] = ids[idx]
				}
				session := e.session
				if e.integer != nil && len(seqs[0]) > e.intMin {
					session = e.integer
				}
				vecs, err := e.run(ctx, session, seqs)
				e.slots.release()
				if err != nil {
					cancel(err)
					return
				}
				for j, idx := range batch {
					out[idx] = vecs[j]
				}
			}
		})
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return nil, err
	}
	return out, nil
}

// urgentTokens is the most tokens (all texts together) of a call that takes a free run slot
// before the waiting runs of longer calls: a search query is a few tokens, an imported chunk
// up to 256.
const urgentTokens = 64
