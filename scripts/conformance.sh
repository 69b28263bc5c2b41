#!/usr/bin/env bash
# Runs the ADL LRS conformance suite (adlnet/lrs-conformance-test-suite, installed outside the
# repository; never copy it in) against a fresh Lectern, for xAPI 1.0.3 and 2.0.0, in the
# embedded mode and — when Elasticsearch is reachable — the distributed statements mode.
#
#   SUITE=/path/to/suite scripts/conformance.sh            # both modes
#   MODES=embedded SUITE=... scripts/conformance.sh         # one mode
#   VERSIONS=2.0.0 GREP='XAPI-00113' SUITE=... scripts/conformance.sh
#
# Prints total / passed / failed (= total - passed: the runner's own failed count omits tests
# that never ran) per version and mode. Logs stay in $OUT (default a temp dir).
set -euo pipefail

cd "$(dirname "$0")/.."
SUITE=${SUITE:-$HOME/.cache/lectern/conformance/suite}
MODES=${MODES:-embedded elastic}
VERSIONS=${VERSIONS:-1.0.3 2.0.0}
ENV_FILE=${ENV_FILE:-$HOME/.cache/lectern/run/env}
OUT=${OUT:-$(mktemp -d /tmp/lectern-conformance.XXXXXX)}
mkdir -p "$OUT"
GREP=${GREP:-}

[ -f "$SUITE/bin/console_runner.js" ] || { echo "no conformance suite at $SUITE (set SUITE=)" >&2; exit 2; }
command -v node >/dev/null || { echo "node is required" >&2; exit 2; }

go build -o bin/lectern ./cmd/lectern

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

PID=""
cleanup() { if [ -n "$PID" ]; then kill "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; fi; }
trap cleanup EXIT

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

declare -a RESULTS=()
for mode in $MODES; do
	extra=()
	if [ "$mode" = elastic ]; then
		es_url=${LECTERN_ELASTICSEARCH_URL:-}
		if [ -z "$es_url" ] && [ -f "$ENV_FILE" ]; then
			es_url=$(bash -c "source '$ENV_FILE'; echo \${LECTERN_TEST_ELASTICSEARCH_URL:-}")
		fi
		if [ -z "$es_url" ] || [ "$(curl -s -o /dev/null -w '%{http_code}' "$es_url" 2>/dev/null)" = 000 ]; then
			echo "== $mode: skipped (no Elasticsearch; run make services-up)"
			continue
		fi
		extra=(LECTERN_ELASTICSEARCH_URL="$es_url" LECTERN_ELASTICSEARCH_INDEX_PREFIX="conf$(date +%s)$RANDOM"_)
	fi
	for version in $VERSIONS; do
		data=$(mktemp -d /tmp/lectern-conformance-data.XXXXXX)
		port=$(free_port)
		user=root
		pass=conformance-$RANDOM$RANDOM
		if [ "$mode" = elastic ]; then
			extra[1]=LECTERN_ELASTICSEARCH_INDEX_PREFIX="conf$(date +%s)$RANDOM"_
		fi
		env "${extra[@]}" LECTERN_ADDR=127.0.0.1:$port LECTERN_DATA_DIR="$data" LECTERN_ROOT_USER=$user \
			LECTERN_ROOT_PASSWORD=$pass LECTERN_SECRET_KEY=conformance LECTERN_LOG_LEVEL=error \
			LECTERN_XAPI_DEFAULT_VERSION="$version" \
			bin/lectern serve >"$OUT/lectern-$mode-$version.log" 2>&1 &
		PID=$!
		for _ in $(seq 1 100); do curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && break; sleep 0.1; done
		echo "== $mode $version: running the suite against http://127.0.0.1:$port/lrs/TCAPI"
		args=(-x "$version" -e "http://127.0.0.1:$port/lrs/TCAPI" -a -u "$user" -p "$pass")
		[ -n "$GREP" ] && args+=(-g "$GREP")
		(cd "$SUITE" && node bin/console_runner.js "${args[@]}" >"$OUT/runner-$mode-$version.out" 2>&1) || true
		cleanup
		PID=""
		rm -rf "$data"
		log=$(sed -n 's/^Full run log written to //p' "$OUT/runner-$mode-$version.out" | tail -n 1)
		if [ -z "$log" ] || [ ! -f "$log" ]; then
			echo "   no log written; see $OUT/runner-$mode-$version.out"
			RESULTS+=("$mode $version - - -")
			continue
		fi
		mv "$log" "$OUT/suite-$mode-$version.json"
		failures "$OUT/suite-$mode-$version.json" >"$OUT/failures-$mode-$version.txt"
		read -r total passed failed < <(summarize "$OUT/suite-$mode-$version.json")
		echo "   total $total  passed $passed  failed $failed  (log $OUT/suite-$mode-$version.json)"
		RESULTS+=("$mode $version $total $passed $failed")
	done
done

echo
printf '%-10s %-8s %7s %7s %7s\n' mode version total passed failed
for r in "${RESULTS[@]}"; do printf '%-10s %-8s %7s %7s %7s\n' $r; done
echo "logs: $OUT"
