#!/usr/bin/env bash
# Walks the README quickstart against a real `verity serve` on a fresh data directory: create a project,
# send a code, read it with `verity outbox list`, check it, restart, revoke a key. Exits non-zero on the
# first step that does not behave as the README says.
set -euo pipefail
# Pipelines into grep use `grep -c … >/dev/null`, not `grep -q`: -q stops reading at the first match, the writer then
# dies of SIGPIPE, and pipefail turns a match into a failure (it happened with the long /metrics text).
cd "$(dirname "$0")/../.."

swift build --product verity >/dev/null 2>&1 || swift build --product verity
VERITY="$PWD/.build/debug/verity"
WORK=$(mktemp -d /tmp/verity-quickstart.XXXXXX)
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
BASE="http://127.0.0.1:$PORT"
export VERITY_DATA_DIR="$WORK/data"
SERVER_PID=""
passed=0

stop_server() { if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; SERVER_PID=""; fi; }
trap 'stop_server; rm -rf "$WORK"' EXIT
fail() { echo "quickstart: FAILED: $*" >&2; echo "--- server log ---" >&2; cat "$WORK/serve.log" >&2 || true; exit 1; }
ok() { passed=$((passed + 1)); echo "ok - $*"; }
start_server() {
    "$VERITY" serve --port "$PORT" >>"$WORK/serve.log" 2>&1 &
    SERVER_PID=$!
    for _ in $(seq 1 100); do curl -sf "$BASE/health" >/dev/null && return 0; sleep 0.1; done
    fail "server did not answer /health"
}
json() { python3 -c "import json,sys; print(json.load(sys.stdin)$1)"; }

start_server
grep -q "verity admin project create" "$WORK/serve.log" || fail "no start-up hint about creating a project"
[ "$(stat -c %a "$VERITY_DATA_DIR/master.key")" = "600" ] || fail "master key is not mode 0600"
ok "serve starts, creates the master key (0600) and explains the next step"

if "$VERITY" serve --port "$PORT" >"$WORK/twice.out" 2>&1; then fail "a second server on port $PORT started"; fi
grep -c "^Error: 127.0.0.1:$PORT is already in use: stop what listens there, or choose another port with --port" \
    "$WORK/twice.out" >/dev/null || fail "a second server on the same port said: $(cat "$WORK/twice.out")"
grep -c "error" "$WORK/twice.out" >/dev/null && fail "a second server on the same port logged: $(cat "$WORK/twice.out")"
ok "a second server on the same port says the port is in use, and nothing else"

CREATED=$("$VERITY" admin project create --name "Acme" --json)
KEY=$(echo "$CREATED" | json "['apiKey']")
PROJECT=$(echo "$CREATED" | json "['project']['id']")
[[ "$KEY" == vk_* && "$PROJECT" == prj_* ]] || fail "project create printed $CREATED"
ok "admin project create prints a prj_ id and a vk_ key"

for command in "outbox list" "admin project list" "admin backup $WORK/typo.sqlite"; do
    # shellcheck disable=SC2086 # the command's words
    if "$VERITY" $command --data-dir "$WORK/typo" >"$WORK/typo.out" 2>&1; then fail "$command read a missing database"; fi
    grep -c "^Error: There is no database at $WORK/typo/verity.sqlite: name its folder with --data-dir" \
        "$WORK/typo.out" >/dev/null || fail "$command on a missing database said: $(cat "$WORK/typo.out")"
done
[ ! -e "$WORK/typo" ] && [ ! -e "$WORK/typo.sqlite" ] || fail "a command made the mistyped data directory"
ok "commands other than creating a project or operator refuse a data directory without a database, and make none"

STARTED=$(curl -sf "$BASE/v1/verifications" -H "Authorization: Bearer $KEY" -H "Content-Type: application/json" \
    -d '{"to": "+14155550100", "channel": "sms"}')
