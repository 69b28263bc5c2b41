//go:build cgo

package onnx

import (
	"context"
	"fmt"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/lectern-lms/lectern/indexer/embed"
)

// open inspects the graph's inputs and outputs (exports differ: some lack
// token_type_ids, some add a pooled "sentence_embedding" output) and creates
// the session, and the integer model's when intPath is not empty.
func (e *Embedder) open(modelPath, intPath string, threads int, spinning bool) error {
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

// run pushes one padded batch through the network and pools the result.
func (e *Embedder) run(ctx context.Context, session *ort.DynamicAdvancedSession, seqs [][]int32) ([][]float32, error) {
	var res [][]float32
	err := e.forward(ctx, session, seqs, func(data []float32, width int) error {
		dims := e.info.Dims
		res = make([][]float32, len(seqs))
		flat := make([]float32, len(seqs)*dims) // one allocation for the batch's vectors
		acc := make([]float64, dims)
		for i := range seqs {
			v := flat[i*dims : (i+1)*dims : (i+1)*dims]
			if e.pooledOutput {
				copy(v, data[i*dims:(i+1)*dims])
			} else {
				meanPool(v, acc, data[i*width*dims:(i+1)*width*dims], len(seqs[i]), dims)
			}
			embed.Normalize(v)
			res[i] = v
		}
		return nil
	})
	return res, err
}

// forward pushes one padded batch through the network and hands the output (the pooled
// [batch, dims] vectors, or the [batch, width, dims] token states) to read before it is
// released.
func (e *Embedder) forward(ctx context.Context, session *ort.DynamicAdvancedSession, seqs [][]int32, read func(data []float32, width int) error) error {
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
			return fmt.Errorf("embed: input tensor: %w", err)
		}
		inputs = append(inputs, t)
	}

	// Cancelling ctx terminates a run in flight: a batch of long chunks
	// takes long enough on a small CPU that waiting for it would be noticeable.
	ro, err := ort.NewRunOptions()
	if err != nil {
		return fmt.Errorf("embed: run options: %w", err)
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
			return context.Cause(ctx)
		}
		return fmt.Errorf("embed: run model: %w", err)
	}
	defer outputs[0].Destroy()
	t, ok := outputs[0].(*ort.Tensor[float32])
	if !ok {
		return fmt.Errorf("embed: model output is %T, want float32 tensor", outputs[0])
	}
	data, oshape := t.GetData(), t.GetShape()
	dims := e.info.Dims
	if oshape[len(oshape)-1] != int64(dims) {
		return fmt.Errorf("embed: model returns %d-dim vectors, manifest says %d", oshape[len(oshape)-1], dims)
	}
	return read(data, width)
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
