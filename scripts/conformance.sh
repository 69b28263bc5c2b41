#!/usr/bin/env bash
# Runs the ADL LRS conformance suite (adlnet/lrs-conformance-test-suite) against a fresh Lectern,
# for xAPI 1.0.3 and 2.0.0, in the embedded mode (SQLite statement store) and the distributed
# statements mode (Elasticsearch), each against a server set to the version it measures
# (LECTERN_XAPI_DEFAULT_VERSION).
#
#   scripts/conformance.sh                                  # both modes, both versions
#   CHECK=1 scripts/conformance.sh                          # and fail below full marks (make test)
#   MODES=embedded VERSIONS=2.0.0 GREP='XAPI-00113' scripts/conformance.sh
#
# The suite itself is never copied into the repository. Its unmodified copy lives next to the
# main checkout (../shared/conformance/lrs-conformance-test-suite; SUITE_SRC= names another); the
# script copies it into $LECTERN_CACHE/conformance/suite-<hash> (the runner writes its logs into
# its own directory) and installs its npm dependencies there with `npm install`, pinned by
# scripts/conformance/package-lock.json, with npm's cache under $LECTERN_CACHE/npm. SUITE= runs
# an already installed suite instead.
#
# Prints total / passed / failed (= total - passed: the runner's own failed count omits tests
# that never ran) per version and mode. Logs stay in $OUT (default a temp dir, removed after a
# CHECK run at full marks: the runner's logs come to about 80 MB).
set -euo pipefail

cd "$(dirname "$0")/.."
REPO=$(pwd)
CACHE=${LECTERN_CACHE:-$HOME/.cache/lectern}
SUITE=${SUITE:-}
MODES=${MODES:-embedded elastic}
VERSIONS=${VERSIONS:-1.0.3 2.0.0}
ENV_FILE=${ENV_FILE:-$CACHE/run/env}
OWN_OUT=""
[ -n "${OUT:-}" ] || { OUT=$(mktemp -d /tmp/lectern-conformance.XXXXXX); OWN_OUT=1; }
GREP=${GREP:-}
CHECK=${CHECK:-}
mkdir -p "$OUT"

# Full marks per version: the number of tests the pinned suite holds.
declare -A FULL=([1.0.3]=1365 [2.0.0]=1442)

log() { echo "[conformance] $*" >&2; }
die() { log "ERROR: $*"; exit 1; }

command -v node >/dev/null || die "node is required (apt-get install nodejs npm)"
command -v npm >/dev/null || die "npm is required (apt-get install npm)"

# suite_source prints the directory of the unmodified suite: $SUITE_SRC, else ../shared/conformance
# beside this checkout or, from a git worktree, beside the main checkout.
suite_source() {
	local candidates=() common
	if [ -n "${SUITE_SRC:-}" ]; then
		candidates=("$SUITE_SRC")
	else
		candidates=("$REPO/../shared/conformance/lrs-conformance-test-suite")
		if common=$(git rev-parse --path-format=absolute --git-common-dir 2>/dev/null); then
			candidates+=("$(dirname "$common")/../shared/conformance/lrs-conformance-test-suite")
		fi
	fi
	for d in "${candidates[@]}"; do
		[ -f "$d/bin/console_runner.js" ] && { (cd "$d" && pwd); return 0; }
	done
	die "no conformance suite found (looked in: ${candidates[*]}); set SUITE_SRC= to the suite's directory"
}

