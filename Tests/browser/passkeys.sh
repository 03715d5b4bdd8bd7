#!/usr/bin/env bash
# Checks the console's passkeys in a real headless browser: a real `verity serve` whose public URL is
# http://localhost:PORT (browsers scope passkeys to a host name, never to an IP address), and headless Chromium with
# the DevTools virtual authenticator, driven through chromedriver (passkeys.py): register a passkey on the Account
# page, sign in with it from a fresh link, see the page opened on http://127.0.0.1:PORT refused with a stable code,
# and a credential removed from the authenticator fail the sign-in cleanly; then the same on a project's hosted passkey
# page (/passkeys/{token}), whose links the script makes through the API as a backend would, and that page in French.
#
# Needs chromium and chromedriver (Debian: apt-get install chromium chromium-driver). Environment:
#   VERITY_BIN        the verity binary (default: `swift build --product verity`, then .build/debug/verity)
#   CHROMIUM_BIN      the browser (default: chromium, chromium-browser or google-chrome on PATH)
#   CHROMEDRIVER_BIN  chromedriver (default: chromedriver on PATH)
set -euo pipefail
cd "$(dirname "$0")/../.."

NAME=passkeys
. Tests/browser/lib.sh
find_browser
find_verity
WORK=$(mktemp -d /tmp/verity-passkeys.XXXXXX)
PORT=$(free_port)
DRIVER_PORT=$(free_port)
BASE="http://localhost:$PORT"
DRIVER_URL="http://127.0.0.1:$DRIVER_PORT"
export VERITY_DATA_DIR="$WORK/data"
export VERITY_PUBLIC_URL="$BASE"
SERVER_PID=""
DRIVER_PID=""

stop() { if [ -n "$1" ]; then kill "$1" 2>/dev/null || true; wait "$1" 2>/dev/null || true; fi; }
trap 'stop_driver; stop "$SERVER_PID"; rm -rf "$WORK"' EXIT
fail() {
    echo "passkeys: FAILED: $*" >&2
    echo "--- server log (last 60 lines) ---" >&2; tail -n 60 "$WORK/serve.log" >&2 || true
    if [ -s "$WORK/chromedriver.log" ]; then echo "--- chromedriver log (last 40 lines) ---" >&2; tail -n 40 "$WORK/chromedriver.log" >&2; fi
    exit 1
}

"$VERITY" serve --port "$PORT" >>"$WORK/serve.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$PORT/health" >/dev/null && break; sleep 0.1; done
curl -sf "http://127.0.0.1:$PORT/health" >/dev/null || fail "server did not answer /health"
"$VERITY" admin operator create ada >/dev/null || fail "admin operator create"
json() { python3 -c "import json,sys; print(json.load(sys.stdin)$1)"; }
CREATED=$("$VERITY" admin project create --name "Acme" --json) || fail "admin project create"
PROJECT=$(echo "$CREATED" | json "['project']['id']")
KEY=$(echo "$CREATED" | json "['apiKey']")
"$VERITY" admin project update "$PROJECT" --passkey-rp-id localhost --passkey-rp-name Acme --passkey-origins "$BASE" \
    >/dev/null || fail "admin project update (passkeys)"
USER_ID=$(curl -sf -X POST "http://127.0.0.1:$PORT/v1/users" -H "Authorization: Bearer $KEY" \
    -H "Content-Type: application/json" -d '{"loginIds":["ada@example.com"]}' | json "['id']") || fail "create a user"
echo "ok - verity serve with the public URL $BASE, operator ada, project Acme ($PROJECT) with passkeys on localhost"

start_driver "$DRIVER_PORT" || fail "chromedriver did not start"

python3 Tests/browser/passkeys.py --driver "$DRIVER_URL" --chromium "$CHROMIUM" --base "$BASE" --verity "$VERITY" \
    --key "$KEY" --user "$USER_ID" \
    | tee "$WORK/browser.out" || fail "browser check"
passed=$(grep -c '^ok - ' "$WORK/browser.out")
echo "passkeys: $((passed + 1)) passed, 0 failed"
