#!/usr/bin/env bash
# Firebase compatibility: drives the Firebase face of a real `verity serve` (fresh data directory) with plain HTTP
# exactly as the Firebase iOS SDK sends it to an emulator host, and with firebase-admin from PyPI in emulator mode,
# through Tests/firebase/test_compat.py. Prints one `ok - …` line per case; exits non-zero on any failure.
#
#   python3 -m pip install firebase-admin requests     # once (CI installs them)
#   bash Tests/firebase/compat.sh
#   VERITY_BIN=path bash Tests/firebase/compat.sh
set -euo pipefail
cd "$(dirname "$0")/../.."

if ! python3 -c 'import firebase_admin, requests' 2>/dev/null; then
    echo "firebase-admin or requests is missing: python3 -m pip install firebase-admin requests" >&2
    exit 1
fi
if [ -z "${VERITY_BIN:-}" ]; then
    swift build --product verity >/dev/null 2>&1 || swift build --product verity
    VERITY_BIN="$PWD/.build/debug/verity"
fi
WORK=$(mktemp -d /tmp/verity-firebase.XXXXXX)
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
export VERITY_BIN VERITY_BASE="http://127.0.0.1:$PORT" VERITY_DATA_DIR="$WORK/data"
export VERITY_SECRETS_FILE="$WORK/secrets"
SERVER_PID=""
stop_server() { if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi; }
trap 'stop_server; rm -rf "$WORK"' EXIT
fail() { echo "firebase compat: FAILED: $*" >&2; echo "--- server log ---" >&2; tail -50 "$WORK/serve.log" >&2 || true; exit 1; }

# firebase-admin in emulator mode sends `Bearer owner`, which only the development setting accepts.
VERITY_LOG_LEVEL=debug VERITY_FIREBASE_EMULATOR_ADMIN=true "$VERITY_BIN" serve --port "$PORT" >"$WORK/serve.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 1 100); do curl -sf "$VERITY_BASE/health" >/dev/null && break; sleep 0.1; done
curl -sf "$VERITY_BASE/health" >/dev/null || fail "server did not answer /health"

python3 Tests/firebase/test_compat.py || fail "a Firebase compatibility case failed"

grep -q "Unhandled error" "$WORK/serve.log" && fail "the server logged an unhandled error"
grep -qE '\+1415555[0-9]{4}' "$WORK/serve.log" && fail "a full phone number reached the server log"
while read -r secret; do
    grep -qF "$secret" "$WORK/serve.log" && fail "a secret reached the server log"
done <"$VERITY_SECRETS_FILE"
echo "ok - the server log has no unhandled error, no full phone number and no secret"
