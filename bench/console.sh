#!/usr/bin/env bash
# The console at scale: every list page's time to first byte (server time on loopback) with 1 million verifications
# (and their outbox messages) and 100 thousand users, on SQLite.
#
#   bench/console.sh                                  # 1000000 verifications, 100000 users, 30 days, 7 runs a page
#   VERIFICATIONS=200000 USERS=20000 bench/console.sh
#   BENCH_BIN=path bench/console.sh                   # this binary (default: the debug build, swift build)
#
# A fresh data directory: the server creates the schema, a project and an operator, stops, and
# bench/lib/console_seed.py writes the rows with SQL; then the server starts again, the operator signs in with a
# console-login link, and curl times each page RUNS times after one untimed request (the dashboard's first view is
# timed on its own: it counts and records the past days once).
set -euo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$BENCH_DIR/.." && pwd)
VERIFICATIONS=${VERIFICATIONS:-1000000}
USERS=${USERS:-100000}
DAYS=${DAYS:-30}
RUNS=${RUNS:-7}
BIN=${BENCH_BIN:-}
log() { printf '==> %s\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }
while IFS= read -r name; do unset "$name"; done < <(compgen -e | grep '^VERITY_' || true)

if [[ -z $BIN ]]; then
    log "building verity (debug)"
    (cd "$ROOT" && swift build --product verity >&2)
    BIN="$ROOT/.build/debug/verity"
fi
WORK=$(mktemp -d /tmp/verity-console-bench.XXXXXX)
SERVER_PID=
stop_server() {
    if [[ -n $SERVER_PID ]]; then kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi
    SERVER_PID=
}
trap 'stop_server; rm -rf "$WORK"' EXIT
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
BASE="http://127.0.0.1:$PORT"
export VERITY_DATA_DIR="$WORK/data" VERITY_LOG_LEVEL=warning

start_server() {
    "$BIN" serve --port "$PORT" >>"$WORK/server.log" 2>&1 &
    SERVER_PID=$!
    for _ in $(seq 1 600); do curl -fsS "$BASE/health" >/dev/null 2>&1 && return 0; sleep 0.1; done
    tail -20 "$WORK/server.log" >&2
    die "the server did not start"
}

start_server
PROJECT=$("$BIN" admin project create --name Bench --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["project"]["id"])')
"$BIN" admin operator create bench >/dev/null
stop_server
log "seeding $VERIFICATIONS verifications and $USERS users over $DAYS days"
FOUND=$(python3 "$BENCH_DIR/lib/console_seed.py" "$WORK/data/verity.sqlite" "$PROJECT" --verifications "$VERIFICATIONS" \
    --users "$USERS" --days "$DAYS")
log "seeded: $FOUND"
field() { echo "$FOUND" | python3 -c "import json,sys; print(json.load(sys.stdin)['$1'])"; }
PHONE=$(field phone); EMAIL=$(field email); USER_ID=$(field user); LOGIN=$(field login)
start_server

LINK=$("$BIN" admin console-login bench --url "$BASE" 2>/dev/null)
TOKEN=${LINK#*token=}
COOKIE=$(curl -fsS -o /dev/null -D - -X POST "$BASE/console/sign-in" --data "token=$TOKEN" \
    | sed -n 's/^[Ss]et-[Cc]ookie: verity_console=\([^;]*\).*/\1/p')
[[ -n $COOKIE ]] || die "could not sign in"
enc() { python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$1"; }
SECOND_PAGE=$(curl -fsS -b "verity_console=$COOKIE" "$BASE/console/verifications" | grep -o 'cursor=ver_[0-9a-z]*' | head -1)
DEEP=$(printf 'ver_%026x' $((VERIFICATIONS / 2)))

PAGES=(
    "dashboard|/console"
    "projects|/console/projects"
    "project|/console/projects/$PROJECT"
    "verifications|/console/verifications"
    "verifications, next page|/console/verifications?$SECOND_PAGE"
    "verifications, from the middle|/console/verifications?cursor=$DEEP"
    "verifications, search a number|/console/verifications?q=$(enc "$PHONE")"
    "verifications, search an email|/console/verifications?q=$(enc "$EMAIL")"
    "verifications of a project|/console/verifications?project=$PROJECT"
    "messages|/console/messages"
    "messages, dead|/console/messages?status=dead"
    "messages, search a number|/console/messages?q=$(enc "$PHONE")"
    "users|/console/projects/$PROJECT/users"
    "users, search a login id|/console/projects/$PROJECT/users?q=$(enc "$LOGIN")"
    "a user|/console/projects/$PROJECT/users/$USER_ID"
    "audit trail|/console/audit"
)
FIRST=$(curl -sS -o /dev/null -w '%{time_starttransfer}' -b "verity_console=$COOKIE" "$BASE/console")
printf '| page | median ms | max ms |\n|---|---|---|\n'
python3 -c 'import sys; print(f"| dashboard, first view (records the 13 past days, once per database) | {float(sys.argv[1]) * 1000:.1f} | |")' "$FIRST"
for entry in "${PAGES[@]}"; do
    name=${entry%%|*}
    path=${entry#*|}
    status=$(curl -sS -o /dev/null -w '%{http_code}' -b "verity_console=$COOKIE" "$BASE$path")
    [[ $status == 200 ]] || die "$path answered $status"
    times=()
    for _ in $(seq 1 "$RUNS"); do
        times+=("$(curl -sS -o /dev/null -w '%{time_starttransfer}' -b "verity_console=$COOKIE" "$BASE$path")")
    done
    python3 - "$name" "${times[@]}" <<'PY'
import statistics, sys
ms = sorted(float(t) * 1000 for t in sys.argv[2:])
print(f"| {sys.argv[1]} | {statistics.median(ms):.1f} | {ms[-1]:.1f} |")
PY
done
