#!/usr/bin/env bash
# Runs ADL's cmi5 LMS Test Suite (CATAPULT lts/: __tests__/package.js and __tests__/runtime.js,
# jest + puppeteer on Debian's Chromium) against a fresh `lectern all`, in the embedded mode and
# the distributed mode (PostgreSQL, Redis, MinIO, Elasticsearch from ~/.cache/lectern/run/env).
#
#   scripts/cmi5-lts.sh                        # both modes
#   MODES=embedded TESTS=__tests__/runtime.js JEST_ARGS='-t 001' scripts/cmi5-lts.sh
#   scripts/cmi5-lts.sh build                  # only install the suite and build its packages
#
# The suite is never copied into the repository. Its unmodified copy is
# ../shared/conformance/cmi5-lts/lts beside this checkout (or the main checkout; LTS_SRC= names
# another); the script copies it into $LECTERN_CACHE/cmi5-lts/suite-<hash>, installs its npm
# dependencies there (npm ci, npm's cache under $LECTERN_CACHE/npm, no Chromium download),
# builds the test packages (pkg/, webpack) and adds Lectern's LMS library
# (scripts/cmi5-lts/lms.lectern.js). Prints passed / failed / skipped per mode and exits 1
# unless every test passed in every mode; results (jest JSON, failures, server logs) stay in $OUT
# (default a temporary directory, removed when everything passed).
set -euo pipefail

cd "$(dirname "$0")/.."
REPO=$(pwd)
CACHE=${LECTERN_CACHE:-$HOME/.cache/lectern}
MODES=${MODES:-embedded distributed}
ENV_FILE=${ENV_FILE:-$CACHE/run/env}
TESTS=${TESTS:-__tests__/package.js __tests__/runtime.js}
JEST_ARGS=${JEST_ARGS:-}
CHROMIUM=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}

log() { echo "[cmi5-lts] $*" >&2; }
die() { log "ERROR: $*"; exit 1; }

command -v node >/dev/null || die "node is required (apt-get install nodejs npm)"
command -v npm >/dev/null || die "npm is required (apt-get install npm)"

lts_source() {
	local candidates=() common
	if [ -n "${LTS_SRC:-}" ]; then
		candidates=("$LTS_SRC")
	else
		candidates=("$REPO/../shared/conformance/cmi5-lts/lts")
		if common=$(git rev-parse --path-format=absolute --git-common-dir 2>/dev/null); then
			candidates+=("$(dirname "$common")/../shared/conformance/cmi5-lts/lts")
		fi
	fi
	for d in "${candidates[@]}"; do
		[ -f "$d/lib/lms.template.js" ] && { (cd "$d" && pwd); return 0; }
	done
	die "no cmi5 LMS test suite found (looked in: ${candidates[*]}); set LTS_SRC= to its lts/ directory"
}

# install_suite SRC prints the path of an installed copy of SRC with its packages built, made
# once per suite content (the directory name carries its hash).
install_suite() {
	local src=$1 sum dest stage
	sum=$(cd "$src" && find . -type f ! -path './node_modules/*' ! -path './pkg/dist/*' ! -path './var/*' -print0 |
		LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -c1-16)
	dest=$CACHE/cmi5-lts/suite-$sum
	if [ -f "$dest/.lectern-installed" ]; then
		echo "$dest"
		return 0
	fi
	mkdir -p "$CACHE/cmi5-lts"
	stage=$(mktemp -d "$CACHE/cmi5-lts/.stage.XXXXXX")
	cp -R "$src/." "$stage/"
	chmod -R u+w "$stage"
	rm -rf "$stage/node_modules" "$stage/pkg/dist" "$stage/var"
	log "installing the suite's npm dependencies into $dest (npm ci, cache $CACHE/npm)"
	if ! (cd "$stage" && PUPPETEER_SKIP_CHROMIUM_DOWNLOAD=1 PUPPETEER_SKIP_DOWNLOAD=1 \
		npm ci --no-audit --no-fund --cache "$CACHE/npm" --loglevel=error) >&2; then
		rm -rf "$stage"
		die "npm ci failed (is the npm registry reachable?)"
	fi
	log "building the test packages (webpack)"
	# webpack 5.45 hashes with MD4, which Node 17+ leaves to the legacy OpenSSL provider.
	if ! (cd "$stage/pkg" && NODE_OPTIONS=--openssl-legacy-provider npx webpack >"$stage/webpack.log" 2>&1); then
		tail -n 20 "$stage/webpack.log" >&2
		rm -rf "$stage"
		die "building the packages failed"
	fi
	touch "$stage/.lectern-installed"
	mv -T "$stage" "$dest" 2>/dev/null || rm -rf "$stage"
	echo "$dest"
}