# install_suite SRC prints the path of a writable, installed copy of SRC in the cache, made once
# per suite content and lockfile (the directory name carries their hash).
install_suite() {
	local src=$1 lock=$REPO/scripts/conformance/package-lock.json sum dest stage
	sum=$({
		(cd "$src" && find . -type f ! -path './node_modules/*' ! -path './logs/*' -print0 |
			LC_ALL=C sort -z | xargs -0 sha256sum)
		sha256sum <"$lock"
	} | sha256sum | cut -c1-16)
	dest=$CACHE/conformance/suite-$sum
	if [ -f "$dest/.lectern-installed" ]; then
		echo "$dest"
		return 0
	fi
	mkdir -p "$CACHE/conformance"
	stage=$(mktemp -d "$CACHE/conformance/.stage.XXXXXX")
	cp -R "$src/." "$stage/"
	chmod -R u+w "$stage"
	rm -rf "$stage/node_modules" "$stage/logs"
	cp "$lock" "$stage/package-lock.json"
	log "installing the suite's npm dependencies into $dest (npm install, cache $CACHE/npm)"
	# npm install with our lockfile installs the locked versions. Not npm ci: node-env-file asks
	# for chai "latest", a tag npm ci checks against the registry's newest chai, so the lock
	# would go stale with every chai release (the module never loads chai).
	# --ignore-scripts: no dependency needs an install script to work.
	if ! (cd "$stage" && npm install --no-audit --no-fund --ignore-scripts --cache "$CACHE/npm" --loglevel=error) >&2; then
		rm -rf "$stage"
		die "npm install failed (is the npm registry reachable?)"
	fi
	touch "$stage/.lectern-installed"
	# Another run may have installed the same suite meanwhile: keep theirs.
	mv -T "$stage" "$dest" 2>/dev/null || rm -rf "$stage"
	echo "$dest"
}

if [ -z "$SUITE" ]; then
	SUITE=$(install_suite "$(suite_source)")
fi
[ -f "$SUITE/bin/console_runner.js" ] || die "no conformance suite at $SUITE"
[ -d "$SUITE/node_modules" ] || die "$SUITE has no node_modules (unset SUITE= to let this script install the suite)"

go build -o "$OUT/lectern" ./cmd/lectern

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

PID=""
ES_URL=""
PREFIX=""
stop_server() {
	if [ -n "$PID" ]; then kill "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; fi
	PID=""
	# Each Elasticsearch run has indexes of its own; leave the shared node as it was.
	if [ -n "$PREFIX" ]; then curl -s -o /dev/null -XDELETE "$ES_URL/$PREFIX*" || true; fi
	PREFIX=""
}
trap stop_server EXIT

# summarize LOG: "total passed failed" from the runner's JSON log (failed = total - passed).
summarize() {
	node -e '
		const log = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
		const s = log.summary || {};
		console.log(s.total + " " + s.passed + " " + (s.total - s.passed));
	' "$1"
}

# failures LOG: one line per failing test (its parent titles and the error), for triage.
failures() {
	node -e '
		const log = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
		const walk = (n, path) => {
			if (!n) return;
			const here = n.title ? path.concat(n.title) : path;
			if (n.tests && n.tests.length) { n.tests.forEach(t => walk(t, here)); return; }
			if (n.status === "failed") console.log(here.join(" > ") + " :: " + String(n.error || "").split("\n")[0]);
		};
		walk(log.log, []);
	' "$1"
}

# The embedded runs must not pick up a backend from the caller's environment.
BACKEND_VARS=(LECTERN_ELASTICSEARCH_URL LECTERN_ELASTICSEARCH_INDEX_PREFIX LECTERN_POSTGRES_URL
	LECTERN_REDIS_URL LECTERN_S3_ENDPOINT LECTERN_EMBEDDINGS_URL)
unset_backends=()
for v in "${BACKEND_VARS[@]}"; do unset_backends+=(-u "$v"); done