ID=$(echo "$STARTED" | json "['id']")
[ "$(echo "$STARTED" | json "['status']")" = "pending" ] || fail "start answered $STARTED"
ok "POST /v1/verifications starts a pending verification"

CODE=""
for _ in $(seq 1 50); do
    CODE=$("$VERITY" outbox list --to +14155550100 --json | python3 -c '
import json, re, sys
messages = [m for m in json.load(sys.stdin) if m["status"] == "sent"]
print(re.search(r"\d{6}", messages[0]["body"]).group() if messages else "")')
    [ -n "$CODE" ] && break
    sleep 0.1
done
[ -n "$CODE" ] || fail "outbox list never showed the sent code"
"$VERITY" outbox list | grep -c "Your Acme verification code is: $CODE" >/dev/null || fail "outbox list text"
ok "outbox list shows the message with its code"

WRONG=$(curl -s "$BASE/v1/verifications/check" -H "Authorization: Bearer $KEY" -H "Content-Type: application/json" \
    -d "{\"id\": \"$ID\", \"code\": \"000000\"}")
[ "$(echo "$WRONG" | json "['valid']")" = "False" ] || [ "$CODE" = "000000" ] || fail "wrong code answered $WRONG"
ok "a wrong code answers valid: false"

stop_server
start_server
CHECKED=$(curl -sf "$BASE/v1/verifications/check" -H "Authorization: Bearer $KEY" -H "Content-Type: application/json" \
    -d "{\"to\": \"+14155550100\", \"code\": \"$CODE\"}")
[ "$(echo "$CHECKED" | json "['status']")" = "approved" ] || fail "check after restart answered $CHECKED"
ok "after a restart the pending verification is still checkable and approves"

SECOND=$("$VERITY" admin key create --project "$PROJECT" --name ci --json)
SECOND_KEY=$(echo "$SECOND" | json "['secret']")
SECOND_ID=$(echo "$SECOND" | json "['key']['id']")
"$VERITY" admin key list --project "$PROJECT" | grep -c "$SECOND_ID" >/dev/null || fail "key list"
"$VERITY" admin key list --project "$PROJECT" | grep -c "$SECOND_KEY" >/dev/null && fail "key list shows a secret"
STATUS=$(curl -s -o /dev/null -w '%{http_code}' "$BASE/v1/verifications/$ID" -H "Authorization: Bearer $SECOND_KEY")
[ "$STATUS" = "200" ] || fail "a new key answered $STATUS"
# Revoked from another process while the server has just used it: refused at once.
"$VERITY" admin key revoke "$SECOND_ID" --project "$PROJECT" >/dev/null
STATUS=$(curl -s -o /dev/null -w '%{http_code}' "$BASE/v1/verifications/$ID" -H "Authorization: Bearer $SECOND_KEY")
[ "$STATUS" = "401" ] || fail "revoked key answered $STATUS"
ok "admin key create/list/revoke; a revoked key gets 401 while the server runs"
# The key-name rule is the Domain's, so the CLI keeps it as the console does: 1 to 100 characters, and nothing made.
key_count() { "$VERITY" admin key list --project "$PROJECT" --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))'; }
KEYS_BEFORE=$(key_count)
for BAD_NAME in "" "   " "$(printf 'k%.0s' $(seq 1 101))"; do
    if REFUSED=$("$VERITY" admin key create --project "$PROJECT" --name "$BAD_NAME" 2>&1); then
        fail "a key named '$BAD_NAME' was created: $REFUSED"
    fi
    echo "$REFUSED" | grep -q "A key name must be 1 to 100 characters" || fail "bad key name answered: $REFUSED"
done
[ "$(key_count)" = "$KEYS_BEFORE" ] || fail "a refused key name still made a key"
ok "admin key create refuses an empty, blank or overlong name"

"$VERITY" admin project update "$PROJECT" --allowed-countries US --code-length 8 >/dev/null
BLOCKED=$(curl -s -o /dev/null -w '%{http_code}' "$BASE/v1/verifications" -H "Authorization: Bearer $KEY" \
    -H "Content-Type: application/json" -d '{"to": "+447700900123", "channel": "sms"}')
