#!/usr/bin/env bash
# The scale curve: check throughput and p99 with 10 thousand, 1 million and 10 million stored verifications, each next
# to /health in the same run, plus the query plans of the check's statements. The cost must stay flat: every
# statement on the hot path is an index lookup, never a scan.
#
#   bench/scale.sh                          # SIZES="10000 1000000 10000000", 15 s per run, release build
#   SIZES="10000 1000000" DURATION=10 bench/scale.sh
#   BENCH_BIN=path bench/scale.sh           # this binary instead of building one
#
# Each size gets a fresh data directory: the server creates the schema and a project (10-digit codes), stops, and
# bench/lib/bulk_seed.py writes the rows with SQL (millions through the API would take hours); then the server
# starts again and wrk runs /health and the check scenario (bench/scenarios/check.lua, wrong codes on a sample of
# 20 000 ids spread over the table). Writes bench/results/scale.json. SQLite only for now.
set -euo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$BENCH_DIR/.." && pwd)
SIZES=${SIZES:-10000 1000000 10000000}
DURATION=${DURATION:-15}
THREADS=${THREADS:-2}
CONNECTIONS=${CONNECTIONS:-32}
BIN=${BENCH_BIN:-}
log() { printf '==> %s\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }
while IFS= read -r name; do unset "$name"; done < <(compgen -e | grep '^VERITY_' || true)
command -v wrk >/dev/null || die "wrk is missing (Debian package wrk)"

if [[ -z $BIN ]]; then
    log "building verity (release, .build-release)"
    (cd "$ROOT" && swift build -c release --product verity --scratch-path .build-release >&2)
    BIN="$ROOT/.build-release/release/verity"
fi
WORK=$(mktemp -d /tmp/verity-scale.XXXXXX)
SERVER_PID=
stop_server() {
    if [[ -n $SERVER_PID ]]; then kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi
    SERVER_PID=
}
trap 'stop_server; rm -rf "$WORK"' EXIT
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
BASE_URL="http://127.0.0.1:$PORT"

start_server() {
    VERITY_RATE_LIMIT_DESTINATION=1000000/s VERITY_RATE_LIMIT_PROJECT=1000000/s VERITY_RATE_LIMIT_NUMBER_BLOCK=1000000/s VERITY_LOG_LEVEL=warning \
        "$BIN" serve --port "$PORT" --data-dir "$1" >>"$WORK/server.log" 2>&1 &
    SERVER_PID=$!
    for _ in $(seq 1 600); do curl -fsS "$BASE_URL/health" >/dev/null 2>&1 && return 0; sleep 0.1; done
    tail -20 "$WORK/server.log" >&2
    die "the server did not start"
}

# wrk_run SCENARIO LABEL [SECONDS]: wrk with the scenario's Lua; prints "req/s p50_ms p99_ms non_2xx".
wrk_run() {
    wrk -t"$THREADS" -c"$CONNECTIONS" -d"${3:-$DURATION}s" --timeout 5s --latency -s "$BENCH_DIR/scenarios/$1.lua" \
        "$BASE_URL" >"$WORK/$2.wrk" 2>&1 || { cat "$WORK/$2.wrk" >&2; die "wrk failed in $2"; }
    python3 - "$WORK/$2.wrk" <<'PY'
import json, sys
line = next(l for l in open(sys.argv[1]) if l.startswith("BENCH_RESULT "))
r = json.loads(line[len("BENCH_RESULT "):])
print(f'{r["requests_per_sec"]:.1f} {r["latency_us"]["p50"] / 1000:.3f} {r["latency_us"]["p99"] / 1000:.3f} {r["non_2xx"]}')
PY
}

# The plans SQLite picks for the check's statements (by id, and by destination).
query_plans() {
    python3 - "$1" <<'PY'
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
statements = {
    "check by id: read": "SELECT * FROM verifications WHERE id = ? AND project_id = ?",
    "check by id: count a wrong code": "UPDATE verifications SET check_attempts = check_attempts + 1"
        " WHERE id = ? AND status = 'pending' AND expires_at > ? AND check_attempts < ?",
    "check by destination: find the pending one": "SELECT * FROM verifications WHERE project_id = ?"
        " AND purpose = 'api' AND destination = ? AND status = 'pending'",
    # A request reads the change count first and looks its key up only when it has not kept the key at that count.
    "API key: change count": "SELECT epoch FROM key_epoch",
    # With the one key of the run SQLite rightly scans api_keys; with many it searches its secret_hash index.
    "API key: look-up": "SELECT p.id FROM api_keys k JOIN projects p ON p.id = k.project_id"
        " WHERE k.secret_hash = ? AND k.revoked_at IS NULL",
}
for name, sql in statements.items():
    plan = "; ".join(row[3] for row in db.execute("EXPLAIN QUERY PLAN " + sql, ["0"] * sql.count("?")))
    print(f"  {name}: {plan}")
PY
}

printf '%s\n' "rows health_rps check_rps check_p50_ms check_p99_ms non_2xx rss_peak_mb" >"$WORK/table"
for size in $SIZES; do
    data="$WORK/data-$size"
    log "$size rows: schema and project"
    start_server "$data"
    read -r API_KEY PROJECT_ID < <("$BIN" admin project create --name scale --code-length 10 --json \
        --data-dir "$data" | python3 -c 'import json, sys; p = json.load(sys.stdin); print(p["apiKey"], p["project"]["id"])')
    stop_server
    log "$size rows: seeding with SQL"
    python3 "$BENCH_DIR/lib/bulk_seed.py" "$data/verity.sqlite" "$PROJECT_ID" "$size" "$WORK/ids-$size.txt" >&2
    start_server "$data"
    export BENCH_API_KEY=$API_KEY BENCH_IDS_FILE="$WORK/ids-$size.txt" BENCH_THREADS=$THREADS
    log "$size rows: /health and check, ${DURATION}s each"
    read -r health _ _ _ < <(wrk_run health "health-$size")
    # Each sampled id takes 5 wrong codes: 10 thousand rows carry about 50 000 checks, a few seconds at today's
    # rates, so the smallest size is checked for at most 4 seconds (answers past an id's fifth would be 429s).
    check_seconds=$(( size * 4 / 10000 < DURATION ? (size * 4 / 10000 > 2 ? size * 4 / 10000 : 2) : DURATION ))
    read -r rps p50 p99 non2xx < <(wrk_run check "check-$size" "$check_seconds")
    # The server's resident memory high-water mark (it grows with the page cache SQLite fills).
    rss_peak=$(awk '$1 == "VmHWM:" { printf "%.1f", $2 / 1024 }' "/proc/$SERVER_PID/status")
    echo "$size $health $rps $p50 $p99 $non2xx $rss_peak" >>"$WORK/table"
    log "$size rows: check $rps req/s, p99 $p99 ms (/health $health req/s)"
    query_plans "$data/verity.sqlite" >"$WORK/plans-$size"
    stop_server
    rm -rf "$data"
done

python3 - "$WORK/table" "$ROOT/bench/results/scale.json" <<'PY'
import json, os, sys
rows = [line.split() for line in open(sys.argv[1])][1:]
results = [{"rows": int(r[0]), "health_rps": float(r[1]), "check_rps": float(r[2]), "check_p50_ms": float(r[3]),
            "check_p99_ms": float(r[4]), "non_2xx": int(r[5]), "rss_peak_mb": float(r[6])} for r in rows]
print(f'{"rows":>10} {"/health req/s":>14} {"check req/s":>12} {"check/health":>13} {"p50 ms":>8} {"p99 ms":>8} '
      f'{"non-2xx":>8} {"peak RSS MB":>12}')
for r in results:
    print(f'{r["rows"]:>10} {r["health_rps"]:>14.1f} {r["check_rps"]:>12.1f} '
          f'{100 * r["check_rps"] / r["health_rps"]:>12.1f}% {r["check_p50_ms"]:>8.2f} {r["check_p99_ms"]:>8.2f} '
          f'{r["non_2xx"]:>8} {r["rss_peak_mb"]:>12.1f}')
if len(results) > 1:
    ratio = results[-1]["check_p99_ms"] / results[0]["check_p99_ms"]
    print(f'p99 at {results[-1]["rows"]} rows = {ratio:.2f}x the p99 at {results[0]["rows"]} (target <= 1.3x: '
          f'{"met" if ratio <= 1.3 else "MISSED"})')
os.makedirs(os.path.dirname(sys.argv[2]), exist_ok=True)
json.dump({"results": results}, open(sys.argv[2], "w"), indent=2)
PY
echo
echo "query plans (largest size):"
cat "$WORK/plans-${SIZES##* }"
