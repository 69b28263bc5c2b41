#!/usr/bin/env bash
# install-schemathesis.sh — install schemathesis (PyPI, pinned) into a virtual environment
# under $LECTERN_CACHE/schemathesis (default LECTERN_CACHE=$HOME/.cache/lectern) and print
# the path of its `st` command as the last line. Idempotent: a venv that already holds the
# pinned version is reused without touching the network.
set -euo pipefail

VERSION=4.32.5
CACHE_DIR="${LECTERN_CACHE:-${HOME:?HOME is not set}/.cache/lectern}"
VENV="$CACHE_DIR/schemathesis/venv-$VERSION"
PYTHON="${PYTHON:-python3}"

log() { echo "install-schemathesis: $*" >&2; }

# The version is read in full before it is matched: grep -q closing the pipe early would
# fail pip with SIGPIPE, and pipefail would call a good install broken.
installed() {
	[ -x "$VENV/bin/st" ] || return 1
	local v
	v=$("$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("schemathesis"))' 2>/dev/null) || return 1
	[ "$v" = "$VERSION" ]
}

if installed; then
	echo "$VENV/bin/st"
	exit 0
fi
command -v "$PYTHON" >/dev/null || { log "$PYTHON not found; install Python 3.9 or newer"; exit 1; }
rm -rf "$VENV"
mkdir -p "$(dirname "$VENV")"
# A failed install leaves no venv behind, so the check above never accepts half of one.
trap 'installed || rm -rf "$VENV"' EXIT
"$PYTHON" -m venv "$VENV" || { log "'$PYTHON -m venv' failed (apt-get install python3-venv)"; exit 1; }
log "installing schemathesis==$VERSION from PyPI ..."
"$VENV/bin/python" -m pip install --disable-pip-version-check --no-input --quiet --timeout 30 --retries 2 \
	"schemathesis==$VERSION" >&2 || { log "pip install schemathesis==$VERSION failed (is PyPI reachable?)"; exit 1; }
installed || { log "schemathesis $VERSION is not in the venv after pip install"; exit 1; }
log "installed schemathesis $VERSION"
echo "$VENV/bin/st"