[ "$STATUS" = "401" ] && [ "$BLOCKED" = "403" ] || fail "allowlist answered $BLOCKED"
"$VERITY" admin project update "$PROJECT" --code-length 11 2>/dev/null && fail "code length 11 accepted"
ok "admin project update changes settings and refuses bad ones"

"$VERITY" admin project update "$PROJECT" --disabled-channels voice --fallback-channel whatsapp \
    | grep -c "channels: sms,email,whatsapp, fallback: whatsapp" >/dev/null || fail "channel settings not shown"
CALL=$(curl -s "$BASE/v1/verifications" -H "Authorization: Bearer $KEY" \
    -H "Content-Type: application/json" -d '{"to": "+14155550199", "channel": "voice"}')
echo "$CALL" | grep -c '"code":"channel_disabled"' >/dev/null || fail "a turned-off channel answered $CALL"
"$VERITY" admin project update "$PROJECT" --disabled-channels fax 2>/dev/null && fail "channel fax accepted"
"$VERITY" admin project update "$PROJECT" --fallback-channel email 2>/dev/null && fail "email fallback accepted"
"$VERITY" admin project update "$PROJECT" --disabled-channels none --fallback-channel none >/dev/null
ok "admin project update turns channels off and sets the fallback channel"

# The same words ConsoleTests gives the console's settings form, read by the same parser: none and empty alike,
# trimmed, any case. An empty Descope project id once failed here while the console took it as none.
SETTINGS=$("$VERITY" admin project update "$PROJECT" --json --disabled-channels none --fallback-channel NONE \
    --descope-project-id none --allowed-countries " us , ca " --unusual-activity-response " Revoke_Sessions " \
    --firebase-emulator-admin test_numbers) || fail "settings text refused"
echo "$SETTINGS" | python3 -c '
import json, sys
s = json.load(sys.stdin)["settings"]
assert s["disabledChannels"] == [] and s.get("fallbackChannel") is None and s.get("descopeProjectId") is None, s
assert s["allowedCountries"] == ["CA", "US"] and s["unusualActivityResponse"] == "revoke_sessions", s
assert s["firebaseEmulatorAdmin"] == "test_numbers", s' || fail "settings text read as $SETTINGS"
"$VERITY" admin project update "$PROJECT" --disabled-channels voice --descope-project-id P2acme >/dev/null
EMPTIED=$("$VERITY" admin project update "$PROJECT" --json --disabled-channels "" --descope-project-id "" \
    --firebase-emulator-admin off) || fail "empty settings refused"
echo "$EMPTIED" | python3 -c '
import json, sys
s = json.load(sys.stdin)["settings"]
assert s["disabledChannels"] == [] and s.get("descopeProjectId") is None and s["firebaseEmulatorAdmin"] == "off", s' \
    || fail "empty read unlike none: $EMPTIED"
"$VERITY" admin project update "$PROJECT" --allowed-countries "" 2>/dev/null && fail "an empty SMS allow-list accepted"
"$VERITY" admin project update "$PROJECT" --allowed-countries US --unusual-activity-response none >/dev/null
ok "admin project update reads settings text as the console does"

USER_ID=$("$VERITY" admin user create --project "$PROJECT" --email jane@example.com --json | json "['id']")
FOUND=$(curl -sf "$BASE/v1/users?loginId=JANE@example.com" -H "Authorization: Bearer $KEY" | json "['items'][0]['id']")
[ "$FOUND" = "$USER_ID" ] || fail "user search answered $FOUND for $USER_ID"
ok "admin user create; GET /v1/users?loginId= finds the user while the server runs"

curl -sf "$BASE/metrics" | grep -c 'verity_verifications_approved_total{channel="sms"} 1' >/dev/null || fail "metrics"
curl -sf "$BASE/openapi.json" | python3 -c 'import json,sys; assert json.load(sys.stdin)["openapi"].startswith("3.1")' \
    || fail "openapi.json"
