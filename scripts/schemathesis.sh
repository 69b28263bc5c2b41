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
	LECTERN_ADDR="127.0.0.1:$port" LECTERN_CONTENT_ADDR=127.0.0.1:0 LECTERN_DATA_DIR="$work/data" LECTERN_ROOT_USER=$user LECTERN_ROOT_PASSWORD="$pass" \
	LECTERN_LOG_LEVEL=warn "$work/lectern" all >"$work/lectern.log" 2>&1 &
pid=$!
deadline=$((SECONDS + 60))
until curl -fsS "$base/healthz" >/dev/null 2>&1; do
	kill -0 "$pid" 2>/dev/null || { cat "$work/lectern.log"; echo "schemathesis: lectern exited" >&2; exit 1; }
	[ $SECONDS -lt $deadline ] || { cat "$work/lectern.log"; echo "schemathesis: lectern did not answer /healthz in 60 s" >&2; exit 1; }
	sleep 0.2
done
export ST_TENANT=schemathesis ST_COURSE=seed-course ST_CONTENT=seed-content
api() { curl -fsS -u "$user:$pass" "$@"; }
api -H 'Content-Type: application/json' -d "{\"tenant_id\":\"$ST_TENANT\"}" "$base/api/v1/app_management/tenants" >/dev/null
# One of each kind of resource, so operations on an existing course, content version, job
# and statement answer with their real bodies, not only 404: a SCORM 1.2 course, a Markdown
# content item and a statement.
python3 - "$work/course.zip" <<'PY'
import sys, zipfile
manifest = """<?xml version="1.0"?>
<manifest identifier="seed" version="1" xmlns="http://www.imsproject.org/xsd/imscp_rootv1p1p2"
  xmlns:adlcp="http://www.adlnet.org/xsd/adlcp_rootv1p2">
  <metadata><schema>ADL SCORM</schema><schemaversion>1.2</schemaversion></metadata>
  <organizations default="o"><organization identifier="o"><title>Seed course</title>
    <item identifier="i1" identifierref="r1"><title>Lesson</title></item></organization></organizations>
  <resources><resource identifier="r1" type="webcontent" adlcp:scormtype="sco" href="index.html">
    <file href="index.html"/></resource></resources>
</manifest>"""
with zipfile.ZipFile(sys.argv[1], "w") as z:
    z.writestr("imsmanifest.xml", manifest)
    z.writestr("index.html", "<html><body>Lesson</body></html>")
PY
printf '# Seed guide\n\n## Soil\n\nPlant carrots in loose soil.\n' >"$work/guide.md"
course_job=$(api -F "file=@$work/course.zip" "$base/engine/api/v1/$ST_TENANT/courses/importJobs?course=$ST_COURSE" |
	python3 -c 'import json, sys; print(json.load(sys.stdin)["result"])')
content_job=$(api -H "tenant_id: $ST_TENANT" -F "file=@$work/guide.md" "$base/api/v1/content?content_id=$ST_CONTENT" |
	python3 -c 'import json, sys; print(json.load(sys.stdin)["id"])')
statement_id=$(api -H 'Content-Type: application/json' -H 'X-Experience-API-Version: 2.0.0' \
	-d '{"actor":{"mbox":"mailto:ann@example.com"},"verb":{"id":"http://adlnet.gov/expapi/verbs/completed"},"object":{"id":"http://example.com/seed"},"result":{"score":{"raw":7},"completion":true}}' \
	"$base/lrs/TCAPI/$ST_TENANT/statements" | python3 -c 'import json, sys; print(json.load(sys.stdin)[0])')
deadline=$((SECONDS + 60))
until api "$base/engine/api/v1/$ST_TENANT/courses/importJobs/$course_job" | grep -q '"status":"COMPLETE"' &&
	api -H "tenant_id: $ST_TENANT" "$base/api/v1/jobs/$content_job" | grep -q '"status":"COMPLETED"'; do
	[ $SECONDS -lt $deadline ] || { cat "$work/lectern.log"; echo "schemathesis: the seed imports did not complete in 60 s" >&2; exit 1; }
	sleep 0.2
done
export ST_COURSE_JOB=$course_job ST_CONTENT_JOB=$content_job ST_STATEMENT=$statement_id

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
