#!/usr/bin/env bash
# Builds the player's runtime assets: installs the pinned scorm-again from web/player's
# package-lock.json (npm cache under ~/.cache/lectern/npm) and copies its browser bundle into
# server/player/assets, which the binary embeds. The copied files are not committed.
set -euo pipefail
cd "$(dirname "$0")/.."
out=server/player/assets/scorm-again.min.js
src=web/player/node_modules/scorm-again/dist/scorm-again.min.js
if [ ! -f "$src" ] || [ web/player/package-lock.json -nt "$src" ]; then
	command -v npm >/dev/null || { echo "player-assets: npm is required (apt-get install npm)" >&2; exit 1; }
	(cd web/player && npm ci --cache "$HOME/.cache/lectern/npm" --no-audit --no-fund --loglevel=error)
fi
if ! cmp -s "$src" "$out"; then
	cp "$src" "$out"
fi