"$VERITY" --help | grep -c "serve" >/dev/null || fail "--help"
RELEASE=$(sed -n 's/.*static let version = "\(.*\)"/\1/p' Sources/VerityCore/VerityRelease.swift)
[ -n "$RELEASE" ] && [ "$("$VERITY" --version)" = "$RELEASE" ] || fail "--version said $("$VERITY" --version)"
curl -sf "$BASE/metrics" | grep -cE "^verity_build_info\{version=\"$RELEASE\"\} 1(\.0)?$" >/dev/null \
    || fail "no verity_build_info"
ok "/metrics (with verity_build_info), /openapi.json, --help and --version"

# Phone sign-in with a test number: nothing is sent, the fixed code signs in, refresh rotates, a role shows up.
"$VERITY" admin project test-number add +16505551234 123456 --project "$PROJECT" >/dev/null
"$VERITY" admin project test-number list --project "$PROJECT" | grep -c "+16505551234  code 123456" >/dev/null || fail "test-number list"
"$VERITY" admin role create editor --permission posts:write --project "$PROJECT" >/dev/null
AUTH=(-H "X-Verity-Project: $PROJECT" -H "Content-Type: application/json")
curl -sf "$BASE/v1/auth/otp/start" "${AUTH[@]}" -d '{"loginId": "+16505551234"}' | grep -c '"sent":false' >/dev/null \
    || fail "otp start to a test number"
SIGNED_IN=$(curl -sf "$BASE/v1/auth/otp/verify" "${AUTH[@]}" -d '{"loginId": "+16505551234", "code": "123456"}')
PHONE_USER=$(echo "$SIGNED_IN" | json "['user']['id']")
REFRESH=$(echo "$SIGNED_IN" | json "['refreshToken']")
[ "$(echo "$SIGNED_IN" | json "['firstSeen']")" = "True" ] || fail "otp verify answered $SIGNED_IN"
"$VERITY" admin role assign "$PHONE_USER" editor --project "$PROJECT" | grep -c "roles: editor" >/dev/null || fail "role assign"
REFRESHED=$(curl -sf "$BASE/v1/auth/refresh" "${AUTH[@]}" -d "{\"refreshToken\": \"$REFRESH\"}")
echo "$REFRESHED" | json "['sessionJwt']" | cut -d. -f2 | python3 -c '
import base64, json, sys
part = sys.stdin.read().strip(); claims = json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))
assert claims["roles"] == ["editor"] and claims["permissions"] == ["posts:write"], claims' || fail "refreshed claims"
REUSED=$(curl -s -o /dev/null -w '%{http_code}' "$BASE/v1/auth/refresh" "${AUTH[@]}" -d "{\"refreshToken\": \"$REFRESH\"}")
[ "$REUSED" = "401" ] || fail "a reused refresh token answered $REUSED"
"$VERITY" outbox list --to +16505551234 | grep -c "The outbox is empty." >/dev/null || fail "a message went to a test number"
ok "test-number sign-in, role in the refreshed session token, refresh-token reuse refused"

# Signing-key rotation from the CLI while the server runs: the new key is published at once, beside the old one.
JWKS="$BASE/v1/projects/$PROJECT/.well-known/jwks.json"
KEYS_BEFORE=$(curl -sf "$JWKS" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["keys"]))')
"$VERITY" admin signing-keys rotate --project "$PROJECT" | grep -c "New signing key" >/dev/null || fail "signing-keys rotate"
KEYS_AFTER=$(curl -sf "$JWKS" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["keys"]))')
[ "$KEYS_AFTER" = "$((KEYS_BEFORE + 1))" ] || fail "the JWKS had $KEYS_BEFORE keys before the rotation and $KEYS_AFTER after"
ok "admin signing-keys rotate publishes a new key in the JWKS beside the old one"

