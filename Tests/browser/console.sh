#!/usr/bin/env bash
# Checks the web console in a real headless browser: a real `verity serve` on a fresh data directory, its SMS going
# to a stand-in gateway (sms_gateway.py) that can be told to refuse them, and headless Chromium driven through
# chromedriver (console.py) over everything an operator does: sign in with a fresh link, create a project, create and
# revoke an API key, see a user's sessions and revoke them, follow a push factor to its challenges, list possession
# flows, count the day's proofs, retry a dead message, watch the dashboard, and see a used link and a form without its CSRF token refused;
# keyboard navigation and a label on every control; a screenshot of each page.
#
# Needs chromium and chromedriver (Debian: apt-get install chromium chromium-driver). Environment:
#   VERITY_BIN        the verity binary (default: `swift build --product verity`, then .build/debug/verity)
#   CHROMIUM_BIN      the browser (default: chromium, chromium-browser or google-chrome on PATH)
#   CHROMEDRIVER_BIN  chromedriver (default: chromedriver on PATH)
#   ARTIFACTS_DIR     where screenshots go (default: ${TMPDIR:-/tmp}/verity-artifacts)
set -euo pipefail
cd "$(dirname "$0")/../.."

NAME=console
. Tests/browser/lib.sh
find_browser
find_verity
artifacts_dir
WORK=$(mktemp -d /tmp/verity-console.XXXXXX)
PORT=$(free_port)
DRIVER_PORT=$(free_port)
GATEWAY_PORT=$(free_port)
BASE="http://127.0.0.1:$PORT"
DRIVER_URL="http://127.0.0.1:$DRIVER_PORT"
export VERITY_DATA_DIR="$WORK/data"
export VERITY_PUBLIC_URL="$BASE"
export VERITY_SMS_SENDER=webhook
export VERITY_SMS_WEBHOOK_URL="http://127.0.0.1:$GATEWAY_PORT/sms"
export VERITY_SMS_WEBHOOK_SECRET="console-check-gateway-secret"
SERVER_PID=""
DRIVER_PID=""
GATEWAY_PID=""

stop() { if [ -n "$1" ]; then kill "$1" 2>/dev/null || true; wait "$1" 2>/dev/null || true; fi; }
trap 'stop_driver; stop "$SERVER_PID"; stop "$GATEWAY_PID"; rm -rf "$WORK"' EXIT
fail() {
    echo "console: FAILED: $*" >&2
    echo "--- server log (last 60 lines) ---" >&2; tail -n 60 "$WORK/serve.log" >&2 || true
    if [ -s "$WORK/chromedriver.log" ]; then echo "--- chromedriver log (last 40 lines) ---" >&2; tail -n 40 "$WORK/chromedriver.log" >&2; fi
    exit 1
}
json() { python3 -c "import json,sys; print(json.load(sys.stdin)$1)"; }

python3 Tests/browser/sms_gateway.py "$GATEWAY_PORT" "$WORK/gateway.log" --fail "$WORK/gateway.fail" &
GATEWAY_PID=$!
"$VERITY" serve --port "$PORT" >>"$WORK/serve.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 1 100); do curl -sf "$BASE/health" >/dev/null && break; sleep 0.1; done
curl -sf "$BASE/health" >/dev/null || fail "server did not answer /health"
CREATED=$("$VERITY" admin project create --name "Acme" --json) || fail "admin project create"
PROJECT=$(echo "$CREATED" | json "['project']['id']")
KEY=$(echo "$CREATED" | json "['apiKey']")
"$VERITY" admin operator create ada >/dev/null || fail "admin operator create"
echo "ok - verity serve on $BASE with project Acme ($PROJECT), operator ada, SMS to a stand-in gateway"

start_driver "$DRIVER_PORT" || fail "chromedriver did not start"

python3 Tests/browser/console.py --driver "$DRIVER_URL" --chromium "$CHROMIUM" --base "$BASE" --verity "$VERITY" \
    --project "$PROJECT" --key "$KEY" --gateway-log "$WORK/gateway.log" --gateway-fail "$WORK/gateway.fail" \
    --artifacts "$ARTIFACTS" | tee "$WORK/browser.out" || fail "browser check"
passed=$(grep -c '^ok - ' "$WORK/browser.out")
echo "screenshots: $ARTIFACTS"
echo "console: $((passed + 1)) passed, 0 failed"
