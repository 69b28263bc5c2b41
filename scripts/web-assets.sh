#!/usr/bin/env bash
# Builds the browser assets the binary embeds, from pinned npm packages (npm cache under
# ~/.cache/lectern/npm); the copied files are not committed:
#   - the player's SCORM runtime: scorm-again (web/player) into server/player/assets;
#   - the web console's libraries: htmx and Pico CSS (web/console) into server/console/assets.
set -euo pipefail
cd "$(dirname "$0")/.."

# install DIR SENTINEL: npm ci in DIR when SENTINEL is missing or older than the lock file.
install() {
	if [ ! -f "$2" ] || [ "$1/package-lock.json" -nt "$2" ]; then
		command -v npm >/dev/null || { echo "web-assets: npm is required (apt-get install npm)" >&2; exit 1; }
		(cd "$1" && npm ci --cache "$HOME/.cache/lectern/npm" --no-audit --no-fund --loglevel=error)
	fi
}

# copy SRC DST: copy when the content differs, so an unchanged asset keeps its mtime.
copy() { cmp -s "$1" "$2" || cp "$1" "$2"; }

install web/player web/player/node_modules/scorm-again/dist/scorm-again.min.js
copy web/player/node_modules/scorm-again/dist/scorm-again.min.js server/player/assets/scorm-again.min.js

install web/console web/console/node_modules/htmx.org/dist/htmx.min.js
copy web/console/node_modules/htmx.org/dist/htmx.min.js server/console/assets/htmx.min.js
copy web/console/node_modules/@picocss/pico/css/pico.min.css server/console/assets/pico.min.css
