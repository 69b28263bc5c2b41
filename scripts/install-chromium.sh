#!/usr/bin/env bash
# Installs Debian's Chromium for the player's browser tests (chromedp), unless it is there.
# Prints the browser's path.
set -euo pipefail
for b in chromium chromium-browser; do
	if p=$(command -v "$b"); then echo "$p"; exit 0; fi
done
if [ "$(id -u)" = 0 ]; then
	apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >&2
else
	sudo apt-get update -qq >&2 && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >&2
fi
command -v chromium
