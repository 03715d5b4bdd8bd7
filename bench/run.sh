#!/usr/bin/env bash
# Verity benchmark: check throughput, push-approval round trips, OTP sign-ins, session refreshes and possession
# checks next to /health, measured in the same run on the same server.
#
#   bench/run.sh                 # release build, then health / check / start / flow / jwks / health (py) / push /
#                                # signin / refresh / possession / health, 15 s each, on SQLite
#   bench/run.sh postgres        # the same on a throwaway PostgreSQL cluster (Debian's postgresql package, on a
#                                # free loopback port), or on BENCH_DATABASE_URL (an empty database) when set
#   DURATION=30 bench/run.sh     # longer runs
#   SKIP_BUILD=1 bench/run.sh    # reuse the last release build in .build-release
#   SCENARIOS=push bench/run.sh  # only the push round trip (plus the /health runs)
#   SCENARIOS="signin refresh" bench/run.sh   # only the sign-in scenarios (plus the /health runs)
#   SCENARIOS=possession bench/run.sh         # only the possession flow (plus the /health runs)
#
# Settings (environment):
#   DURATION=15     seconds per measured run        THREADS=2 / CONNECTIONS=32   wrk -t / -c (and pushload's -c)
#   SCENARIOS="check start flow jwks push signin refresh possession"   which scenarios to run between the two wrk
#                   /health runs:
#                   check    POST /v1/verifications/check (wrk)
#                   start    POST /v1/verifications to new destinations (wrk)
#                   flow     start, then check the id it answered (wrk): both steps of a backend's code flow
#                   jwks     GET /v1/projects/{id}/.well-known/jwks.json (wrk)
#                   push     challenge create + signed respond (bench/lib/pushload.py)
#                   signin   OTP start + verify with the project's test numbers, one per connection, so
#                            min(CONNECTIONS, 10) connections (pushload.py)
#                   refresh  POST /v1/auth/refresh with the token the previous refresh returned, one session per
#                            connection (pushload.py)
#                   possession  one possession check per iteration: backend start (API key), app OTP start and
#                            finish with the flow's auth token (a test number, code 123456), backend validate;
#                            all CONNECTIONS, test numbers round-robin (pushload.py)
#   SEED=auto       verifications to seed; auto = 20000, or more if the last run's check rate needs more
#   DEVICES=256     push factors to enroll for the push scenario (spread over the connections)
#   PUSH_FETCH=0    1: the device also GETs the challenge before answering (what VerityPush.approve does)
#   LOAD_PROCESSES=$THREADS   processes of bench/lib/pushload.py (its -t)
#   WARMUP=3        seconds of unmeasured /health (wrk) load first, and of unmeasured load before each pushload.py
#                   scenario's run (0 to skip)
#   PORT=           listen port (default: a free one)   KEEP_DATA=1   keep the temp dir (logs, ids, raw output)
#   SKIP_BUILD=1    do not run `swift build`
#   BENCH_BIN=path  benchmark this verity binary instead of building one (implies SKIP_BUILD=1)
#
# The server runs with the start and app-facing rate limits lifted (VERITY_RATE_LIMIT_PROJECT, _DESTINATION, _NUMBER_BLOCK,
# _CLIENT_IP, _LOGIN_ID = 1000000/s; the test numbers of signin, refresh and possession skip the per-destination
# limit anyway). Prints a table (req/s, p50, p99, non-2xx, CPU of server and load generator) and each scenario's
# ratio to /health (check, push round trips, sign-ins, refreshes and possession flows per second over /health
# req/s), and writes the same as JSON to bench/results/latest.json. Exit status 2 when the run is not valid
# (unexpected answers in any scenario, socket errors, verifications used more than 5 times). See bench/README.md.
set -euo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$BENCH_DIR/.." && pwd)
DURATION=${DURATION:-15}
THREADS=${THREADS:-2}
CONNECTIONS=${CONNECTIONS:-32}
SEED=${SEED:-auto}
SCENARIOS=${SCENARIOS:-check start flow jwks push signin refresh possession}
DEVICES=${DEVICES:-256}
PUSH_FETCH=${PUSH_FETCH:-0}
LOAD_PROCESSES=${LOAD_PROCESSES:-$THREADS}
WARMUP=${WARMUP:-3}
SKIP_BUILD=${SKIP_BUILD:-0}
KEEP_DATA=${KEEP_DATA:-0}
PORT=${PORT:-}
BENCH_BIN=${BENCH_BIN:-}
RESULTS_DIR="$BENCH_DIR/results"
DATABASE=${1:-sqlite}
case $DATABASE in
    sqlite) RESULTS_FILE="$RESULTS_DIR/latest.json" ;;
    postgres) RESULTS_FILE="$RESULTS_DIR/latest-postgres.json" ;;
    *) echo "usage: bench/run.sh [sqlite|postgres]" >&2; exit 1 ;;
