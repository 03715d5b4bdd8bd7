#!/usr/bin/env bash
# Crash safety under load: starts `verity serve`, runs starts and wrong checks from several threads, kills the server
# with SIGKILL in the middle, restarts it on the same data and checks that nothing a client was told is lost:
# every 201 exists, no attempt counter is lower than the valid:false answers clients saw, every started verification
# has its outbox message and the restarted worker sends all of them. Runs on SQLite (a data directory) and, when a
# PostgreSQL server is configured, on a scratch PostgreSQL database. The load and checks are in crash_load.py.
#
# Duplicates: delivery is at-least-once by design. The worker claims a message, hands it to the sender, then marks it
# sent; a crash between the provider's acceptance and that mark makes the message go out again once its claim lease
# (60 s) runs out. Exactly-once would need the send and the mark in one transaction with the provider, which no
# SMS/email API offers; instead every provider gets the message id as an idempotency key so it can drop the repeat.
# The console sender has no such key and no one to drop a repeat: a repeat is a second `Console delivery` log line.
# Only a message the killed worker had claimed can go out twice, and a worker keeps at most 20 of a lane's deliveries
# in flight, so that is the bound the script holds the server to: it counts and reports duplicates and fails above 20
# (CRASH_MAX_DUPLICATES, default 20; runs here saw 0 to 2). For the same reason the wait for "all sent" allows for
# the lease.
#
#   CRASH_POSTGRES_URL    a PostgreSQL server to create a scratch database on (default: VERITY_TEST_POSTGRES_URL),
#                         e.g. postgres://postgres@127.0.0.1:55432/verity_test?sslmode=disable; trust auth expected.
#                         Neither set: the PostgreSQL round is skipped with a message.
#   VERITY_BIN            the verity binary (default: swift build --product verity, then .build/debug/verity).
#   CRASH_THREADS, CRASH_KILL_AFTER   load threads (default 4) and seconds of load before the kill (default 3).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD

if [ -z "${VERITY_BIN:-}" ]; then
    swift build --product verity >/dev/null 2>&1 || swift build --product verity
    VERITY_BIN="$ROOT/.build/debug/verity"
fi
HELPER="$ROOT/Tests/crash/crash_load.py"
THREADS="${CRASH_THREADS:-4}"
KILL_AFTER="${CRASH_KILL_AFTER:-3}"
MAX_DUPLICATES="${CRASH_MAX_DUPLICATES:-20}"
PG_URL="${CRASH_POSTGRES_URL:-${VERITY_TEST_POSTGRES_URL:-}}"

WORK=$(mktemp -d /tmp/verity-crash.XXXXXX)
DB="verity_crash_$$"
SERVER_PID=""
DB_CREATED=""
PSQL=()
passed=0

stop_server() {
    if [ -n "$SERVER_PID" ]; then
        kill "$SERVER_PID" 2>/dev/null || true
        for _ in $(seq 1 50); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
        SERVER_PID=""
    fi
}
cleanup() {
    stop_server
    if [ -n "$DB_CREATED" ]; then
        "${PSQL[@]}" -d postgres -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null 2>&1 || true
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
ROUND=""
show_logs() {
    local log
    for log in "$WORK/$ROUND"/serve-*.log; do
        [ -f "$log" ] || continue
        echo "--- $(basename "$log") (tail) ---" >&2
        tail -n 40 "$log" >&2 || true
    done
}
fail() { echo "crash: FAILED ($ROUND): $*" >&2; show_logs; exit 1; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# Prints the helper's ok lines; a failure there fails the round with the logs.
helper() {
    local line status=0
    python3 "$HELPER" "$@" >"$WORK/$ROUND/helper.out" 2>&1 || status=$?
    while IFS= read -r line; do
        case "$line" in "ok - "*) passed=$((passed + 1)); echo "ok - $ROUND: ${line#ok - }" ;; *) echo "$line" >&2 ;; esac
    done <"$WORK/$ROUND/helper.out"
    [ "$status" = 0 ] || fail "crash_load.py $1 exited $status"
}
start_server() { # $1: log name
    "$VERITY_BIN" serve --port "$PORT" >>"$WORK/$ROUND/serve-$1.log" 2>&1 &
    SERVER_PID=$!
    for _ in $(seq 1 150); do
        curl -sf "http://127.0.0.1:$PORT/health" >/dev/null 2>&1 && return 0
        kill -0 "$SERVER_PID" 2>/dev/null || fail "server exited during start-up"
        sleep 0.1
    done
    fail "server did not answer /health"
}

round() { # $1: sqlite or postgres
    ROUND=$1
    mkdir -p "$WORK/$ROUND"
    PORT=$(free_port)
    local base="http://127.0.0.1:$PORT" key
    export VERITY_DATA_DIR="$WORK/$ROUND/data" VERITY_LOG_LEVEL=info
    export VERITY_RATE_LIMIT_DESTINATION=1000000/s VERITY_RATE_LIMIT_PROJECT=1000000/s VERITY_RATE_LIMIT_NUMBER_BLOCK=1000000/s

    start_server killed
    key=$("$VERITY_BIN" admin project create --name Crash --json \
        | python3 -c 'import json, sys; print(json.load(sys.stdin)["apiKey"])') || fail "admin project create"
    [[ "$key" == vk_* ]] || fail "admin project create printed no vk_ key"

    helper load --base "$base" --key "$key" --pid "$SERVER_PID" --out "$WORK/$ROUND/results.json" \
        --threads "$THREADS" --kill-after "$KILL_AFTER"
    local status=0
    { wait "$SERVER_PID"; } 2>/dev/null || status=$? # braces: no "Killed" job notice
    SERVER_PID=""
    [ "$status" = 137 ] || fail "the server was not killed by SIGKILL (exit status $status)"

    start_server restarted
    helper verify --base "$base" --key "$key" --results "$WORK/$ROUND/results.json" --verity "$VERITY_BIN" \
        --log "$WORK/$ROUND/serve-killed.log" --log "$WORK/$ROUND/serve-restarted.log" \
        --max-duplicates "$MAX_DUPLICATES"
    stop_server
}

unset VERITY_DATABASE_URL VERITY_MASTER_KEY
round sqlite

if [ -z "$PG_URL" ]; then
    echo "crash: PostgreSQL round skipped: set CRASH_POSTGRES_URL or VERITY_TEST_POSTGRES_URL to run it"
else
    ROUND=postgres
    # postgres://user[:password]@host:port/db?… -> user, host, port (the scratch database replaces db).
    read -r PG_USER PG_HOST PG_PORT < <(python3 -c '
import sys, urllib.parse
u = urllib.parse.urlsplit(sys.argv[1])
print(u.username or "postgres", u.hostname or "127.0.0.1", u.port or 5432)' "$PG_URL")
    PSQL=(psql -h "$PG_HOST" -p "$PG_PORT" -U "$PG_USER" -v ON_ERROR_STOP=1 -q)
    "${PSQL[@]}" -d postgres -c "SELECT 1" >/dev/null 2>&1 || fail "cannot reach PostgreSQL at $PG_URL"
    "${PSQL[@]}" -d postgres -c "CREATE DATABASE $DB" || fail "CREATE DATABASE $DB"
    DB_CREATED=1
    export VERITY_DATABASE_URL="postgres://$PG_USER@$PG_HOST:$PG_PORT/$DB?sslmode=disable"
    round postgres
fi

echo "crash: $passed passed, 0 failed"