SUITE=$(install_suite "$(lts_source)")
cp "$REPO/scripts/cmi5-lts/lms.lectern.js" "$SUITE/lib/lms.lectern.js"
cp "$REPO/scripts/cmi5-lts/jest-puppeteer.config.js" "$SUITE/jest-puppeteer.lectern.js"
if [ "${1:-}" = build ]; then
	echo "$SUITE"
	exit 0
fi
[ -n "$CHROMIUM" ] || die "Chromium is required (scripts/install-chromium.sh)"
OWN_OUT=""
[ -n "${OUT:-}" ] || { OUT=$(mktemp -d /tmp/lectern-cmi5-lts.XXXXXX); OWN_OUT=1; }
mkdir -p "$OUT"

# The player's scripts are embedded: without them every launch answers 503.
scripts/web-assets.sh >&2
go build -o "$OUT/lectern" ./cmd/lectern

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

PID=""
CLEANUP=()
stop_server() {
	if [ -n "$PID" ]; then kill "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; fi
	PID=""
	for c in "${CLEANUP[@]}"; do eval "$c" >/dev/null 2>&1 || true; done
	CLEANUP=()
}
trap stop_server EXIT

# summarize JSON: "passed failed skipped total" from jest's --json output.
summarize() {
	node -e '
		const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
		console.log([r.numPassedTests, r.numFailedTests, r.numPendingTests + r.numTodoTests, r.numTotalTests].join(" "));
	' "$1"
}

