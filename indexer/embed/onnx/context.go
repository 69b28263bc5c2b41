package onnx

import (
	"context"
	"errors"
	"slices"

	"github.com/lectern-lms/lectern/indexer/embed"
)

// ErrNoTokenStates is returned by EmbedInContext for a model that outputs pooled vectors
// only: there are no token states to read phrases from.
var ErrNoTokenStates = errors.New("embed: the model returns pooled vectors, not token states")

// EmbedInContext embeds each of texts as Embed does (the same vectors) and, from the same run
// of the network, each phrase as it occurs in that text: the normalized mean of the contextual
// states of its tokens over its occurrences (whole words only); phrases[i][k] is nil when
// texts[i] does not hold phrase k within its first MaxTokens tokens. The phrases cost no run
// of their own: a document's keyphrase candidates read from its chunks' runs instead of one
// run each. One call holds the embedder open for all of texts, as Embed does, so a Close
// waits for it and a caller that stops gets its context's cause.
func (e *Embedder) EmbedInContext(ctx context.Context, texts, phrases []string) ([][]float32, [][][]float32, error) {
	pids := make([][]int32, len(phrases))
	for k, p := range phrases {
		enc := e.tok.encode(p)
		pids[k] = enc[1 : len(enc)-1] // without [CLS] and [SEP]
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.session == nil {
		return nil, nil, errors.New("embed: embedder is closed")
	}
	if e.pooledOutput {
		return nil, nil, ErrNoTokenStates
	}
	vecs, found := make([][]float32, len(texts)), make([][][]float32, len(texts))
	for i, text := range texts {
		v, pv, err := e.inContext(ctx, e.tok.encode(text), pids)
		if err != nil {
			return nil, nil, err
		}
		vecs[i], found[i] = v, pv
	}
	return vecs, found, nil
}

// inContext runs one text (ids) on a run slot and reads its vector and the phrases (pids).
// The caller holds mu.
func (e *Embedder) inContext(ctx context.Context, ids []int32, pids [][]int32) ([]float32, [][]float32, error) {
	session := e.session
	if e.integer != nil && len(ids) > e.intMin {
		session = e.integer
	}
	if !e.slots.acquire(ctx, false) {
		return nil, nil, context.Cause(ctx)
	}
	defer e.slots.release()
	dims := e.info.Dims
	vec, out := make([]float32, dims), make([][]float32, len(pids))
	err := e.forward(ctx, session, [][]int32{ids}, func(data []float32, _ int) error {
		acc := make([]float64, dims)
		meanPool(vec, acc, data, len(ids), dims)
		embed.Normalize(vec)
		for k, p := range pids {
			if len(p) == 0 {
				continue
			}
			clear(acc)
			n := 0
			// Between [CLS] and [SEP]; an occurrence must not end inside a word.
			for at := 1; at+len(p) <= len(ids)-1; at++ {
				if !slices.Equal(ids[at:at+len(p)], p) || e.tok.piece[ids[at+len(p)]] {
					continue
				}
				for t := at; t < at+len(p); t++ {
					for d, x := range data[t*dims : (t+1)*dims] {
						acc[d] += float64(x)
					}
				}
				n += len(p)
			}
			if n == 0 {
				continue
			}
			v := make([]float32, dims)
			for d := range v {
				v[d] = float32(acc[d] / float64(n))
			}
			embed.Normalize(v)
			out[k] = v
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return vec, out, nil
}
