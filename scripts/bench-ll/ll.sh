# shellcheck shell=bash
# ll.sh — sourced by scripts/bench-ingest.sh and scripts/bench-query.sh: installs Learning
# Locker's statement service (xapi-statements 5.0.1, pinned by package-lock.json next to this
# file) into $LL_DIR with `npm ci`, starts and stops it in memory on a loopback port.
# Needs REPO, CACHE and LL_DIR set by the caller.

ll_install() {
	command -v npm >/dev/null || { echo "bench: npm is required (apt-get install npm)" >&2; exit 1; }
	mkdir -p "$LL_DIR"
	if ! cmp -s "$REPO/scripts/bench-ll/package-lock.json" "$LL_DIR/package-lock.json" || [ ! -d "$LL_DIR/node_modules/xapi-statements" ]; then
		cp "$REPO/scripts/bench-ll/package.json" "$REPO/scripts/bench-ll/package-lock.json" "$LL_DIR/"
		(cd "$LL_DIR" && npm ci --cache "$CACHE/npm" --no-audit --no-fund --loglevel=error)
	fi
}

ll_pid=""
ll_url=""

# ll_start starts an empty Learning Locker and sets ll_url to its xAPI endpoint.
ll_start() {
	local port
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	# In-memory models and storage, the test auth repo (any Basic credentials) and no events
	# repo: the service's own statement path, nothing else on the machine.
	# Run from the cache: the service writes access logs under ./storage of its working directory.
	(cd "$LL_DIR" && exec env EXPRESS_PORT="$port" MODELS_REPO=memory STORAGE_REPO=memory AUTH_REPO=test EVENTS_REPO=test \
		WINSTON_CONSOLE_LEVEL=error node "$LL_DIR/node_modules/xapi-statements/dist/server.js" >"$LL_DIR/server.log" 2>&1) &
	ll_pid=$!
	for _ in $(seq 100); do
		curl -fs "http://127.0.0.1:$port/xAPI/about" >/dev/null 2>&1 && break
		sleep 0.1
	done
	ll_url="http://127.0.0.1:$port/xAPI"
}

stop_ll() { if [ -n "$ll_pid" ]; then kill "$ll_pid" 2>/dev/null || true; wait "$ll_pid" 2>/dev/null || true; ll_pid=""; fi; }
