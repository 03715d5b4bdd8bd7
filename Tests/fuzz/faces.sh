#!/usr/bin/env bash
# Fuzzes the faces without an OpenAPI document (Twilio Verify, Descope, Firebase Auth, the console, providers'
# delivery-status callbacks) of a real `verity serve` (fresh data directory) through Tests/fuzz/faces.py: every
# route, with each face's credentials, known fields of every type and size, bodies that are not JSON or not a form,
# odd path parameters. Fails on any answer >= 500, a refusal outside the face's error shape, an unhandled error or a
# secret in the server log.
#
#   bash Tests/fuzz/faces.sh                         # FUZZ_ROUNDS=40 requests per route, FUZZ_SEED=1
#   FUZZ_SEED=7 FUZZ_ROUNDS=200 VERITY_BIN=path bash Tests/fuzz/faces.sh
set -euo pipefail
cd "$(dirname "$0")/../.."

for module in requests twilio; do
    python3 -c "import $module" 2>/dev/null || { echo "$module is missing: python3 -m pip install $module" >&2; exit 1; }
done
source Tests/lib/serve.sh
# The providers' callback secrets, so the fuzzer can sign callbacks and reach the code that reads them. Twilio's
# callbacks are on when a Twilio sender is: calls go to a stand-in that refuses them at once (501), so they fail
# and are retried without holding the outbox for a timeout (SMS and email stay on the console).
STANDIN_DIR=$(mktemp -d /tmp/verity-fuzz-standin.XXXXXX)
STANDIN_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 -m http.server --bind 127.0.0.1 --directory "$STANDIN_DIR" "$STANDIN_PORT" >/dev/null 2>&1 &
STANDIN_PID=$!
export FUZZ_META_APP_SECRET=fuzz-meta-app-secret FUZZ_META_VERIFY_TOKEN=fuzz-verify-token
export FUZZ_TWILIO_AUTH_TOKEN=fuzz-twilio-auth-token
# Rate limits would turn most requests into 429s; the fuzzer is after 5xx, not limits.
start_verity fuzz-faces VERITY_FIREBASE_EMULATOR_ADMIN=true \
    VERITY_WHATSAPP_APP_SECRET="$FUZZ_META_APP_SECRET" VERITY_WHATSAPP_VERIFY_TOKEN="$FUZZ_META_VERIFY_TOKEN" \
    VERITY_VOICE_SENDER=twilio VERITY_TWILIO_ACCOUNT_SID=AC00000000000000000000000000000000 \
    VERITY_TWILIO_AUTH_TOKEN="$FUZZ_TWILIO_AUTH_TOKEN" VERITY_TWILIO_VOICE_FROM=+15005550006 \
    VERITY_TWILIO_BASE_URL="http://127.0.0.1:$STANDIN_PORT" \
    VERITY_RATE_LIMIT_CLIENT_IP=1000000/s VERITY_RATE_LIMIT_LOGIN_ID=1000000/s \
    VERITY_RATE_LIMIT_DESTINATION=1000000/s VERITY_RATE_LIMIT_NUMBER_BLOCK=1000000/s \
    VERITY_RATE_LIMIT_PROJECT=1000000/s
printf '%s\n' "$FUZZ_META_APP_SECRET" "$FUZZ_TWILIO_AUTH_TOKEN" >>"$VERITY_SECRETS_FILE"
trap 'kill "$STANDIN_PID" 2>/dev/null; rm -rf "$STANDIN_DIR"; stop_verity; rm -rf "$WORK"' EXIT

python3 Tests/fuzz/faces.py || fail "a face answered a fuzzed request badly"

check_verity_log
