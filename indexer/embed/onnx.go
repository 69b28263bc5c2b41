//go:build cgo

package embed

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
)

// ONNX is the default, local Embedder: a MiniLM-class BERT sentence model run
// on the CPU by ONNX Runtime, with BERT WordPiece tokenization, attention-mask
// mean pooling and L2 normalisation (the sentence-transformers recipe for
// all-MiniLM-L6-v2).
//
// An ONNX is safe for concurrent use; ONNX Runtime sessions support
// concurrent Run calls. Close releases the native resources.
type ONNX struct {
	info      Info
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

// ONNXOption configures [New].
type ONNXOption func(*onnxConfig)

type onnxConfig struct {
	batchSize   int
	batchTokens int
	threads     int
	parallel    int
	spinning    bool
	library     string
	integer     bool
	intMin      int
}

// WithBatchSize sets the most texts that go through the network in one run (default 32).
// Batches are also bounded by padded tokens (see [WithBatchTokens]), so long chunks run
// one at a time and only short texts, such as queries, fill a batch.
func WithBatchSize(n int) ONNXOption { return func(c *onnxConfig) { c.batchSize = n } }

// WithBatchTokens bounds a batch's padded size, texts × longest text in tokens (default
// 256). A run's activations grow with it, and past about one 256-token sequence they no
// longer fit a core's cache: on the 2-core reference machine one 128-token text per run
// took 20% less CPU per text than batches of 8. A text longer than the bound runs alone.
func WithBatchTokens(n int) ONNXOption { return func(c *onnxConfig) { c.batchTokens = n } }

// WithThreads sets ONNX Runtime's intra-op thread count per run (default 1). Parallelism
// comes from running several batches at once instead (see [WithParallelRuns]): one thread
// per run needs no synchronisation between operators, which on 2 shared vCPUs cost half
// the throughput (2 threads per run, two concurrent callers: 2.1× the CPU per text). n <= 0
// leaves the choice to ONNX Runtime.
func WithThreads(n int) ONNXOption { return func(c *onnxConfig) { c.threads = n } }

// WithParallelRuns sets how many runs may be in flight at once across all callers of one
// ONNX (default runtime.NumCPU() divided by the intra-op threads, at least 1).
func WithParallelRuns(n int) ONNXOption { return func(c *onnxConfig) { c.parallel = n } }

// WithSpinning lets ONNX Runtime's idle intra-op threads spin between operators (default
// off: they sleep). Spinning saves microseconds per operator on a machine whose cores are
// reserved for the embedder and costs whole cores on one shared with anything else; the
// benchmarks use it to reproduce the embedder as it was before issue 13.
func WithSpinning(on bool) ONNXOption { return func(c *onnxConfig) { c.spinning = on } }

// WithIntegerModel sets whether texts longer than [IntegerMinTokens] run on the manifest's
// integer model (integer_model_file, made by scripts/install-model.sh) when it has one
// (default on). Off, every text runs on the float model as before; the benchmarks use that
// as their "before".
func WithIntegerModel(on bool) ONNXOption { return func(c *onnxConfig) { c.integer = on } }

// WithIntegerMinTokens moves the length past which texts run on the integer model (default
// [IntegerMinTokens]); the evaluation uses 0 to measure the integer model on every text.
func WithIntegerMinTokens(n int) ONNXOption { return func(c *onnxConfig) { c.intMin = n } }

// WithRuntimeLibrary loads the ONNX Runtime shared library from path instead
// of the one named in the model directory's manifest.
func WithRuntimeLibrary(path string) ONNXOption { return func(c *onnxConfig) { c.library = path } }

// New loads the model installed in dir (see scripts/install-model.sh and
// [DefaultModelDir]). dir must hold lectern-model.json, the ONNX model, the
// WordPiece vocabulary and the ONNX Runtime shared library. A missing
// installation yields an error wrapping [ErrNoModel].
func New(dir string, opts ...ONNXOption) (*ONNX, error) {
	cfg := onnxConfig{batchSize: 32, batchTokens: 256, threads: 1, integer: true, intMin: IntegerMinTokens}
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
	e := &ONNX{info: Info{Name: m.Name, Dims: m.Dims}, tok: tok, batchSize: cfg.batchSize, batchTokens: cfg.batchTokens,
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

// open inspects the graph's inputs and outputs (exports differ: some lack
// token_type_ids, some add a pooled "sentence_embedding" output) and creates
// the session, and the integer model's when intPath is not empty.
func (e *ONNX) open(modelPath, intPath string, threads int, spinning bool) error {
	so, err := ort.NewSessionOptions()
	if err != nil {
		return fmt.Errorf("embed: session options: %w", err)
	}
	defer so.Destroy()
	if threads > 0 {
		if err := so.SetIntraOpNumThreads(threads); err != nil {
			return fmt.Errorf("embed: set threads: %w", err)
		}
	}
	// Idle intra-op threads sleep instead of spinning between operators: on a machine whose
	// cores are shared (other runs of this embedder, the database, other programs) a spinning
	// thread takes the core another one needs.
	spin := "0"
	if spinning {
		spin = "1"
	}
	for _, k := range []string{"session.intra_op.allow_spinning", "session.inter_op.allow_spinning"} {
		if err := so.AddSessionConfigEntry(k, spin); err != nil {
			return fmt.Errorf("embed: session options: %w", err)
		}
	}
	ins, outs, err := ort.GetInputOutputInfoWithOptions(modelPath, so)
	if err != nil {
		return fmt.Errorf("embed: read model %s: %w", modelPath, err)
	}
	have := map[string]bool{}
	for _, in := range ins {
		have[in.Name] = true
		switch in.Name {
		case "input_ids", "attention_mask", "token_type_ids":
			if in.DataType != ort.TensorElementDataTypeInt64 {
				return fmt.Errorf("embed: model input %s is %s, want int64", in.Name, in.DataType)
			}
		default:
			return fmt.Errorf("embed: model has unexpected input %q; not a BERT encoder", in.Name)
		}
		e.inputNames = append(e.inputNames, in.Name)
	}
	if !have["input_ids"] || !have["attention_mask"] {
		return fmt.Errorf("embed: model lacks input_ids/attention_mask inputs; not a BERT encoder")
	}
	// Prefer token embeddings so pooling uses the attention mask we built;
	// fall back to a pooled output when that is all the export offers.
	var outName string
	for _, o := range outs {
		d := o.Dimensions
		if len(d) == 3 && (d[2] < 0 || int(d[2]) == e.info.Dims) {
			outName = o.Name
			break
		}
	}
	if outName == "" {
		for _, o := range outs {
			if d := o.Dimensions; len(d) == 2 && (d[1] < 0 || int(d[1]) == e.info.Dims) {
				outName, e.pooledOutput = o.Name, true
				break
			}
		}
	}
	if outName == "" {
		return fmt.Errorf("embed: model has no [batch, seq, %d] or [batch, %d] output", e.info.Dims, e.info.Dims)
	}
	s, err := ort.NewDynamicAdvancedSession(modelPath, e.inputNames, []string{outName}, so)
	if err != nil {
		return fmt.Errorf("embed: load model %s: %w", modelPath, err)
	}
	if intPath != "" {
		// Derived from the float model by scripts/quantize-model.py: same inputs and output.
		is, err := ort.NewDynamicAdvancedSession(intPath, e.inputNames, []string{outName}, so)
		if err != nil {
			_ = s.Destroy()
			return fmt.Errorf("embed: load model %s: %w", intPath, err)
		}
		e.integer = is
	}
	e.session = s
	return nil
}

// Model reports the model name and dimension from the installation manifest.
func (e *ONNX) Model() Info { return e.info }

// Close releases the session and, with the last user, the ONNX Runtime
// environment. Embed after Close fails.
func (e *ONNX) Close() error {
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
func (e *ONNX) Embed(ctx context.Context, texts []string) ([][]float32, error) {
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

// IntegerMinTokens is the length (in tokens, with [CLS] and [SEP]) past which a text runs on
// the integer model, when the installation has one, instead of the float model.
//
// Why a split (docs/benchmarks.md, "Embedding speed"): the integer model needs about half
// the CPU per token, but it quantizes its activations with one scale per run, so a text's
// vector would depend on the texts batched with it (cosine 0.995 between two batchings);
// it therefore runs one text per run, and that run's fixed cost (about 1.3 ms) outweighs
// the saving below about 32 tokens. Shorter texts (search queries, skill names, titles)
// keep the float model in batches and the exact vectors they had before; longer ones
// (content chunks) get the integer model's, cosine 0.99+ to the float model's, with
// recall and MRR on the evaluation set unchanged. Every text gets one vector whatever
// it is embedded with.
const IntegerMinTokens = 32

// urgentTokens is the most tokens (all texts together) of a call that takes a free run slot
// before the waiting runs of longer calls: a search query is a few tokens, an imported chunk
// up to 256.
const urgentTokens = 64

// runSlots is a counting semaphore whose urgent waiters are served before the others.
type runSlots struct {
	size   int
	mu     sync.Mutex
	free   int
	urgent []chan struct{}
	normal []chan struct{}
}

func newRunSlots(n int) *runSlots { return &runSlots{size: n, free: n} }

// acquire takes a slot, waiting in line (the urgent line when urgent); false when ctx ended
// first.
func (r *runSlots) acquire(ctx context.Context, urgent bool) bool {
	r.mu.Lock()
	if r.free > 0 {
		r.free--
		r.mu.Unlock()
		return true
	}
	ch := make(chan struct{})
	line := &r.normal
	if urgent {
		line = &r.urgent
	}
	*line = append(*line, ch)
	r.mu.Unlock()
	select {
	case <-ch:
		return true
	case <-ctx.Done():
		r.mu.Lock()
		if i := slices.Index(*line, ch); i >= 0 {
			*line = slices.Delete(*line, i, i+1)
			r.mu.Unlock()
			return false
		}
		r.mu.Unlock()
		r.release() // granted meanwhile: pass it on
		return false
	}
}

// release returns a slot, to the first urgent waiter, else the first other one.
func (r *runSlots) release() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, line := range []*[]chan struct{}{&r.urgent, &r.normal} {
		if len(*line) > 0 {
			ch := (*line)[0]
			*line = (*line)[1:]
			close(ch)
			return
		}
	}
	r.free++
}

// run pushes one padded batch through the network and pools the result.
func (e *ONNX) run(ctx context.Context, session *ort.DynamicAdvancedSession, seqs [][]int32) ([][]float32, error) {
	n := len(seqs)
	width := 0
	for _, s := range seqs {
		width = max(width, len(s))
	}
	// One buffer holds input_ids, attention_mask and token_type_ids (zeros) back to back.
	size := n * width
	bp, _ := e.bufs.Get().(*[]int64)
	if bp == nil || cap(*bp) < 3*size {
		b := make([]int64, 3*max(size, min(e.batchTokens, 4096)))
		bp = &b
	}
	defer e.bufs.Put(bp)
	buf := (*bp)[:3*size]
	clear(buf)
	inputIDs, mask, types := buf[:size], buf[size:2*size], buf[2*size:]
	for i, s := range seqs {
		for j, id := range s {
			inputIDs[i*width+j] = int64(id)
			mask[i*width+j] = 1
		}
	}
	shape := ort.NewShape(int64(n), int64(width))
	inputs := make([]ort.Value, 0, len(e.inputNames))
	defer func() {
		for _, v := range inputs {
			v.Destroy()
		}
	}()
	for _, name := range e.inputNames {
		var data []int64
		switch name {
		case "input_ids":
			data = inputIDs
		case "attention_mask":
			data = mask
		default: // token_type_ids: single-segment input, all zeros
			data = types
		}
		t, err := ort.NewTensor(shape, data)
		if err != nil {
			return nil, fmt.Errorf("embed: input tensor: %w", err)
		}
		inputs = append(inputs, t)
	}

	// Cancelling ctx terminates a run in flight: a batch of long chunks
	// takes long enough on a small CPU that waiting for it would be noticeable.
	ro, err := ort.NewRunOptions()
	if err != nil {
		return nil, fmt.Errorf("embed: run options: %w", err)
	}
	done := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(done)
		ro.Terminate()
	})
	defer func() {
		if !stop() {
			<-done // Terminate is running or ran; wait before destroying ro
		}
		ro.Destroy()
	}()

	outputs := []ort.Value{nil}
	if err := session.RunWithOptions(inputs, outputs, ro); err != nil {
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		return nil, fmt.Errorf("embed: run model: %w", err)
	}
	defer outputs[0].Destroy()
	t, ok := outputs[0].(*ort.Tensor[float32])
	if !ok {
		return nil, fmt.Errorf("embed: model output is %T, want float32 tensor", outputs[0])
	}
	data, oshape := t.GetData(), t.GetShape()
	dims := e.info.Dims
	if oshape[len(oshape)-1] != int64(dims) {
		return nil, fmt.Errorf("embed: model returns %d-dim vectors, manifest says %d", oshape[len(oshape)-1], dims)
	}

	res := make([][]float32, n)
	flat := make([]float32, n*dims) // one allocation for the batch's vectors
	acc := make([]float64, dims)
	for i := range seqs {
		v := flat[i*dims : (i+1)*dims : (i+1)*dims]
		if e.pooledOutput {
			copy(v, data[i*dims:(i+1)*dims])
		} else {
			meanPool(v, acc, data[i*width*dims:(i+1)*width*dims], len(seqs[i]), dims)
		}
		normalize(v)
		res[i] = v
	}
	return res, nil
}

// meanPool averages the first n token vectors of one sequence's hidden
// states (row-major [width, dims]). Tokens are left-aligned, so "the first n"
// is exactly the attention mask; padding never enters the mean. Accumulating
// in float64 keeps results independent of batch composition.
func meanPool(dst []float32, acc []float64, hidden []float32, n, dims int) {
	clear(acc)
	for t := 0; t < n; t++ {
		row := hidden[t*dims : (t+1)*dims]
		for k, x := range row {
			acc[k] += float64(x)
		}
	}
	for k := range dst {
		dst[k] = float32(acc[k] / float64(n))
	}
}

// runtimeRef counts users of the process-wide ONNX Runtime environment.
type runtimeRef struct{}

// ortRuntime is the package's only mutable package-level state, and it exists
// because ONNX Runtime's environment (and the dlopen'ed library behind it) is
// itself one per process: several ONNX embedders must share it, and it may
// be torn down only when the last one closes.
var ortRuntime struct {
	mu   sync.Mutex
	refs int
	lib  string
}

func acquireRuntime(lib string) (*runtimeRef, error) {
	ortRuntime.mu.Lock()
	defer ortRuntime.mu.Unlock()
	if ortRuntime.refs > 0 {
		if ortRuntime.lib != lib {
			return nil, fmt.Errorf("embed: ONNX Runtime already loaded from %s; cannot also load %s in one process", ortRuntime.lib, lib)
		}
		ortRuntime.refs++
		return &runtimeRef{}, nil
	}
	if ort.IsInitialized() {
		return nil, errors.New("embed: ONNX Runtime was initialised outside this package")
	}
	ort.SetSharedLibraryPath(lib)
	if err := ort.InitializeEnvironment(ort.WithLogLevelError()); err != nil {
		return nil, fmt.Errorf("embed: load ONNX Runtime from %s: %w", lib, err)
	}
	ortRuntime.refs, ortRuntime.lib = 1, lib
	return &runtimeRef{}, nil
}

func (*runtimeRef) release() {
	ortRuntime.mu.Lock()
	defer ortRuntime.mu.Unlock()
	ortRuntime.refs--
	if ortRuntime.refs == 0 {
		_ = ort.DestroyEnvironment()
		ortRuntime.lib = ""
	}
}
