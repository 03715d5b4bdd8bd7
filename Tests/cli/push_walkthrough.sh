#!/usr/bin/env bash
# Walks push approval with `verity device` as the phone against a real `verity serve` on a fresh data directory:
# the backend mints an enrollment token, the simulated phone enrolls, the backend sends challenges by user id, the
# phone lists, approves and denies them, and the backend reads the outcome. Exits non-zero on the first step that
# does not behave as the README says.
set -euo pipefail
# Pipelines into grep use `grep -c … >/dev/null`, not `grep -q`: -q stops reading at the first match, the writer then
# dies of SIGPIPE, and pipefail turns a match into a failure (it happened with the long /metrics text).
cd "$(dirname "$0")/../.."

if [ -n "${VERITY_BIN:-}" ]; then
    VERITY="$VERITY_BIN"
else
    swift build --product verity >/dev/null 2>&1 || swift build --product verity
    VERITY="$PWD/.build/debug/verity"
fi
WORK=$(mktemp -d /tmp/verity-push.XXXXXX)
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
BASE="http://127.0.0.1:$PORT"
PHONE="$WORK/phone"
UV_PHONE="$WORK/uv-phone"
export VERITY_DATA_DIR="$WORK/data"
unset VERITY_DEVICE_STATE_DIR
SERVER_PID=""
passed=0

