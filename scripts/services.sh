#!/usr/bin/env bash
# services.sh up|down|env — provisions the real backends the test suite runs against:
# PostgreSQL and Redis (Debian packages), MinIO (go install) and Elasticsearch 8
# (integ-test-zip fetched with Maven, run with the machine's Java, no plugins: Lectern analyses
# text in Go and needs only what every Elasticsearch ships), each on a loopback port of
# its own. Downloads and builds are cached under $LECTERN_CACHE (default $HOME/.cache/lectern) so
# a fresh clone starts them in seconds; run-time data lives in $LECTERN_CACHE/run and is thrown
# away by `down`. `up` reuses a service that already answers on its port.
set -euo pipefail

CACHE=${LECTERN_CACHE:-$HOME/.cache/lectern}
RUN=$CACHE/run
BIN=$CACHE/bin
ES_VERSION=8.19.21
MINIO_VERSION=v0.0.0-20260212201848-7aac2a2c5b7c
# The Maven plugin that fetches Elasticsearch, pinned so a fresh machine resolves the same one.
MVN_DEPENDENCY_PLUGIN=org.apache.maven.plugins:maven-dependency-plugin:3.8.1
PG_PORT=${LECTERN_TEST_PG_PORT:-15432}
REDIS_PORT=${LECTERN_TEST_REDIS_PORT:-16379}
MINIO_PORT=${LECTERN_TEST_MINIO_PORT:-19000}
ES_PORT=${LECTERN_TEST_ES_PORT:-19200}
SVC_USER=${LECTERN_SVC_USER:-lectern}
REPO=$(cd "$(dirname "$0")/.." && pwd)

