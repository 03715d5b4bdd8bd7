# Shared by the compatibility scripts (source it): a fresh `verity serve` on a free port, and the checks of its log.
#
#   source Tests/lib/serve.sh
#   start_verity NAME [VAR=value …]    # builds the CLI unless VERITY_BIN is set; exports VERITY_BIN, VERITY_BASE,
#                                      # VERITY_DATA_DIR, VERITY_SECRETS_FILE; stops the server and cleans up on exit
#   check_verity_log                   # no unhandled error, no full phone number, no listed secret in the log
#   fail MESSAGE                       # prints MESSAGE and the log's tail, exits 1

start_verity() {
    VERITY_COMPAT_NAME=$1
    shift
    if [ -z "${VERITY_BIN:-}" ]; then
        swift build --product verity >/dev/null 2>&1 || swift build --product verity
        VERITY_BIN="$PWD/.build/debug/verity"
    fi
    WORK=$(mktemp -d "/tmp/verity-$VERITY_COMPAT_NAME.XXXXXX")
    PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    export VERITY_BIN VERITY_BASE="http://127.0.0.1:$PORT" VERITY_DATA_DIR="$WORK/data"
    export VERITY_SECRETS_FILE="$WORK/secrets"
    touch "$VERITY_SECRETS_FILE"
    SERVER_PID=""
    trap 'stop_verity; rm -rf "$WORK"' EXIT
    env VERITY_LOG_LEVEL=debug "$@" "$VERITY_BIN" serve --port "$PORT" >"$WORK/serve.log" 2>&1 &
    SERVER_PID=$!
    for _ in $(seq 1 100); do curl -sf "$VERITY_BASE/health" >/dev/null && break; sleep 0.1; done
    curl -sf "$VERITY_BASE/health" >/dev/null || fail "server did not answer /health"
}

stop_verity() {
    if [ -n "${SERVER_PID:-}" ]; then
        kill "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
}

fail() {
    echo "$VERITY_COMPAT_NAME compat: FAILED: $*" >&2
    echo "--- server log ---" >&2
    tail -50 "$WORK/serve.log" >&2 || true
    exit 1
}

check_verity_log() {
    if grep -q "Unhandled error" "$WORK/serve.log"; then fail "the server logged an unhandled error"; fi
    if grep -qE '\+1415555[0-9]{4}' "$WORK/serve.log"; then fail "a full phone number reached the server log"; fi
    while read -r secret; do
        if grep -qF "$secret" "$WORK/serve.log"; then fail "a secret reached the server log"; fi
    done <"$VERITY_SECRETS_FILE"
    echo "ok - the server log has no unhandled error, no full phone number and no secret"
}