esac

# The ids must outlast the check run: each verification answers 200 to 5 wrong codes, then 429. auto seeds 20000
# (100k checks), or more when the last run's check rate says a run of DURATION needs more (with 50% headroom).
if [[ $SEED == auto ]]; then
    SEED=$(python3 - "$RESULTS_FILE" "$DURATION" <<'PY'
import json, math, sys
try:
    rate = json.load(open(sys.argv[1]))["raw"]["check"]["requests_per_sec"]
except Exception:
    rate = 0
print(max(20000, math.ceil(rate * float(sys.argv[2]) * 1.5 / 5)))
PY
)
fi
[[ $SEED =~ ^[0-9]+$ ]] || { echo "error: SEED must be a number or auto" >&2; exit 1; }
[[ $DEVICES =~ ^[1-9][0-9]*$ ]] || { echo "error: DEVICES must be a positive number" >&2; exit 1; }
RUN_CHECK=0 RUN_START=0 RUN_FLOW=0 RUN_JWKS=0 RUN_PUSH=0 RUN_SIGNIN=0 RUN_REFRESH=0 RUN_POSSESSION=0
for scenario in $SCENARIOS; do
    case $scenario in
        check) RUN_CHECK=1 ;;
        start) RUN_START=1 ;;
        flow) RUN_FLOW=1 ;;
        jwks) RUN_JWKS=1 ;;
        push) RUN_PUSH=1 ;;
        signin) RUN_SIGNIN=1 ;;
        refresh) RUN_REFRESH=1 ;;
        possession) RUN_POSSESSION=1 ;;
        *) echo "error: unknown scenario '$scenario' in SCENARIOS (check, start, flow, jwks, push, signin, refresh,
           possession)" >&2
           exit 1 ;;
    esac
done
(( RUN_CHECK )) || SEED=0
# Scenarios driven by bench/lib/pushload.py (they also get a /health run with pushload.py, the same client).
RUN_PY=$(( RUN_PUSH || RUN_SIGNIN || RUN_REFRESH || RUN_POSSESSION ))
# Scenarios that use the project's test numbers.
RUN_TEST_NUMBERS=$(( RUN_SIGNIN || RUN_REFRESH || RUN_POSSESSION ))
# The sign-in scenario's connections: one test number each, and a project has at most 10.
SIGNIN_CONNECTIONS=$(( CONNECTIONS < 10 ? CONNECTIONS : 10 ))