log() { printf '[services] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# Elasticsearch and PostgreSQL refuse to run as root, so both run as an unprivileged system user.
as_user() { if [ "$(id -u)" = 0 ]; then runuser -u "$SVC_USER" -- "$@"; else "$@"; fi; }
# run_user is who as_user runs things as.
run_user() { if [ "$(id -u)" = 0 ]; then echo "$SVC_USER"; else id -un; fi; }

ensure_user() {
  [ "$(id -u)" = 0 ] || return 0
  id "$SVC_USER" >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin "$SVC_USER"
  # The service user must traverse $HOME to reach the cache (search permission only, no listing).
  local d=$CACHE
  while [ "$d" != / ]; do chmod o+x "$d" 2>/dev/null || true; d=$(dirname "$d"); done
}

apt_install() {
  [ "$(id -u)" = 0 ] || die "need root to apt-get install $*"
  log "apt-get install $*"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@" >/dev/null 2>&1 ||
    { apt-get update -q >/dev/null 2>&1; DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@" >/dev/null; }
}

wait_for() { # wait_for NAME SECONDS CMD...
  local name=$1 secs=$2; shift 2
  for _ in $(seq $((secs * 5))); do "$@" >/dev/null 2>&1 && return 0; sleep 0.2; done
  die "$name did not become ready within ${secs}s (logs in $RUN)"
}

pg_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1; }

install_all() {
  mkdir -p "$CACHE/dl" "$BIN" "$RUN"
  [ -n "$(pg_bin)" ] || apt_install postgresql
  command -v redis-server >/dev/null || apt_install redis-server
  command -v unzip >/dev/null || apt_install unzip
  command -v java >/dev/null || apt_install openjdk-17-jre-headless
  command -v mvn >/dev/null || apt_install maven
  if [ ! -x "$BIN/minio-$MINIO_VERSION" ]; then
    log "building MinIO $MINIO_VERSION (about 3 minutes, once)"
    GOBIN=$CACHE/gobin-tmp go install "github.com/minio/minio@$MINIO_VERSION"
    mv "$CACHE/gobin-tmp/minio" "$BIN/minio-$MINIO_VERSION"
  fi
  local esdir=$CACHE/es/elasticsearch-$ES_VERSION
  if [ ! -d "$esdir" ]; then
    local zip=$CACHE/dl/elasticsearch-$ES_VERSION.zip
    [ -s "$zip" ] || fetch_es "$zip"
    mkdir -p "$CACHE/es" && unzip -q -o "$zip" -d "$CACHE/es"
  fi
  # A cache from before Lectern dropped its Elasticsearch analysis plugin still has it
  # installed; take it out so the node runs as shipped (it goes at the node's next start).
  if [ -d "$esdir/plugins/lectern-analysis" ]; then
    log "removing the old lectern-analysis Elasticsearch plugin"
    rm -rf "$esdir/plugins/lectern-analysis" "$esdir/.lectern-analysis.sum"
  fi
}

# fetch_es ZIP: the Elasticsearch integ-test-zip through Maven, so the machine's configured
# repositories (settings.xml mirrors, proxies, credentials) serve it, with Maven's checksum
# check. Maven's local repository lives in the cache too; the zip is copied to ZIP.
fetch_es() {
  local zip=$1 m2=$CACHE/m2 out
  log "fetching Elasticsearch $ES_VERSION integ-test-zip with Maven"
  out=$(mktemp -d "$CACHE/dl/es.XXXXXX")
  mvn -B -q --strict-checksums -Dmaven.repo.local="$m2" "$MVN_DEPENDENCY_PLUGIN:copy" \
    -Dartifact="org.elasticsearch.distribution.integ-test-zip:elasticsearch:$ES_VERSION:zip" \
    -DoutputDirectory="$out" >&2 || { rm -rf "$out"; die "mvn could not fetch Elasticsearch $ES_VERSION"; }
  mv "$out/elasticsearch-$ES_VERSION.zip" "$zip"
  # The zip now lives in dl; Maven's own copy would only double the cache by 100 MB.
  rm -rf "$out" "$m2/org/elasticsearch/distribution/integ-test-zip"
}

java_home() { dirname "$(dirname "$(readlink -f "$(command -v java)")")"; }

up_pg() {
  if pg_isready -h 127.0.0.1 -p "$PG_PORT" >/dev/null 2>&1; then return 0; fi
  local data=$RUN/pg; rm -rf "$data"; mkdir -p "$data"; chown "$SVC_USER" "$data" 2>/dev/null || true
  as_user "$(pg_bin)/initdb" -D "$data" -U postgres --auth=trust --no-sync -E UTF8 >"$RUN/pg-init.log" 2>&1
  as_user "$(pg_bin)/pg_ctl" -D "$data" -l "$data/server.log" -o "-h 127.0.0.1 -p $PG_PORT -k $data -c max_connections=300 -c fsync=on" start >/dev/null
  wait_for PostgreSQL 30 pg_isready -h 127.0.0.1 -p "$PG_PORT"
}

up_redis() {
  if redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1; then return 0; fi
  mkdir -p "$RUN/redis"
  redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --databases 64 --appendonly yes --appendfsync always \
    --dir "$RUN/redis" --daemonize yes --logfile "$RUN/redis.log" --pidfile "$RUN/redis.pid" >/dev/null
  wait_for Redis 20 redis-cli -p "$REDIS_PORT" ping
}

up_minio() {
  if curl -fs "http://127.0.0.1:$MINIO_PORT/minio/health/ready" >/dev/null 2>&1; then return 0; fi
  mkdir -p "$RUN/minio"
  MINIO_ROOT_USER=lectern MINIO_ROOT_PASSWORD=lectern-secret MINIO_BROWSER=off MINIO_UPDATE=off \
    nohup "$BIN/minio-$MINIO_VERSION" server "$RUN/minio" --quiet --address "127.0.0.1:$MINIO_PORT" \
    --console-address "127.0.0.1:$((MINIO_PORT + 1))" >"$RUN/minio.log" 2>&1 &
  echo $! >"$RUN/minio.pid"
  wait_for MinIO 60 curl -fs "http://127.0.0.1:$MINIO_PORT/minio/health/ready"
}

# es_has_repo: the running Elasticsearch was started with path.repo (snapshot tests need it).
es_has_repo() {
  curl -fs "http://127.0.0.1:$ES_PORT/_nodes/settings?filter_path=nodes.*.settings.path.repo" 2>/dev/null | grep -q '"repo"'
}

up_es() {
  if curl -fs "http://127.0.0.1:$ES_PORT/_cluster/health" >/dev/null 2>&1; then
    es_has_repo && return 0
    # Started before snapshots were tested (no path.repo): restart it with the setting.
    log "restarting Elasticsearch: it runs without path.repo"
    stop_es
  fi
  local esdir=$CACHE/es/elasticsearch-$ES_VERSION data=$RUN/es
  rm -rf "$data"; mkdir -p "$data/data" "$data/logs" "$RUN/es-snapshots"
  chown -R "$SVC_USER" "$RUN/es-snapshots" 2>/dev/null || true
  # A first start with security on rewrites elasticsearch.yml; keep the file ours.
  printf '# written by scripts/services.sh\n' >"$esdir/config/elasticsearch.yml"
  chown -R "$SVC_USER" "$data" "$esdir" 2>/dev/null || true
  ES_JAVA_HOME=$(java_home) ES_JAVA_OPTS="-Xms1g -Xmx1g" as_user nohup "$esdir/bin/elasticsearch" \
    -E xpack.security.enabled=false -E discovery.type=single-node -E network.host=127.0.0.1 \
    -E http.port="$ES_PORT" -E transport.port=$((ES_PORT + 100)) -E path.data="$data/data" \
    -E path.logs="$data/logs" -E cluster.routing.allocation.disk.threshold_enabled=false \
    -E action.destructive_requires_name=false -E path.repo="$RUN/es-snapshots" >"$RUN/es.log" 2>&1 &
  echo $! >"$RUN/es.pid"
  wait_for Elasticsearch 120 curl -fs "http://127.0.0.1:$ES_PORT/_cluster/health?wait_for_status=yellow&timeout=1s"
}

# stop_es stops this run directory's Elasticsearch only: the launcher whose command line names
# $RUN/es/data, and the server JVM it started. Other nodes of the same user (another checkout's
# suite, a private test node) keep running.
stop_es() {
  local pid
  for pid in $(pgrep -u "$(run_user)" -f org.elasticsearch.launcher 2>/dev/null); do
    if tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "path.data=$RUN/es/data "; then
      pkill -P "$pid" 2>/dev/null || true
      kill "$pid" 2>/dev/null || true
    fi
  done
  [ -f "$RUN/es.pid" ] && kill "$(cat "$RUN/es.pid")" 2>/dev/null || true
  wait_for "Elasticsearch shutdown" 60 sh -c "! curl -fs http://127.0.0.1:$ES_PORT/_cluster/health"
}

print_env() {
  cat <<EOT
export LECTERN_TEST_POSTGRES_URL='postgres://postgres@127.0.0.1:$PG_PORT/postgres?sslmode=disable'
export LECTERN_TEST_REDIS_URL='redis://127.0.0.1:$REDIS_PORT/0'
export LECTERN_TEST_S3_ENDPOINT='127.0.0.1:$MINIO_PORT'
export LECTERN_TEST_S3_ACCESS_KEY='lectern'
export LECTERN_TEST_S3_SECRET_KEY='lectern-secret'
export LECTERN_TEST_ELASTICSEARCH_URL='http://127.0.0.1:$ES_PORT'
EOT
}

start_all() { # start the four in parallel; fail when any fails
  local pids=() rc=0
  for s in up_pg up_redis up_minio up_es; do "$s" & pids+=($!); done
  for p in "${pids[@]}"; do wait "$p" || rc=1; done
  return $rc
}

down() {
  [ -d "$RUN/pg" ] && as_user "$(pg_bin)/pg_ctl" -D "$RUN/pg" -m immediate stop >/dev/null 2>&1 || true
  redis-cli -p "$REDIS_PORT" shutdown nosave >/dev/null 2>&1 || true
  [ -f "$RUN/minio.pid" ] && { kill "$(cat "$RUN/minio.pid")" 2>/dev/null || true; rm -f "$RUN/minio.pid"; }
  stop_es
  rm -rf "$RUN"
}

case "${1:-}" in
  install) ensure_user; install_all ;;
  up) ensure_user; install_all; mkdir -p "$RUN"; start_all; print_env >"$RUN/env"; log "all backends up; env in $RUN/env" ;;
  env) print_env ;;
  down) down ;;
  *) echo "usage: $0 install|up|env|down" >&2; exit 2 ;;
esac
