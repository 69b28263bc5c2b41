// Package embed turns text into dense sentence vectors for semantic search.
//
// The indexer, the HTTP layer and the job handlers depend only on the [Embedder] port, so that
// none of them links a model runtime. Two adapters implement it:
//
//   - package indexer/embed/onnx: a pretrained sentence-embedding model
//     (all-MiniLM-L6-v2, int8 ONNX) run locally on the CPU through ONNX Runtime.
//     It is a package of its own because it links ONNX Runtime through cgo;
//     only cmd/ and the evaluation and benchmark code import it.
//   - [OpenAI]: any OpenAI-compatible POST /v1/embeddings endpoint (OpenAI,
//     Ollama, Hugging Face TEI, vLLM, llama.cpp).
//
// [Cached] wraps either one so that re-indexing does not re-embed unchanged
// text, over an in-memory [LRU] or a [RecordCache] that keeps each tenant's
// vectors in the record store across restarts and indexer processes. Every
// Embedder reports an [Info] (model name and dimension) that the index stores;
// vectors from different models must never be mixed, because their spaces are
// unrelated even when their dimensions happen to agree.
package embed

import (
	"context"
	"math"
)

// Info identifies the vector space an Embedder produces. Two Embedders whose
// Info differ produce incomparable vectors; the index records Info and
// refuses to mix them.
type Info struct {
	// Name is the model identifier, e.g. "all-MiniLM-L6-v2-onnx-int8" or
	// "nomic-embed-text".
	Name string
	// Dims is the length of every vector the model returns.
	Dims int
}

// Embedder turns texts into vectors.
//
// Embed returns one vector per input text, in input order, each of length
// Model().Dims. Implementations are safe for concurrent use, batch large
// inputs themselves, and honour ctx cancellation.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	Model() Info
}

// Cosine returns the cosine similarity of a and b (0 when either is a zero
// vector or their lengths differ). Vectors from an [Embedder] are already
// L2-normalised, for which this equals the dot product; computing the norms
// anyway keeps the function correct for vectors from elsewhere.
func Cosine(a, b []float32) float64 {
	if len(a) != len(b) || len(a) == 0 {
		return 0
	}
	var dot, na, nb float64
	for i := range a {
		x, y := float64(a[i]), float64(b[i])
		dot += x * y
		na += x * x
		nb += y * y
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / (math.Sqrt(na) * math.Sqrt(nb))
}

// Normalize scales v to unit L2 length in place. Every adapter returns unit vectors: they
// make cosine similarity a plain dot product, which is what kNN indexes expect.
func Normalize(v []float32) {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	if sum == 0 {
		return
	}
	inv := 1 / math.Sqrt(sum)
	for i := range v {
		v[i] = float32(float64(v[i]) * inv)
	}
}
