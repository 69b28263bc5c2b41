#!/usr/bin/env bash
# soak.sh — `make soak`: TestSoak (cmd/lectern/soak_test.go) for SOAK (default 30m) of load and
# faults in each mode, distributed (serve, two workers, three indexers on PostgreSQL, a Redis and
# a MinIO of the test's own, Elasticsearch) then embedded, on the backends scripts/services.sh
# starts. The latency and resource tables are appended to SOAK_REPORT (default
# soak-report.md); what each fault looks like to an operator is in docs/operations.md ("Soak").
# SOAK_LEARNERS, SOAK_XAPI and SOAK_MODES (distributed,embedded) scale it; LECTERN_KEEP_SERVICES=1
# leaves the backends running.
set -euo pipefail
cd "$(dirname "$0")/.."
SOAK=${SOAK:-30m}
scripts/services.sh up
[ "${LECTERN_KEEP_SERVICES:-}" = 1 ] || trap 'scripts/services.sh down' EXIT
# shellcheck disable=SC1091
. "${LECTERN_CACHE:-$HOME/.cache/lectern}/run/env"
scripts/web-assets.sh >/dev/null
# Each mode: SOAK of load, then up to ten minutes of drain and checks, plus start-up.
case $SOAK in
  *h) minutes=$(( ${SOAK%h} * 60 )) ;;
  *m) minutes=${SOAK%m} ;;
  *s) minutes=$(( ${SOAK%s} / 60 + 1 )) ;;
  *) echo "SOAK=$SOAK: want a length like 30m, 1h or 90s" >&2; exit 2 ;;
esac
export LECTERN_SOAK=$SOAK LECTERN_SOAK_REPORT=${SOAK_REPORT:-$PWD/soak-report.md}
[ -z "${SOAK_LEARNERS:-}" ] || export LECTERN_SOAK_LEARNERS=$SOAK_LEARNERS
[ -z "${SOAK_XAPI:-}" ] || export LECTERN_SOAK_XAPI=$SOAK_XAPI
[ -z "${SOAK_MODES:-}" ] || export LECTERN_SOAK_MODES=$SOAK_MODES
echo "== soak: $SOAK per mode; tables appended to $LECTERN_SOAK_REPORT"
go test -count=1 -v -run '^TestSoak$' -timeout "$(( (minutes + 12) * 2 + 5 ))m" ./cmd/lectern/ |
  grep -v '^{'
