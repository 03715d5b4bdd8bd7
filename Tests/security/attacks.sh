#!/usr/bin/env bash
# The attack suite over the wire: starts `verity serve` on a fresh data directory with the production rate limits
# (the login-id limit lowered to 12/h and the per-client one to 40/m so the cases meet them quickly), creates a
# project and runs Tests/security/attacks.py against it; then restarts it with private webhook targets allowed for
# the redirect case. Exits non-zero on the first attack that works.
set -euo pipefail
cd "$(dirname "$0")/../.."

swift build --product verity >/dev/null 2>&1 || swift build --product verity
VERITY="$PWD/.build/debug/verity"
WORK=$(mktemp -d /tmp/verity-attacks.XXXXXX)
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
BASE="http://127.0.0.1:$PORT"
export VERITY_DATA_DIR="$WORK/data"
SERVER_PID=""
stop_server() { if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; SERVER_PID=""; fi; }
trap 'stop_server; rm -rf "$WORK"' EXIT
fail() { echo "attacks: FAILED: $*" >&2; echo "--- server log ---" >&2; cat "$WORK/serve.log" >&2 || true; exit 1; }

start_server() {
    VERITY_RATE_LIMIT_LOGIN_ID=12/h VERITY_RATE_LIMIT_CLIENT_IP=40/m "$@" "$VERITY" serve --port "$PORT" \
        >>"$WORK/serve.log" 2>&1 &
    SERVER_PID=$!
    for _ in $(seq 1 100); do curl -sf "$BASE/health" >/dev/null && break; sleep 0.1; done
    curl -sf "$BASE/health" >/dev/null || fail "server did not answer /health"
}
# The Firebase emulator switch is on as on a developer's machine: the cases check what it still does not open.
start_server env VERITY_FIREBASE_EMULATOR_ADMIN=true

CREATED=$("$VERITY" admin project create --name "Acme" --json)
KEY=$(echo "$CREATED" | python3 -c 'import json,sys; print(json.load(sys.stdin)["apiKey"])')
PROJECT=$(echo "$CREATED" | python3 -c 'import json,sys; print(json.load(sys.stdin)["project"]["id"])')
python3 Tests/security/attacks.py "$BASE" "$KEY" "$PROJECT" "$VERITY" "$VERITY_DATA_DIR" || fail "an attack worked"
# The redirect case needs a receiver on this machine, which the production policy refuses: the same data with the
# development setting on, to show that even then a redirect is not followed.
stop_server
start_server env VERITY_WEBHOOK_ALLOW_PRIVATE=true
python3 Tests/security/attacks.py "$BASE" "$KEY" "$PROJECT" "$VERITY" "$VERITY_DATA_DIR" redirect || fail "an attack worked"