stop_server() { if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; SERVER_PID=""; fi; }
trap 'stop_server; rm -rf "$WORK"' EXIT
fail() { echo "push walkthrough: FAILED: $*" >&2; echo "--- server log ---" >&2; cat "$WORK/serve.log" >&2 || true; exit 1; }
ok() { passed=$((passed + 1)); echo "ok - $*"; }
json() { python3 -c "import json,sys; print(json.load(sys.stdin)$1)"; }
device() { "$VERITY" device "$@" --state-dir "$PHONE"; }
backend() { curl -sf "$BASE$1" -H "Authorization: Bearer $KEY" -H "Content-Type: application/json" "${@:2}"; }
challenge() {
    backend /v1/challenges -d "{\"userId\": \"jane\", \"message\": \"$1\", \"details\": [
        {\"label\": \"Location\", \"value\": \"Berlin, DE\"}, {\"label\": \"Browser\", \"value\": \"Firefox on Linux\"}]}" \
        | json "['id']"
}

"$VERITY" serve --port "$PORT" >>"$WORK/serve.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 1 100); do curl -sf "$BASE/health" >/dev/null && break; sleep 0.1; done
curl -sf "$BASE/health" >/dev/null || fail "server did not answer /health"

CREATED=$("$VERITY" admin project create --name "Acme" --json)
KEY=$(echo "$CREATED" | json "['apiKey']")
PROJECT=$(echo "$CREATED" | json "['project']['id']")
TOKEN=$(backend /v1/enrollment-tokens -d '{"userId": "jane"}' | json "['token']")
[[ "$TOKEN" == vet_* ]] || fail "enrollment token is $TOKEN"
ok "the backend mints an enrollment token for jane"

device challenges >/dev/null 2>"$WORK/err" && fail "challenges before enrolling succeeded"
grep -q "No device is enrolled" "$WORK/err" || fail "challenges before enrolling said: $(cat "$WORK/err")"
ENROLLED=$(device enroll --server "$BASE" --token "$TOKEN" --name "Jane's phone")
FACTOR=$(echo "$ENROLLED" | grep -o 'fac_[A-Za-z0-9_-]*' | head -n 1)
[ -n "$FACTOR" ] || fail "enroll printed $ENROLLED"
[ "$(stat -c %a "$PHONE")" = "700" ] || fail "state directory is not mode 0700"
for file in "$PHONE"/*; do [ "$(stat -c %a "$file")" = "600" ] || fail "$file is not mode 0600"; done
FACTOR_JSON=$(backend "/v1/factors/$FACTOR")
[ "$(echo "$FACTOR_JSON" | json "['status']")" = "verified" ] || fail "server has the factor as $FACTOR_JSON"
[ "$(echo "$FACTOR_JSON" | json "['friendlyName']")" = "Jane's phone" ] || fail "friendly name in $FACTOR_JSON"
ok "device enroll registers and verifies $FACTOR; state directory 0700, files 0600"

device enroll --server "$BASE" --token "$TOKEN" 2>"$WORK/err" && fail "a second enroll into the same state succeeded"
grep -q "already holds factor $FACTOR" "$WORK/err" || fail "second enroll said: $(cat "$WORK/err")"
STATUS=$(VERITY_DEVICE_STATE_DIR="$PHONE" "$VERITY" device status --json)
[ "$(echo "$STATUS" | json "['factorId']")" = "$FACTOR" ] || fail "status printed $STATUS"
[ "$(echo "$STATUS" | json "['userId']")" = "jane" ] || fail "status printed $STATUS"
[ "$(echo "$STATUS" | json "['server']")" = "$BASE" ] || fail "status printed $STATUS"
device status | grep -c "User:     jane" >/dev/null || fail "status text"
ok "device status (also via VERITY_DEVICE_STATE_DIR); enrolling twice into one state directory is refused"

device challenges | grep -c "No pending challenges" >/dev/null || fail "challenges before any were sent"
FIRST=$(challenge "Sign in to Acme?")
LISTED=$(device challenges)
echo "$LISTED" | grep -c "^$FIRST  Sign in to Acme?  expires " >/dev/null || fail "challenges printed $LISTED"
echo "$LISTED" | grep -c "^  Location: Berlin, DE$" >/dev/null || fail "challenges printed $LISTED"
[ "$(device challenges --json | json "[0]['id']")" = "$FIRST" ] || fail "challenges --json"
ok "device challenges lists the backend's challenge with its message, details and expiry"

device approve "$FIRST" | grep -c "Approved $FIRST" >/dev/null || fail "approve output"
ANSWERED=$(backend "/v1/challenges/$FIRST")
[ "$(echo "$ANSWERED" | json "['status']")" = "approved" ] || fail "backend sees $ANSWERED"
[ "$(echo "$ANSWERED" | json "['respondedFactorId']")" = "$FACTOR" ] || fail "backend sees $ANSWERED"
device challenges | grep -c "No pending challenges" >/dev/null || fail "the approved challenge is still listed"
ok "device approve: the backend reads status approved, answered by $FACTOR"

SECOND=$(challenge "Transfer 500 EUR?")
[ "$(device deny "$SECOND" --json | json "['status']")" = "denied" ] || fail "deny --json"
[ "$(backend "/v1/challenges/$SECOND" | json "['status']")" = "denied" ] || fail "backend does not see the denial"
ok "device deny: the backend reads status denied"

device approve "$FIRST" >/dev/null 2>"$WORK/err" && fail "approving an answered challenge succeeded"
grep -q "^Error: challenge_already_answered: " "$WORK/err" || fail "answered challenge said: $(cat "$WORK/err")"
device deny chl_doesnotexist >/dev/null 2>"$WORK/err" && fail "denying an unknown challenge succeeded"
grep -q "^Error: challenge_not_found: " "$WORK/err" || fail "unknown challenge said: $(cat "$WORK/err")"
[ "$(backend "/v1/challenges/$FIRST" | json "['status']")" = "approved" ] || fail "the first answer did not stick"
ok "answering an answered or unknown challenge exits non-zero with its stable code"

uv_device() { "$VERITY" device "$@" --state-dir "$UV_PHONE"; }
ANN_TOKEN=$(backend /v1/enrollment-tokens -d '{"userId": "ann"}' | json "['token']")
uv_device enroll --server "$BASE" --token "$ANN_TOKEN" --name "Ann's phone" --with-uv >/dev/null
ANN_FACTOR=$(VERITY_DEVICE_STATE_DIR="$UV_PHONE" "$VERITY" device status --json | json "['factorId']")
[ "$(backend "/v1/factors/$ANN_FACTOR" | json "['hasUserVerificationKey']")" = "True" ] || fail "no UV key on the server"
[ "$(backend "/v1/factors/$FACTOR" | json "['hasUserVerificationKey']")" = "False" ] || fail "jane's phone has a UV key"
ok "device enroll --with-uv: the backend sees a user-verification key on $ANN_FACTOR, none on $FACTOR"

REQUIRED=$(backend /v1/challenges -d '{"userId": "ann", "message": "Pay 20 EUR?", "userVerification": "required",
    "context": {"location": "Berlin, Germany", "app": "Acme Shop"}}' | json "['id']")
LISTED=$(uv_device challenges)
echo "$LISTED" | grep -c "^  Where: Berlin, Germany$" >/dev/null || fail "challenges printed $LISTED"
echo "$LISTED" | grep -c "^  steps: consent .* -> user verification, required (approve --uv)" >/dev/null \
    || fail "challenges printed no steps: $LISTED"
uv_device approve "$REQUIRED" >/dev/null 2>"$WORK/err" && fail "approve without --uv approved a required challenge"
grep -q "^Error: user_verification: " "$WORK/err" || fail "approve without --uv said: $(cat "$WORK/err")"
[ "$(backend "/v1/challenges/$REQUIRED" | json "['status']")" = "pending" ] || fail "the challenge did not stay pending"
uv_device approve "$REQUIRED" --uv | grep -c "Approved $REQUIRED" >/dev/null || fail "approve --uv output"
ANSWERED=$(backend "/v1/challenges/$REQUIRED")
[ "$(echo "$ANSWERED" | json "['keyType']")" = "userVerification" ] || fail "backend sees $ANSWERED"
[ "$(echo "$ANSWERED" | json "['amr']")" = "['face']" ] || fail "backend sees $ANSWERED"
ok "a required challenge shows its steps, is refused without --uv and approved with --uv (keyType, amr face)"

uv_device rotate-key | grep -c "Rotated the device key of $ANN_FACTOR" >/dev/null || fail "rotate-key output"
uv_device update --push-token 0a1b2c3d --name "Ann's new phone" | grep -c "Ann's new phone" >/dev/null \
    || fail "update output"
[ "$(backend "/v1/factors/$ANN_FACTOR" | json "['friendlyName']")" = "Ann's new phone" ] || fail "name not updated"
ok "device rotate-key and update: signed by the device, the server takes the new key and name"

"$VERITY" admin project update "$PROJECT" --unusual-activity-response suspend_factor | grep -c "suspend_factor" \
    >/dev/null || fail "project update did not show the response"
[ "$(backend /v1/project | json "['unusualActivityResponse']")" = "suspend_factor" ] || fail "GET /v1/project"
SUSPICIOUS=$(backend /v1/challenges -d '{"userId": "ann", "message": "Sign in from Lagos?"}' | json "['id']")
uv_device deny "$SUSPICIOUS" --not-me | grep -c "this wasn't me" >/dev/null || fail "deny --not-me output"
[ "$(backend "/v1/challenges/$SUSPICIOUS" | json "['reason']")" = "not_me" ] || fail "backend sees no reason"
[ "$(backend "/v1/security-events?userId=ann" | json "['items'][0]['type']")" = "unusual_activity_reported" ] \
    || fail "no security event"
[ "$(backend "/v1/factors/$ANN_FACTOR" | json ".get('suspendedAt') is not None")" = "True" ] || fail "not suspended"
[ "$(curl -s -o /dev/null -w '%{http_code}' "$BASE/v1/challenges" -H "Authorization: Bearer $KEY" \
    -H "Content-Type: application/json" -d "{\"factorId\": \"$ANN_FACTOR\"}")" = "403" ] \
    || fail "a suspended factor got a challenge"
ok "device deny --not-me: security event, and the project's suspend_factor response"

device forget | grep -c "Deleted $FACTOR" >/dev/null || fail "forget output"
[ "$(curl -s -o /dev/null -w '%{http_code}' "$BASE/v1/factors/$FACTOR" -H "Authorization: Bearer $KEY")" = "404" ] \
    || fail "the server still has $FACTOR"
[ ! -e "$PHONE/device.json" ] && [ -z "$(ls "$PHONE")" ] || fail "forget left $(ls "$PHONE")"
device status >/dev/null 2>&1 && fail "status after forget succeeded"
ok "device forget deletes the factor on the server and the local state"

echo "push walkthrough: $passed passed, 0 failed"