declare -a RESULTS=()
bad=0
for mode in $MODES; do
	backend=()
	if [ "$mode" = elastic ]; then
		ES_URL=${LECTERN_ELASTICSEARCH_URL:-${LECTERN_TEST_ELASTICSEARCH_URL:-}}
		if [ -z "$ES_URL" ] && [ -f "$ENV_FILE" ]; then
			ES_URL=$(bash -c "source '$ENV_FILE'; echo \${LECTERN_TEST_ELASTICSEARCH_URL:-}")
		fi
		if [ -z "$ES_URL" ] || ! curl -fs -o /dev/null "$ES_URL/_cluster/health" 2>/dev/null; then
			if [ -n "$CHECK" ]; then
				echo "== $mode: FAILED, no Elasticsearch answers at '${ES_URL}' (scripts/services.sh up)"
				RESULTS+=("$mode - - - -")
				bad=1
			else
				echo "== $mode: skipped (no Elasticsearch; run make services-up)"
			fi
			continue
		fi
	elif [ "$mode" != embedded ]; then
		die "unknown mode $mode (embedded or elastic)"
	fi
	for version in $VERSIONS; do
		[ -n "${FULL[$version]:-}" ] || die "unknown version $version (1.0.3 or 2.0.0)"
		data=$(mktemp -d /tmp/lectern-conformance-data.XXXXXX)
		port=$(free_port)
		user=root
		pass=conformance-$RANDOM$RANDOM
		backend=()
		if [ "$mode" = elastic ]; then
			PREFIX="conf$(date +%s)$RANDOM"_
			backend=(LECTERN_ELASTICSEARCH_URL="$ES_URL" LECTERN_ELASTICSEARCH_INDEX_PREFIX="$PREFIX")
		fi
		start=$SECONDS
		env "${unset_backends[@]}" "${backend[@]}" LECTERN_ADDR=127.0.0.1:$port LECTERN_CONTENT_ADDR=127.0.0.1:0 LECTERN_DATA_DIR="$data" \
			LECTERN_ROOT_USER=$user LECTERN_ROOT_PASSWORD=$pass LECTERN_SECRET_KEY=conformance \
			LECTERN_LOG_LEVEL=error LECTERN_XAPI_DEFAULT_VERSION="$version" \
			"$OUT/lectern" serve >"$OUT/lectern-$mode-$version.log" 2>&1 &
		PID=$!
		ready=""
		for _ in $(seq 1 300); do
			curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && { ready=1; break; }
			kill -0 "$PID" 2>/dev/null || break
			sleep 0.1
		done
		if [ -z "$ready" ]; then
			echo "== $mode $version: FAILED, the server did not become ready (see $OUT/lectern-$mode-$version.log)"
			stop_server
			rm -rf "$data"
			RESULTS+=("$mode $version - - -")
			bad=1
			continue
		fi
		echo "== $mode $version: running the suite against http://127.0.0.1:$port/lrs/TCAPI"
		args=(-x "$version" -e "http://127.0.0.1:$port/lrs/TCAPI" -a -u "$user" -p "$pass")
		[ -n "$GREP" ] && args+=(-g "$GREP")
		(cd "$SUITE" && node bin/console_runner.js "${args[@]}" >"$OUT/runner-$mode-$version.out" 2>&1) || true
		stop_server
		rm -rf "$data"
		log=$(sed -n 's/^Full run log written to //p' "$OUT/runner-$mode-$version.out" | tail -n 1)
		if [ -z "$log" ] || [ ! -f "$log" ]; then
			echo "   FAILED, no log written; see $OUT/runner-$mode-$version.out"
			RESULTS+=("$mode $version - - -")
			bad=1
			continue
		fi
		mv "$log" "$OUT/suite-$mode-$version.json"
		failures "$OUT/suite-$mode-$version.json" >"$OUT/failures-$mode-$version.txt"
		read -r total passed failed < <(summarize "$OUT/suite-$mode-$version.json")
		echo "   total $total  passed $passed  failed $failed  ($((SECONDS - start)) s, log $OUT/suite-$mode-$version.json)"
		RESULTS+=("$mode $version $total $passed $failed")
		# Full marks: every test passed, and (for a whole run) as many tests as the suite holds,
		# so that a run that stopped early cannot pass.
		if [ "$failed" != 0 ] || [ "$passed" != "$total" ] || { [ -z "$GREP" ] && [ "$total" != "${FULL[$version]}" ]; }; then
			want=${FULL[$version]}
			[ -n "$GREP" ] && want=$total
			echo "   BELOW FULL MARKS: $passed/$total passed, want $want/$want; failures in $OUT/failures-$mode-$version.txt:"
			head -n 20 "$OUT/failures-$mode-$version.txt" | sed 's/^/     /'
			bad=1
		fi
	done
done

echo
printf '%-10s %-8s %7s %7s %7s\n' mode version total passed failed
for r in "${RESULTS[@]}"; do printf '%-10s %-8s %7s %7s %7s\n' $r; done
if [ -n "$CHECK" ] && [ "$bad" != 0 ]; then
	echo "logs: $OUT"
	echo "conformance: below full marks (${FULL[1.0.3]}/${FULL[1.0.3]} for 1.0.3, ${FULL[2.0.0]}/${FULL[2.0.0]} for 2.0.0)"
	exit 1
fi
if [ -n "$CHECK" ] && [ -n "$OWN_OUT" ]; then
	rm -rf "$OUT"
	echo "full marks; logs removed (set OUT= to keep them)"
else
	echo "logs: $OUT"
fi
