#!/usr/bin/env bash
# bench-query.sh — xAPI statement queries side by side with Learning Locker (issue 12, item 2).
# For each size of QUERY_SIZES (default "10000 100000 1000000") it starts an empty Learning Locker
# (xapi-statements 5.0.1 in memory, scripts/bench-ll/ll.sh) and runs lrsapi.BenchmarkQueryLL:
# the ingest workload's statements POSTed to Learning Locker, Lectern embedded (SQLite) and
# Lectern distributed (Elasticsearch statements, PostgreSQL records), then 4 clients send
# QUERY_QUERIES (default 1000) GET /statements?limit=25 per filter shape (agent, activity, verb,
# registration, activity+related_activities, agent+related_agents) to each target in turn.
# Prints p50/p99 per shape and target and Learning Locker's p99 over Lectern's.
# Sizes above QUERY_LL_MAX (default 100000) run without Learning Locker (its in-memory store
# answers a query by scanning every statement: 1M would take hours) and embedded only, e.g.
#
#   QUERY_SIZES=1000000 scripts/bench-query.sh
#
# The p99 of 1,000 requests is the 10th slowest: with 4 clients one stall of the process
# (a collection, the kernel running another process) delays up to 4 requests at once, so with
# 400 requests (the 4th slowest) a single stall decided the p99.
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${LECTERN_CACHE:-$HOME/.cache/lectern}
LL_DIR=$CACHE/ll
SIZES=${QUERY_SIZES:-10000 100000 1000000}
QUERIES=${QUERY_QUERIES:-1000}
LL_MAX=${QUERY_LL_MAX:-100000}
# shellcheck disable=SC1090
. "$CACHE/run/env"

# shellcheck source=bench-ll/ll.sh
. "$REPO/scripts/bench-ll/ll.sh"
ll_install
trap stop_ll EXIT

cd "$REPO"
for n in $SIZES; do
	ll_url="" embedded_only=""
	if [ "$n" -le "$LL_MAX" ]; then ll_start; else embedded_only=1; fi
	cmd=(go test -run='^$' -bench='^BenchmarkQueryLL$' -benchtime=1x -timeout=120m ./server/lrsapi/)
	echo "+ QUERY_BENCH_COUNT=$n QUERY_BENCH_QUERIES=$QUERIES ${cmd[*]}" >&2
	out=$(CI=true LECTERN_BENCH_LL_URL="$ll_url" QUERY_BENCH_COUNT=$n QUERY_BENCH_QUERIES=$QUERIES \
		QUERY_BENCH_EMBEDDED_ONLY=$embedded_only "${cmd[@]}" 2>&1 | grep -v ' INFO \| WARN ' | tee -a /dev/stderr)
	stop_ll
	printf '%s\n' "$out" | awk -v n="$n" '
		function metric(unit,   i) { for (i = 2; i <= NF; i++) if ($i == unit) return $(i - 1); return "" }
		function f(v) { return v == "" ? "-" : sprintf("%.2f", v) }
		# What else ran during each measurement (BenchmarkQueryLL logs it): printed under the table.
		/ collections; CPU of other processes meanwhile: / { sub(/^.*_test\.go:[0-9]+: /, ""); notes[++m] = $0 }
		$1 ~ /^BenchmarkQueryLL\// {
			name = $1; sub(/-[0-9]+$/, "", name); sub(/^BenchmarkQueryLL\//, "", name)
			rows[++k] = sprintf("| %-27s | %6s | %6s | %6s | %6s | %5s | %6s | %6s | %5s |", name,
				f(metric("ll-p50-ms")), f(metric("ll-p99-ms")), f(metric("embedded-p50-ms")), f(metric("embedded-p99-ms")),
				f(metric("ll/embedded-p99")), f(metric("distributed-p50-ms")), f(metric("distributed-p99-ms")), f(metric("ll/distributed-p99")))
		}
		END {
			if (k == 0) { print "no BenchmarkQueryLL results found" > "/dev/stderr"; exit 1 }
			printf "\n| GET /statements, %7d stored, limit 25, 4 clients | LL p50 ms | LL p99 ms | embedded p50 | embedded p99 | LL/emb p99 | distributed p50 | distributed p99 | LL/dist p99 |\n", n
			printf "|---|---:|---:|---:|---:|---:|---:|---:|---:|\n"
			for (i = 1; i <= k; i++) print rows[i]
			if (m) printf "\n"
			for (i = 1; i <= m; i++) print "    " notes[i]
		}'
done