log() { printf '==> %s\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# Settings from the developer's shell (a VERITY_DATABASE_URL, a sender) must not leak into the benchmarked server.
while IFS= read -r name; do unset "$name"; done < <(compgen -e | grep '^VERITY_' || true)

# --- Tools -----------------------------------------------------------------------------------------------------

if ! command -v wrk >/dev/null; then
    log "wrk is missing; installing the Debian package"
    if [[ $(id -u) == 0 ]]; then
        apt-get update -qq && apt-get install -y -qq wrk
    elif command -v sudo >/dev/null; then
        sudo apt-get update -qq && sudo apt-get install -y -qq wrk
    else
        die "install wrk (apt-get install wrk) and run again"
    fi
fi
for tool in python3 curl; do command -v "$tool" >/dev/null || die "$tool is required"; done
# pushload.py needs the `cryptography` package (the push scenario signs device tokens and answers with ES256).
if (( RUN_PY )) && ! python3 -c 'import cryptography' 2>/dev/null; then
    log "the Python package cryptography is missing; installing it with pip"
    python3 -m pip install --quiet cryptography ||
        die "install the Python package cryptography (pip, apt-get install python3-cryptography, or a venv)"
fi

# --- Build -----------------------------------------------------------------------------------------------------

# A scratch path of its own, so the release build never fights the debug build in .build.
BUILD_ARGS=(-c release --product verity --scratch-path "$ROOT/.build-release" --package-path "$ROOT")
if [[ -n $BENCH_BIN ]]; then
    BIN=$BENCH_BIN
else
    if [[ $SKIP_BUILD != 1 ]]; then
        log "building verity (release, .build-release)"
        swift build "${BUILD_ARGS[@]}"
    fi
    BIN="$(swift build "${BUILD_ARGS[@]}" --show-bin-path)/verity"
fi
BUILT=$([[ -z $BENCH_BIN && $SKIP_BUILD != 1 ]] && echo True || echo False)
[[ -x $BIN ]] || die "no verity binary at $BIN (run without SKIP_BUILD=1)"

# --- Server ----------------------------------------------------------------------------------------------------

WORK=$(mktemp -d "${TMPDIR:-/tmp}/verity-bench.XXXXXX")
DATA="$WORK/data"
SERVER_LOG="$WORK/server.log"
SERVER_PID=

PG_DIR= PG_BIN=
stop_postgres() {
    if [[ -n $PG_DIR ]]; then
        as_postgres "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m fast stop >/dev/null 2>&1 || true
        rm -rf "$PG_DIR"
    fi
}
as_postgres() { if [[ $(id -u) == 0 ]]; then runuser -u postgres -- "$@"; else sudo -u postgres "$@"; fi; }

cleanup() {
    local status=$?
    if [[ -n $SERVER_PID ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
        kill "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
    stop_postgres
    if [[ $KEEP_DATA == 1 || $status != 0 ]]; then
        log "kept $WORK (server.log, ids.txt, devices.jsonl, raw wrk and pushload output)"
    else
        rm -rf "$WORK"
    fi
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [[ -z $PORT ]]; then
    PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
fi
BASE_URL="http://127.0.0.1:$PORT"

if [[ $DATABASE == postgres ]]; then
    if [[ -n ${BENCH_DATABASE_URL:-} ]]; then
        export VERITY_DATABASE_URL=$BENCH_DATABASE_URL
        log "PostgreSQL: $BENCH_DATABASE_URL (BENCH_DATABASE_URL)"
    else
        PG_BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
        if [[ -z $PG_BIN ]]; then
            log "postgresql is missing; installing the Debian package"
            if [[ $(id -u) == 0 ]]; then apt-get update -qq && apt-get install -y -qq postgresql >/dev/null
            else sudo apt-get update -qq && sudo apt-get install -y -qq postgresql >/dev/null; fi
            PG_BIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
        fi
        # Its own directory outside $WORK (which only its owner may enter), owned by the postgres user.
        PG_DIR=$(mktemp -d /tmp/verity-bench-pg.XXXXXX)
        [[ $(id -u) == 0 ]] && chown postgres:postgres "$PG_DIR"
        PG_PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
        as_postgres "$PG_BIN/initdb" -D "$PG_DIR/data" -U postgres --auth=trust >/dev/null
        # Debian's defaults otherwise (shared_buffers 128 MB, synchronous_commit on): what an operator starts with.
        as_postgres "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/log" -w start \
            -o "-p $PG_PORT -k $PG_DIR -c listen_addresses=127.0.0.1 -c max_connections=200" >/dev/null
        psql -h 127.0.0.1 -p "$PG_PORT" -U postgres -qc "CREATE DATABASE verity_bench"
        export VERITY_DATABASE_URL="postgres://postgres@127.0.0.1:$PG_PORT/verity_bench?sslmode=disable"
        log "PostgreSQL $("$PG_BIN/postgres" --version | awk '{ print $NF }') on 127.0.0.1:$PG_PORT (a throwaway cluster)"
    fi
fi

log "starting the server on $BASE_URL (data in $DATA, log in $SERVER_LOG)"
LAUNCHED_NS=$(date +%s%N)
VERITY_RATE_LIMIT_DESTINATION=1000000/s VERITY_RATE_LIMIT_PROJECT=1000000/s VERITY_RATE_LIMIT_NUMBER_BLOCK=1000000/s \
    VERITY_RATE_LIMIT_CLIENT_IP=1000000/s VERITY_RATE_LIMIT_LOGIN_ID=1000000/s VERITY_LOG_LEVEL=warning \
    "$BIN" serve --port "$PORT" --data-dir "$DATA" >"$SERVER_LOG" 2>&1 &
SERVER_PID=$!

# Cold start: from launching the binary (fresh data directory: master key, migrations) to the first 200 on /health,
# polled every 5 ms.
for _ in $(seq 1 4000); do
    curl -fsS "$BASE_URL/health" >/dev/null 2>&1 && break
    kill -0 "$SERVER_PID" 2>/dev/null || { cat "$SERVER_LOG" >&2; die "the server exited during start-up"; }
    sleep 0.005
done
curl -fsS "$BASE_URL/health" >/dev/null || { cat "$SERVER_LOG" >&2; die "no answer on $BASE_URL/health"; }
COLD_START_MS=$(( ($(date +%s%N) - LAUNCHED_NS) / 1000000 ))
sleep 1
# Resident memory from /proc (kB): now, idle after start-up, and the high-water mark at the end of the run.
rss_kb() { awk -v key="$1:" '$1 == key { print $2 }' "/proc/$SERVER_PID/status"; }
RSS_IDLE_KB=$(rss_kb VmRSS)
log "cold start ${COLD_START_MS} ms to the first /health 200; idle RSS $(( RSS_IDLE_KB / 1024 )) MB"

# --- Data ------------------------------------------------------------------------------------------------------

# 10-digit codes: a wrong guess goes through the full HMAC compare, and an accidental match (which would approve
# the verification and turn its later checks into 404s) has odds of 1e-10 per check.
# The sign-in scenarios name the project by its public id (X-Verity-Project) instead of the API key.
API_KEY= PROJECT_ID=
read -r API_KEY PROJECT_ID < <("$BIN" admin project create --name bench --code-length 10 --json --data-dir "$DATA" |
    python3 -c 'import json, sys; p = json.load(sys.stdin); print(p["apiKey"], p["project"]["id"])') || true
[[ $API_KEY == vk_* && $PROJECT_ID == prj_* ]] || die "could not create the bench project"

deliveries() {
    curl -fsS "$BASE_URL/metrics" 2>/dev/null |
        awk '/^verity_outbox_deliveries_total/ { s += $NF } END { printf "%d\n", s }'
}

# Push notifications the outbox still owes: challenges created (201s) minus push deliveries (sent or given up).
push_backlog() {
    curl -fsS "$BASE_URL/metrics" 2>/dev/null | awk '
        /^verity_http_requests_total\{method="POST",route="\/v1\/challenges",status="201"\}/ { created += $NF }
        /^verity_outbox_deliveries_total\{channel="push"/ { delivered += $NF }
        END { printf "%d\n", created - delivered }'
}

if (( RUN_CHECK )); then
    log "seeding $SEED verifications"
    python3 "$BENCH_DIR/lib/seed.py" "$BASE_URL" "$API_KEY" "$SEED" "$WORK/ids.txt"

    # Every start queues an SMS; let the outbox worker send them all so it does not compete with the measured runs.
    log "waiting for the outbox to deliver $SEED messages"
    for _ in $(seq 1 600); do
        (( $(deliveries) >= SEED )) && break
        sleep 0.5
    done
    (( $(deliveries) >= SEED )) || log "warning: the outbox still has messages; the runs may be disturbed"
fi

if (( RUN_PUSH )); then
    # Each device: enrollment token (API key), register a P-256 key, prove possession. One user per device.
    log "enrolling $DEVICES push factors"
    python3 "$BENCH_DIR/lib/pushload.py" enroll "$BASE_URL" "$API_KEY" "$DEVICES" "$WORK/devices.jsonl"
fi

if (( RUN_TEST_NUMBERS )); then
    # +16505550100 … +16505550109, code 123456: never sent, no rate limit (the server allows 10 per project).
    python3 "$BENCH_DIR/lib/pushload.py" test-numbers "$BASE_URL" "$API_KEY" --count 10
fi

# --- Runs ------------------------------------------------------------------------------------------------------

export BENCH_API_KEY=$API_KEY BENCH_IDS_FILE="$WORK/ids.txt" BENCH_THREADS=$THREADS BENCH_PROJECT_ID=$PROJECT_ID
CLOCK_TICKS=$(getconf CLK_TCK)

# CPU seconds (user + system) the server has used so far.
server_cpu() {
    awk -v hz="$CLOCK_TICKS" '{ sub(/^.*\) /, ""); printf "%.3f\n", ($12 + $13) / hz }' "/proc/$SERVER_PID/stat"
}

# Context switches of all the server's threads so far (each is a thread going to sleep or being preempted).
server_switches() {
    cat /proc/"$SERVER_PID"/task/*/status 2>/dev/null | awk '/ctxt_switches/ { s += $2 } END { printf "%d\n", s }'
}

# CPU seconds (all cores, user + system) the whole machine has been busy so far, from /proc/stat.
machine_cpu() {
    awk -v hz="$CLOCK_TICKS" '/^cpu / { printf "%.3f\n", ($2 + $3 + $4) / hz; exit }' /proc/stat
}

# run_scenario NAME SECONDS LABEL: runs bench/scenarios/NAME.lua for SECONDS; writes LABEL.wrk (wrk's output with
# its BENCH_RESULT line) and LABEL.cpu ("server_cpu_s wrk_cpu_s wall_s machine_cpu_s server_switches") in $WORK.
# Add a scenario by adding a Lua file (see bench/lib/report.lua) and a call below.
run_scenario() {
    local name=$1 seconds=$2 label=$3
    local script="$BENCH_DIR/scenarios/$name.lua"
    [[ -f $script ]] || die "no scenario $script"
    log "$label: $name for ${seconds}s (-t$THREADS -c$CONNECTIONS)"
    local cpu_before machine_before wall_before wall_after switches_before
    switches_before=$(server_switches)
    cpu_before=$(server_cpu)
    machine_before=$(machine_cpu)
    wall_before=$(date +%s.%N)
    local TIMEFORMAT='%U %S'
    if ! { time wrk -t"$THREADS" -c"$CONNECTIONS" -d"${seconds}s" --timeout 5s --latency -s "$script" \
        "$BASE_URL" >"$WORK/$label.wrk" 2>&1; } 2>"$WORK/$label.time"; then
        cat "$WORK/$label.wrk" >&2
        die "wrk failed in $label"
    fi
    wall_after=$(date +%s.%N)
    grep -q '^BENCH_RESULT ' "$WORK/$label.wrk" || { cat "$WORK/$label.wrk" >&2; die "no BENCH_RESULT from $name.lua"; }
    kill -0 "$SERVER_PID" 2>/dev/null || { tail -50 "$SERVER_LOG" >&2; die "the server died during $label"; }
    read -r wrk_user wrk_sys <"$WORK/$label.time"
    python3 -c 'import sys; a = [float(x) for x in sys.argv[1:]]
print(f"{a[1]-a[0]:.3f} {a[2]+a[3]:.3f} {a[5]-a[4]:.3f} {a[7]-a[6]:.3f} {a[9]-a[8]:.0f}")' \
        "$cpu_before" "$(server_cpu)" "$wrk_user" "$wrk_sys" "$wall_before" "$wall_after" \
        "$machine_before" "$(machine_cpu)" "$switches_before" "$(server_switches)" >"$WORK/$label.cpu"
    grep -E 'Requests/sec|Non-2xx|Socket errors' "$WORK/$label.wrk" | sed 's/^/    /' >&2 || true
}

# run_pushload SCENARIO SECONDS LABEL: runs bench/lib/pushload.py (push, signin, refresh, possession or health) with
# CONNECTIONS connections (signin: at most 10) in LOAD_PROCESSES processes; it writes LABEL.wrk (its BENCH_RESULT
# line) and LABEL.cpu (same format as run_scenario's, measured by pushload.py over the exact measurement window)
# in $WORK.
run_pushload() {
    local scenario=$1 seconds=$2 label=$3
    local connections=$CONNECTIONS note=
    if [[ $scenario == signin ]]; then
        connections=$SIGNIN_CONNECTIONS note=", one test number each"
    elif [[ $scenario == possession ]]; then
        note=", test numbers round-robin"
    fi
    log "$label: pushload.py $scenario for ${seconds}s (-c$connections$note, $LOAD_PROCESSES processes)"
    local args=(run "$BASE_URL" --scenario "$scenario" --duration "$seconds" --connections "$connections"
        --processes "$LOAD_PROCESSES" --server-pid "$SERVER_PID" --out "$WORK/$label.wrk" --cpu-out "$WORK/$label.cpu")
    if [[ $scenario == push ]]; then
        args+=(--api-key "$API_KEY" --devices "$WORK/devices.jsonl")
        [[ $PUSH_FETCH == 1 ]] && args+=(--fetch)
    elif [[ $scenario == signin || $scenario == refresh ]]; then
        args+=(--project "$PROJECT_ID")
    elif [[ $scenario == possession ]]; then
        args+=(--api-key "$API_KEY")
    fi
    if ! python3 "$BENCH_DIR/lib/pushload.py" "${args[@]}" >"$WORK/$label.out" 2>&1; then
        cat "$WORK/$label.out" >&2
        die "pushload.py failed in $label"
    fi
    kill -0 "$SERVER_PID" 2>/dev/null || { tail -50 "$SERVER_LOG" >&2; die "the server died during $label"; }
    grep -v '^BENCH_RESULT ' "$WORK/$label.out" | sed 's/^/    /' >&2 || true
}

# After a push run: how many pushes were still queued, and how long the outbox took to catch up (so the next run
# starts on a quiet server). Writes LABEL.outbox: "backlog_at_end drain_seconds".
drain_push_outbox() {
    local label=$1 backlog start now
    backlog=$(push_backlog)
    start=$(date +%s.%N)
    for _ in $(seq 1 600); do
        (( $(push_backlog) <= 0 )) && break
        sleep 0.2
    done
    (( $(push_backlog) <= 0 )) || log "warning: the outbox still owes pushes; the next run may be disturbed"
    now=$(date +%s.%N)
    python3 -c 'import sys; print(sys.argv[1], f"{float(sys.argv[3]) - float(sys.argv[2]):.1f}")' \
        "$backlog" "$start" "$now" >"$WORK/$label.outbox"
    log "outbox: $backlog pushes queued at the end of $label, drained in $(cut -d' ' -f2 "$WORK/$label.outbox") s"
}

if (( WARMUP > 0 )); then
    run_scenario health "$WARMUP" warmup
fi
run_scenario health "$DURATION" health-1
if (( RUN_CHECK )); then
    run_scenario check "$DURATION" check
fi
if (( RUN_START )); then
    run_scenario start "$DURATION" start
fi
if (( RUN_FLOW )); then
    run_scenario flow "$DURATION" flow
fi
if (( RUN_JWKS )); then
    # A project's first key is made when it first signs; make it now so the set is not empty.
    "$BIN" admin signing-keys rotate --project "$PROJECT_ID" --data-dir "$DATA" >/dev/null
    run_scenario jwks "$DURATION" jwks
fi
if (( RUN_PY )); then
    run_pushload health "$DURATION" health-py
fi
if (( RUN_PUSH )); then
    if (( WARMUP > 0 )); then
        run_pushload push "$WARMUP" push-warmup
        drain_push_outbox push-warmup
    fi
    run_pushload push "$DURATION" push
    drain_push_outbox push
fi
for scenario in signin refresh possession; do
    flag=RUN_${scenario^^}
    (( ${!flag} )) || continue
    if (( WARMUP > 0 )); then
        run_pushload "$scenario" "$WARMUP" "$scenario-warmup"
    fi
    run_pushload "$scenario" "$DURATION" "$scenario"
done
run_scenario health "$DURATION" health-2
awk -v start="$COLD_START_MS" -v idle="$RSS_IDLE_KB" -v peak="$(rss_kb VmHWM)" 'BEGIN {
    printf "{\"cold_start_ms\": %d, \"rss_idle_mb\": %.1f, \"rss_peak_mb\": %.1f}\n", start, idle / 1024, peak / 1024 }' \
    >"$WORK/memory.json"

# --- Report ----------------------------------------------------------------------------------------------------

python3 - "$WORK/meta.json" <<EOF
import json, subprocess, sys
def sh(cmd):
    try:
        return subprocess.run(cmd, shell=True, capture_output=True, text=True, cwd="$ROOT").stdout.strip()
    except Exception:
        return ""
cpu = sh("lscpu | sed -n 's/^Model name: *//p' | head -1") or "unknown"
dirty = "+dirty" if sh("git status --porcelain --untracked-files=no") else ""
json.dump({
    "date": sh("date -u +%Y-%m-%dT%H:%M:%SZ"),
    "git_commit": (sh("git rev-parse --short HEAD") or "unknown") + dirty,
    "database": "$DATABASE",
    "duration_s": $DURATION, "threads": $THREADS, "connections": $CONNECTIONS, "seeded": $SEED,
    "warmup_s": $WARMUP, "scenarios": "$SCENARIOS".split(),
    "push": {"devices": $DEVICES if $RUN_PUSH else 0, "fetch": "$PUSH_FETCH" == "1", "load_processes": $LOAD_PROCESSES,
             "platform": "apns (console push sender: no APNs credentials)"},
    "sessions": {"test_numbers": 10 if $RUN_TEST_NUMBERS else 0,
                 "signin_connections": $SIGNIN_CONNECTIONS if $RUN_SIGNIN else 0,
                 "refresh_connections": $CONNECTIONS if $RUN_REFRESH else 0,
                 "possession_connections": $CONNECTIONS if $RUN_POSSESSION else 0},
    # git_commit describes the tree now; with SKIP_BUILD=1 or BENCH_BIN the binary may be older.
    "binary": "$BIN", "built_this_run": $BUILT,
    "machine": {"nproc": int(sh("nproc") or 0), "cpu": cpu, "kernel": sh("uname -r"),
                "swift": sh("swift --version 2>&1 | head -1"), "wrk": sh("wrk -v 2>&1 | head -1"),
                "python": sh("python3 --version"),
                "cryptography": sh("python3 -c 'import cryptography; print(cryptography.__version__)'")},
}, open(sys.argv[1], "w"), indent=2)
EOF

status=0
python3 "$BENCH_DIR/lib/summarize.py" "$WORK" "$RESULTS_FILE" || status=$?
exit "$status"
