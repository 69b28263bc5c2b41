package onnx

// Option configures [New]. Without cgo, where New always fails, options have no effect.
type Option func(*config)

// config is what the options set; [New] fills in the defaults.
type config struct {
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
func WithBatchSize(n int) Option { return func(c *config) { c.batchSize = n } }

// WithBatchTokens bounds a batch's padded size, texts × longest text in tokens (default
// 256). A run's activations grow with it, and past about one 256-token sequence they no
// longer fit a core's cache: on the 2-core reference machine one 128-token text per run
// took 20% less CPU per text than batches of 8. A text longer than the bound runs alone.
func WithBatchTokens(n int) Option { return func(c *config) { c.batchTokens = n } }

// WithThreads sets ONNX Runtime's intra-op thread count per run (default 1). Parallelism
// comes from running several batches at once instead (see [WithParallelRuns]): one thread
// per run needs no synchronisation between operators, which on 2 shared vCPUs cost half
// the throughput (2 threads per run, two concurrent callers: 2.1× the CPU per text). n <= 0
// leaves the choice to ONNX Runtime.
func WithThreads(n int) Option { return func(c *config) { c.threads = n } }

// WithParallelRuns sets how many runs may be in flight at once across all callers of one
// Embedder (default runtime.NumCPU() divided by the intra-op threads, at least 1).
func WithParallelRuns(n int) Option { return func(c *config) { c.parallel = n } }

// WithSpinning lets ONNX Runtime's idle intra-op threads spin between operators (default
// off: they sleep). Spinning saves microseconds per operator on a machine whose cores are
// reserved for the embedder and costs whole cores on one shared with anything else; the
// benchmarks use it to reproduce the embedder as it was before issue 13.
func WithSpinning(on bool) Option { return func(c *config) { c.spinning = on } }

// WithIntegerModel sets whether texts longer than [IntegerMinTokens] run on the manifest's
// integer model (integer_model_file, made by scripts/install-model.sh) when it has one
// (default on). Off, every text runs on the float model as before; the benchmarks use that
// as their "before".
func WithIntegerModel(on bool) Option { return func(c *config) { c.integer = on } }

// WithIntegerMinTokens moves the length past which texts run on the integer model (default
// [IntegerMinTokens]); the evaluation uses 0 to measure the integer model on every text.
func WithIntegerMinTokens(n int) Option { return func(c *config) { c.intMin = n } }

// WithRuntimeLibrary loads the ONNX Runtime shared library from path instead
// of the one named in the model directory's manifest.
func WithRuntimeLibrary(path string) Option { return func(c *config) { c.library = path } }

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
