#!/usr/bin/env bash
# bench-report.sh — runs the record store benchmarks (storage/record/recordbench) against
# SQLite and the local PostgreSQL of scripts/services.sh in one `go test -bench` run, then
# prints a side-by-side table of records/s per operation.
#
#   scripts/bench-report.sh            # BENCHTIME=3s COUNT=1 by default
#   BENCHTIME=10s COUNT=3 scripts/bench-report.sh
#
# With COUNT>1 the table shows the mean of the runs. The raw `go test` output goes to stderr.
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
ENV_FILE=${LECTERN_CACHE:-$HOME/.cache/lectern}/run/env
BENCHTIME=${BENCHTIME:-3s}
COUNT=${COUNT:-1}

[ -f "$ENV_FILE" ] || "$REPO/scripts/services.sh" up
# shellcheck disable=SC1090
. "$ENV_FILE"

cd "$REPO"
cmd=(go test -run='^$' -bench=BenchmarkRecordStore -benchtime="$BENCHTIME" -count="$COUNT"
  ./storage/record/recordbench/)
echo "+ ${cmd[*]}" >&2
out=$("${cmd[@]}" 2>&1 | tee /dev/stderr)

printf '%s\n' "$out" | awk '
  $1 ~ /^BenchmarkRecordStore\// {
    name = $1; sub(/-[0-9]+$/, "", name)          # drop the GOMAXPROCS suffix
    split(name, p, "/"); op = p[2]; be = p[3]
    for (i = 2; i <= NF; i++) if ($i == "records/s") {
      sum[op, be] += $(i - 1); n[op, be]++
      if (!(op in seen)) { seen[op] = 1; order[++ops] = op }
    }
  }
  function rate(op, be) { return n[op, be] ? sum[op, be] / n[op, be] : -1 }
  function fmt(v) { return v < 0 ? "-" : sprintf("%.0f", v) }
  END {
    if (ops == 0) { print "no BenchmarkRecordStore results found" > "/dev/stderr"; exit 1 }
    printf "\n| %-12s | %17s | %21s | %17s |\n", "operation", "SQLite records/s", "PostgreSQL records/s", "ratio PG/SQLite"
    printf "|%s|%s:|%s:|%s:|\n", "--------------", "------------------", "----------------------", "------------------"
    for (k = 1; k <= ops; k++) {
      op = order[k]; s = rate(op, "sqlite"); g = rate(op, "postgres")
      ratio = (s > 0 && g >= 0) ? sprintf("%.2f", g / s) : "-"
      printf "| %-12s | %17s | %21s | %17s |\n", op, fmt(s), fmt(g), ratio
    }
  }'
