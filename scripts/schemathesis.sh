#!/usr/bin/env bash
# schemathesis.sh — property-based test of the HTTP API against its own description: builds
# lectern, starts `lectern all` (embedded mode) on a fresh data directory and a free loopback
# port, creates a tenant, and runs schemathesis (scripts/install-schemathesis.sh, pinned)
# against the served /openapi.json with root credentials. It fails on any 5xx, any response
# whose body does not match its schema, any undocumented status and any undocumented
# content type. ST_MAX_EXAMPLES (default 25) bounds the cases per operation.
set -euo pipefail
cd "$(dirname "$0")/.."
ST=$(scripts/install-schemathesis.sh)
work=$(mktemp -d)
pid=
cleanup() {
	[ -z "$pid" ] || { kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true; }
	rm -rf "$work"
}
trap cleanup EXIT

go build -o "$work/lectern" ./cmd/lectern
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
base="http://127.0.0.1:$port"
user=root pass=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
# Embedded mode only: the backends of the distributed mode are not named here.
env -u LECTERN_POSTGRES_URL -u LECTERN_REDIS_URL -u LECTERN_S3_ENDPOINT -u LECTERN_ELASTICSEARCH_URL \
	LECTERN_ADDR="127.0.0.1:$port" LECTERN_DATA_DIR="$work/data" LECTERN_ROOT_USER=$user LECTERN_ROOT_PASSWORD="$pass" \
	LECTERN_LOG_LEVEL=warn "$work/lectern" all >"$work/lectern.log" 2>&1 &
pid=$!
deadline=$((SECONDS + 60))
until curl -fsS "$base/healthz" >/dev/null 2>&1; do
	kill -0 "$pid" 2>/dev/null || { cat "$work/lectern.log"; echo "schemathesis: lectern exited" >&2; exit 1; }
	[ $SECONDS -lt $deadline ] || { cat "$work/lectern.log"; echo "schemathesis: lectern did not answer /healthz in 60 s" >&2; exit 1; }
	sleep 0.2
done
export ST_TENANT=schemathesis
curl -fsS -u "$user:$pass" -H 'Content-Type: application/json' -d "{\"tenant_id\":\"$ST_TENANT\"}" \
	"$base/api/v1/app_management/tenants" >/dev/null

status=0
"$ST" --config-file scripts/schemathesis.toml run "$base/openapi.json" \
	--checks not_a_server_error,response_schema_conformance,status_code_conformance,content_type_conformance \
	--auth "$user:$pass" --max-examples "${ST_MAX_EXAMPLES:-25}" --seed "${ST_SEED:-1}" \
	--workers 2 --request-timeout 20 --phases examples,coverage,fuzzing \
	--generation-database none --no-color ${ST_ARGS:-} || status=$?
if [ "$status" != 0 ]; then
	echo "== lectern log (warnings and errors)"
	tail -n 100 "$work/lectern.log"
fi
exit "$status"