# failures JSON: one line per failing test and the first line of its message.
failures() {
	node -e '
		const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
		for (const f of r.testResults) {
			if (f.message && !f.assertionResults.length) console.log(f.name + " :: " + f.message.split("\n").slice(0, 3).join(" "));
			for (const a of f.assertionResults) {
				if (a.status === "failed") console.log(a.fullName + " :: " + String(a.failureMessages[0] || "").split("\n").slice(0, 2).join(" ").replace(/\x1b\[[0-9;]*m/g, "").slice(0, 400));
			}
		}
	' "$1"
}

BACKEND_VARS=(LECTERN_ELASTICSEARCH_URL LECTERN_ELASTICSEARCH_INDEX_PREFIX LECTERN_POSTGRES_URL LECTERN_REDIS_URL
	LECTERN_QUEUE_PREFIX LECTERN_S3_ENDPOINT LECTERN_S3_ACCESS_KEY LECTERN_S3_SECRET_KEY LECTERN_S3_BUCKET LECTERN_EMBEDDINGS_URL)
unset_backends=()
for v in "${BACKEND_VARS[@]}"; do unset_backends+=(-u "$v"); done

declare -a RESULTS=()
bad=0
for mode in $MODES; do
	data=$(mktemp -d /tmp/lectern-cmi5-lts-data.XXXXXX)
	CLEANUP+=("rm -rf '$data'")
	backend=()
	if [ "$mode" = distributed ]; then
		[ -f "$ENV_FILE" ] || { echo "== $mode: skipped (no $ENV_FILE; run make services-up)"; continue; }
		# shellcheck disable=SC1090
		. "$ENV_FILE"
		id="lts$(date +%s)$RANDOM"
		pg_admin=$LECTERN_TEST_POSTGRES_URL
		psql "$pg_admin" -qc "CREATE DATABASE $id" >/dev/null || die "cannot create database $id"
		CLEANUP+=("psql '$pg_admin' -qc 'DROP DATABASE IF EXISTS $id WITH (FORCE)'")
		CLEANUP+=("curl -s -XDELETE '$LECTERN_TEST_ELASTICSEARCH_URL/${id}_*'")
		backend=(LECTERN_POSTGRES_URL="${pg_admin/\/postgres\?//$id?}" LECTERN_REDIS_URL="$LECTERN_TEST_REDIS_URL"
			LECTERN_S3_ENDPOINT="$LECTERN_TEST_S3_ENDPOINT" LECTERN_S3_ACCESS_KEY="$LECTERN_TEST_S3_ACCESS_KEY"
			LECTERN_S3_SECRET_KEY="$LECTERN_TEST_S3_SECRET_KEY" LECTERN_S3_BUCKET="$id" LECTERN_S3_USE_SSL=false
			LECTERN_ELASTICSEARCH_URL="$LECTERN_TEST_ELASTICSEARCH_URL" LECTERN_ELASTICSEARCH_INDEX_PREFIX="${id}_"
			LECTERN_QUEUE_PREFIX="${id}_")
	elif [ "$mode" != embedded ]; then
		die "unknown mode $mode (embedded or distributed)"
	fi
	port=$(free_port)
	cport=$(free_port)
	pass=lts-$RANDOM$RANDOM
	start=$SECONDS
	env "${unset_backends[@]}" "${backend[@]}" LECTERN_ADDR=127.0.0.1:$port LECTERN_DATA_DIR="$data" \
		LECTERN_PUBLIC_URL="http://127.0.0.1:$port" LECTERN_CONTENT_ADDR=127.0.0.1:$cport LECTERN_ROOT_USER=root LECTERN_ROOT_PASSWORD=$pass \
		LECTERN_SECRET_KEY=cmi5-lts LECTERN_LOG_LEVEL=warn LECTERN_SCHEMA_DIR="${LECTERN_SCHEMA_DIR:-$(dirname "$(lts_source)")/../schemas}" \
		"$OUT/lectern" all >"$OUT/lectern-$mode.log" 2>&1 &
	PID=$!
	ready=""
	for _ in $(seq 1 600); do
		curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && { ready=1; break; }
		kill -0 "$PID" 2>/dev/null || break
		sleep 0.1
	done
	if [ -z "$ready" ]; then
		echo "== $mode: FAILED, the server did not become ready (see $OUT/lectern-$mode.log)"
		tail -n 5 "$OUT/lectern-$mode.log"
		stop_server
		RESULTS+=("$mode - - - -")
		bad=1
		continue
	fi
	echo "== $mode: running the cmi5 LMS test suite against http://127.0.0.1:$port"
	# shellcheck disable=SC2086
	(cd "$SUITE" && CATAPULT_LMS=./lib/lms.lectern.js LECTERN_URL="http://127.0.0.1:$port" LECTERN_ROOT_USER=root \
		LECTERN_ROOT_PASSWORD=$pass LECTERN_LTS_TENANT="lts-$mode" PUPPETEER_EXECUTABLE_PATH="$CHROMIUM" \
		JEST_PUPPETEER_CONFIG=./jest-puppeteer.lectern.js \
		npx jest --runInBand --json --outputFile="$OUT/jest-$mode.json" $JEST_ARGS $TESTS >"$OUT/jest-$mode.out" 2>&1) || true
	stop_server
	if [ ! -f "$OUT/jest-$mode.json" ]; then
		echo "   FAILED, jest wrote no results; see $OUT/jest-$mode.out"
		RESULTS+=("$mode - - - -")
		bad=1
		continue
	fi
	failures "$OUT/jest-$mode.json" >"$OUT/failures-$mode.txt"
	read -r passed failed skipped total < <(summarize "$OUT/jest-$mode.json")
	echo "   passed $passed  failed $failed  skipped $skipped  of $total  ($((SECONDS - start)) s)"
	[ "$failed" = 0 ] || { head -n 30 "$OUT/failures-$mode.txt" | sed 's/^/     /'; bad=1; }
	RESULTS+=("$mode $passed $failed $skipped $total")
done

echo
printf '%-12s %7s %7s %7s %7s\n' mode passed failed skipped total
for r in "${RESULTS[@]}"; do printf '%-12s %7s %7s %7s %7s\n' $r; done
if [ "$bad" = 0 ] && [ -n "$OWN_OUT" ]; then
	rm -rf "$OUT"
	echo "every test passed; results removed (set OUT= to keep them)"
else
	echo "results: $OUT"
fi
[ "$bad" = 0 ]