# A backup taken while the server runs restores into a working data directory (with the same master key).
"$VERITY" admin backup "$WORK/backup.sqlite" | grep -c "Backed up to" >/dev/null || fail "admin backup"
[ "$(stat -c %a "$WORK/backup.sqlite")" = "600" ] || fail "the backup is not mode 0600"
if "$VERITY" admin backup "$WORK/backup.sqlite" >/dev/null 2>&1; then fail "a backup overwrote a file"; fi
mkdir -p "$WORK/restored" && cp "$WORK/backup.sqlite" "$WORK/restored/verity.sqlite"
cp "$VERITY_DATA_DIR/master.key" "$WORK/restored/"
"$VERITY" admin project list --data-dir "$WORK/restored" | grep -c "$PROJECT" >/dev/null || fail "restored backup"
ok "admin backup copies the live database (0600, never over a file), and the copy opens with the master key"

# A deploy's SIGTERM ends long polls with the current state instead of waiting them out (up to 60 s each).
FLOW=$(curl -sf "$BASE/v1/possession" -H "Authorization: Bearer $KEY" -H "Content-Type: application/json" \
    -d '{"phoneNumber": "+14155550100", "flow": "desktop"}') || fail "possession start"
TOKEN=$(echo "$FLOW" | json "['authToken']")
FLOW_ID=$(echo "$FLOW" | json "['correlationId']")
curl -sf -X POST "$BASE/v1/possession/$FLOW_ID/link/start" -H "Authorization: Bearer $TOKEN" \
    -H "Content-Type: application/json" -d '{}' >/dev/null || fail "link start"
curl -s -o "$WORK/poll.json" -w '%{http_code}' "$BASE/v1/possession/$FLOW_ID?wait=60" \
    -H "Authorization: Bearer $TOKEN" >"$WORK/poll.status" &
POLL_PID=$!
sleep 1
STOPPED_AT=$SECONDS
stop_server
wait "$POLL_PID" || fail "the long poll failed"
[ $((SECONDS - STOPPED_AT)) -lt 30 ] || fail "the server took $((SECONDS - STOPPED_AT)) s to stop under a 60 s long poll"
[ "$(cat "$WORK/poll.status")" = "200" ] && [ "$(json "['status']" <"$WORK/poll.json")" = "link_sent" ] \
    || fail "the long poll ended with $(cat "$WORK/poll.status") $(cat "$WORK/poll.json")"
ok "SIGTERM ends a long poll at once with the current state (200 link_sent), and the server stops"

# An operator's settings: JSON logs for a log collector, and /ready for a load balancer.
VERITY_LOG_FORMAT=json "$VERITY" serve --port "$PORT" >"$WORK/json.out" 2>"$WORK/json.log" &
SERVER_PID=$!
for _ in $(seq 1 100); do curl -sf "$BASE/ready" >/dev/null && break; sleep 0.1; done
[ "$(curl -sf "$BASE/ready")" = '{"status":"ready"}' ] || fail "/ready did not answer ready"
stop_server
python3 - "$WORK/json.log" <<'PY' || fail "a line of the JSON log is not JSON: $(cat "$WORK/json.log")"
import json, sys
records = [json.loads(line) for line in open(sys.argv[1])]
assert records and all(list(r)[:5] == ["time", "level", "label", "source", "message"] for r in records), records
assert any(r["message"].startswith("Verity is listening") for r in records), records
PY
if VERITY_LOG_FORMAT=xml "$VERITY" serve --port "$PORT" >/dev/null 2>"$WORK/bad.log"; then fail "VERITY_LOG_FORMAT=xml was accepted"; fi
grep -c "VERITY_LOG_FORMAT must be text or json" "$WORK/bad.log" >/dev/null || fail "no message for a bad log format"
ok "VERITY_LOG_FORMAT=json writes one JSON object per line, a bad format is refused, /ready answers ready"

echo "quickstart: $passed passed, 0 failed"
