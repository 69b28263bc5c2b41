#!/usr/bin/env bash
# bench-ingest.sh — xAPI ingest side by side with Learning Locker (issue 12, item 1).
# Installs xapi-statements 5.0.1 (Learning Locker's statement service, pinned by
# scripts/bench-ll/package-lock.json) into $HOME/.cache/lectern/ll with `npm ci`, runs it
# in-memory on a loopback port, then runs lrsapi.BenchmarkIngest: the same statements
# (context, result, extensions) POSTed in batches of 100 by 4 clients, to Learning Locker,
# Lectern embedded (SQLite) and Lectern distributed (Elasticsearch statements, PostgreSQL
# records) in turn, INGEST_ROUNDS rounds (default 2) per size, for INGEST_SIZES (default
# "10000 100000") statements. Prints statements/s per target and Lectern's ratio to LL.
# Learning Locker is started once per size, so each size starts from an empty store.
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${LECTERN_CACHE:-$HOME/.cache/lectern}
LL_DIR=$CACHE/ll
SIZES=${INGEST_SIZES:-10000 100000}
ROUNDS=${INGEST_ROUNDS:-2}
# shellcheck disable=SC1090
. "$CACHE/run/env"

# shellcheck source=bench-ll/ll.sh
. "$REPO/scripts/bench-ll/ll.sh"
ll_install
trap stop_ll EXIT

cd "$REPO"
for n in $SIZES; do
	ll_start
	cmd=(go test -run='^$' -bench='^BenchmarkIngest$' -benchtime=1x -timeout=60m ./server/lrsapi/)
	echo "+ INGEST_BENCH_COUNT=$n INGEST_BENCH_ROUNDS=$ROUNDS ${cmd[*]}" >&2
	out=$(CI=true LECTERN_BENCH_LL_URL="$ll_url" INGEST_BENCH_COUNT=$n INGEST_BENCH_ROUNDS=$ROUNDS \
		"${cmd[@]}" 2>&1 | grep -v ' INFO \| WARN ' | tee -a /dev/stderr)
	stop_ll
	printf '%s\n' "$out" | awk -v n="$n" '
		$1 ~ /^BenchmarkIngest/ {
			for (i = 2; i <= NF; i++) v[$i] = $(i - 1)
			printf "\n| ingest, %7d statements, batches of 100, 4 clients | statements/s | × Learning Locker |\n", n
			printf "|---|---:|---:|\n"
			printf "| Learning Locker xapi-statements 5.0.1 (memory) | %.0f | 1.00 |\n", v["ll-stmts/s"]
			printf "| Lectern embedded (SQLite) | %.0f | %.2f |\n", v["embedded-stmts/s"], v["embedded/ll"]
			printf "| Lectern distributed (Elasticsearch + PostgreSQL) | %.0f | %.2f |\n", v["distributed-stmts/s"], v["distributed/ll"]
		}'
done
