#!/usr/bin/env bash
# bench-report.sh — runs the record store benchmarks (storage/record/recordbench) against
# SQLite and the local PostgreSQL of scripts/services.sh in one `go test -bench` run, then
# prints a side-by-side table of records/s per operation. Then it runs the course import
# benchmark (workers/importjob, BenchmarkImport: a generated ~100 MB SCORM 1.2 package
# imported end to end, and `unzip` of the same file) and prints seconds per import with the
# ratio to unzip (issue 3's goal: at most 1.5).
#
#   scripts/bench-report.sh            # BENCHTIME=3s COUNT=1 IMPORT_BENCHTIME=3x IMPORT_COUNT=1
#   BENCHTIME=10s COUNT=3 IMPORT_COUNT=3 scripts/bench-report.sh
#
# With COUNT>1 the record store table shows the mean of the runs, with IMPORT_COUNT>1 the
# import table their median. The raw `go test` output goes to stderr. The import benchmark
# needs unzip (Debian/Ubuntu: apt-get install unzip); without it the unzip rows are skipped
# and the ratios show "-".
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
ENV_FILE=${LECTERN_CACHE:-$HOME/.cache/lectern}/run/env
BENCHTIME=${BENCHTIME:-3s}
COUNT=${COUNT:-1}
IMPORT_BENCHTIME=${IMPORT_BENCHTIME:-3x}
IMPORT_COUNT=${IMPORT_COUNT:-1}

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

cmd=(go test -run='^$' -bench=BenchmarkImport -benchtime="$IMPORT_BENCHTIME" -count="$IMPORT_COUNT"
  ./workers/importjob/)
echo "+ ${cmd[*]}" >&2
out=$("${cmd[@]}" 2>&1 | tee /dev/stderr)

printf '%s\n' "$out" | awk '
  $1 ~ /^BenchmarkImport\// && $4 == "ns/op" {
    name = $1; sub(/-[0-9]+$/, "", name); sub(/^BenchmarkImport\//, "", name)
    if (!(name in n)) order[++cases] = name
    v[name, ++n[name]] = $3
  }
  # The median of the runs: imports are long and disk-bound, and one stalled fsync on a
  # shared machine moves a mean by seconds.
  function secs(c,   i, j, t, a, m) {
    m = n[c]; if (!m) return -1
    for (i = 1; i <= m; i++) a[i] = v[c, i]
    for (i = 2; i <= m; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
    return (m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2) / 1e9
  }
  END {
    if (cases == 0) { print "no BenchmarkImport results found" > "/dev/stderr"; exit 1 }
    base = secs("unzip")
    printf "\n| %-16s | %18s | %15s |\n", "case", "seconds per import", "ratio to unzip"
    printf "|%s|%s:|%s:|\n", "------------------", "-------------------", "----------------"
    for (k = 1; k <= cases; k++) {
      c = order[k]; s = secs(c)
      ratio = (base > 0) ? sprintf("%.2f", s / base) : "-"
      printf "| %-16s | %18.3f | %15s |\n", c, s, ratio
    }
  }'
