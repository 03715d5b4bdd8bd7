#!/usr/bin/env bash
# Twilio Verify compatibility: drives the Twilio face of a real `verity serve` (fresh data directory, default
# settings) with the official twilio-python client, unchanged, through Tests/twilio/test_compat.py (services and
# verifications) and Tests/twilio/test_push_compat.py (entities, factors, challenges and the device protocol). Prints one
# `ok - …` line per case; exits non-zero on the first broken expectation of the script or any failed case.
#
#   python3 -m pip install twilio cryptography     # once (CI installs them)
#   bash Tests/twilio/compat.sh
#   VERITY_BIN=path bash Tests/twilio/compat.sh
set -euo pipefail
cd "$(dirname "$0")/../.."

if ! python3 -c 'import twilio, cryptography' 2>/dev/null; then
    echo "twilio (twilio-python) or cryptography is missing: python3 -m pip install twilio cryptography" >&2
    exit 1
fi
if [ -z "${VERITY_BIN:-}" ]; then
    swift build --product verity >/dev/null 2>&1 || swift build --product verity
    VERITY_BIN="$PWD/.build/debug/verity"
fi
WORK=$(mktemp -d /tmp/verity-twilio.XXXXXX)
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
export VERITY_BIN VERITY_BASE="http://127.0.0.1:$PORT" VERITY_DATA_DIR="$WORK/data" VERITY_SECRETS_FILE="$WORK/secrets"
SERVER_PID=""
stop_server() { if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi; }
trap 'stop_server; rm -rf "$WORK"' EXIT
fail() { echo "twilio compat: FAILED: $*" >&2; echo "--- server log ---" >&2; tail -50 "$WORK/serve.log" >&2 || true; exit 1; }

# The push cases point webhooks at a receiver on 127.0.0.1, which only the development setting allows.
VERITY_LOG_LEVEL=debug VERITY_WEBHOOK_ALLOW_PRIVATE=true "$VERITY_BIN" serve --port "$PORT" >"$WORK/serve.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 1 100); do curl -sf "$VERITY_BASE/health" >/dev/null && break; sleep 0.1; done
curl -sf "$VERITY_BASE/health" >/dev/null || fail "server did not answer /health"

python3 Tests/twilio/test_compat.py || fail "a Twilio compatibility case failed (verifications)"
python3 Tests/twilio/test_push_compat.py || fail "a Twilio compatibility case failed (push and TOTP)"

grep -q "Unhandled error" "$WORK/serve.log" && fail "the server logged an unhandled error"
grep -qE '\+1415555[0-9]{4}' "$WORK/serve.log" && fail "a full phone number reached the server log"
while read -r secret; do
    grep -qF "$secret" "$WORK/serve.log" && fail "an API key reached the server log"
done <"$VERITY_SECRETS_FILE"
echo "ok - the server log has no unhandled error, no full phone number and no API key"
