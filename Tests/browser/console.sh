#!/usr/bin/env bash
# Checks the web console in a real headless browser: a real `verity serve` on a fresh data directory, its SMS going
# to a stand-in gateway (sms_gateway.py) that can be told to refuse them, and headless Chromium driven through
# chromedriver (console.py) over everything an operator does: sign in with a fresh link, create a project, create and
# revoke an API key, revoke a user's sessions, retry a dead message, watch the dashboard, and see a used link and a
# form without its CSRF token refused; keyboard navigation and a label on every control; a screenshot of each page.
#
# Needs chromium and chromedriver (Debian: apt-get install chromium chromium-driver). Environment:
#   VERITY_BIN        the verity binary (default: `swift build --product verity`, then .build/debug/verity)
#   CHROMIUM_BIN      the browser (default: chromium, chromium-browser or google-chrome on PATH)
#   CHROMEDRIVER_BIN  chromedriver (default: chromedriver on PATH)
#   ARTIFACTS_DIR     where screenshots go (default: ${TMPDIR:-/tmp}/verity-artifacts)
set -euo pipefail
cd "$(dirname "$0")/../.."

CHROMIUM=${CHROMIUM_BIN:-$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)}
CHROMEDRIVER=${CHROMEDRIVER_BIN:-$(command -v chromedriver || true)}
if [ -z "$CHROMIUM" ] || [ -z "$CHROMEDRIVER" ] || [ ! -x "$CHROMIUM" ] || [ ! -x "$CHROMEDRIVER" ]; then
    echo "console: needs headless Chromium and chromedriver (found browser '${CHROMIUM}', driver '${CHROMEDRIVER}')." >&2
    echo "  Debian/Ubuntu: sudo apt-get install -y chromium chromium-driver" >&2
    exit 1
fi

if [ -n "${VERITY_BIN:-}" ]; then
    VERITY=$VERITY_BIN
else
    swift build --product verity >/dev/null 2>&1 || swift build --product verity
    VERITY="$PWD/.build/debug/verity"
fi

ARTIFACTS=${ARTIFACTS_DIR:-${TMPDIR:-/tmp}/verity-artifacts}
mkdir -p "$ARTIFACTS"
ARTIFACTS=$(cd "$ARTIFACTS" && pwd)
WORK=$(mktemp -d /tmp/verity-console.XXXXXX)
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
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
stop_driver() {
    if [ -n "$DRIVER_PID" ]; then
        # chromedriver runs in its own process group (setsid), so any browser it left behind goes with it.
        if [ "$(ps -o pgid= -p "$DRIVER_PID" 2>/dev/null | tr -d ' ')" = "$DRIVER_PID" ]; then
            kill -- "-$DRIVER_PID" 2>/dev/null || true
        else
            kill "$DRIVER_PID" 2>/dev/null || true
        fi
        wait "$DRIVER_PID" 2>/dev/null || true
    fi
}
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

if command -v setsid >/dev/null; then
    setsid "$CHROMEDRIVER" --port="$DRIVER_PORT" --log-path="$WORK/chromedriver.log" >"$WORK/chromedriver.out" 2>&1 &
else
    "$CHROMEDRIVER" --port="$DRIVER_PORT" --log-path="$WORK/chromedriver.log" >"$WORK/chromedriver.out" 2>&1 &
fi
DRIVER_PID=$!
ready=""
for _ in $(seq 1 100); do
    ready=$(curl -sf "$DRIVER_URL/status" 2>/dev/null | json "['value']['ready']" 2>/dev/null || true)
    [ "$ready" = "True" ] && break
    sleep 0.1
done
[ "$ready" = "True" ] || fail "chromedriver did not become ready: $(cat "$WORK/chromedriver.out")"

python3 Tests/browser/console.py --driver "$DRIVER_URL" --chromium "$CHROMIUM" --base "$BASE" --verity "$VERITY" \
    --project "$PROJECT" --key "$KEY" --gateway-log "$WORK/gateway.log" --gateway-fail "$WORK/gateway.fail" \
    --artifacts "$ARTIFACTS" | tee "$WORK/browser.out" || fail "browser check"
passed=$(grep -c '^ok - ' "$WORK/browser.out")
echo "screenshots: $ARTIFACTS"
echo "console: $((passed + 1)) passed, 0 failed"
