#!/usr/bin/env bash
# Checks the hosted instant-link page in a real headless browser: against a real `verity serve` on a fresh data
# directory, a backend starts a desktop possession check, the app sends the instant link, and headless Chromium
# (through chromedriver, W3C WebDriver, see webdriver.py) opens the link from the SMS at phone width, confirms, and
# lands on the done page; the backend then validates the flow. Once in English (with screenshots), once in German;
# both reopen the used link and see the "no longer valid" page in the browser's language.
#
# Needs chromium and chromedriver (Debian: apt-get install chromium chromium-driver). Environment:
#   VERITY_BIN        the verity binary (default: `swift build --product verity`, then .build/debug/verity)
#   CHROMIUM_BIN      the browser (default: chromium, chromium-browser or google-chrome on PATH)
#   CHROMEDRIVER_BIN  chromedriver (default: chromedriver on PATH)
#   ARTIFACTS_DIR     where screenshots go (default: ${TMPDIR:-/tmp}/verity-artifacts)
set -euo pipefail
cd "$(dirname "$0")/../.."

NAME=instant_link
. Tests/browser/lib.sh
find_browser
find_verity
artifacts_dir
WORK=$(mktemp -d /tmp/verity-browser.XXXXXX)
PORT=$(free_port)
DRIVER_PORT=$(free_port)
BASE="http://127.0.0.1:$PORT"
DRIVER_URL="http://127.0.0.1:$DRIVER_PORT"
export VERITY_DATA_DIR="$WORK/data"
export VERITY_PUBLIC_URL="$BASE"
SERVER_PID=""
DRIVER_PID=""
passed=0

stop_server() { if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; SERVER_PID=""; fi; }
trap 'stop_driver; stop_server; rm -rf "$WORK"' EXIT
fail() {
    echo "instant_link: FAILED: $*" >&2
    echo "--- server log ---" >&2; cat "$WORK/serve.log" >&2 || true
    if [ -s "$WORK/chromedriver.log" ]; then echo "--- chromedriver log (last 40 lines) ---" >&2; tail -n 40 "$WORK/chromedriver.log" >&2; fi
    exit 1
}
ok() { passed=$((passed + 1)); echo "ok - $*"; }
json() { python3 -c "import json,sys; print(json.load(sys.stdin)$1)"; }
# post STATUS TOKEN PATH [JSON]: POSTs with `Authorization: Bearer TOKEN`, leaves the body in $RESPONSE, and fails
# unless the answer has STATUS.
post() {
    local expected=$1 token=$2 path=$3 status
    local args=(-s -o "$WORK/response" -w '%{http_code}' -X POST "$BASE$path" -H "Authorization: Bearer $token")
    if [ $# -ge 4 ]; then args+=(-H "Content-Type: application/json" -d "$4"); fi
    status=$(curl "${args[@]}") || fail "POST $path: curl failed"
    RESPONSE=$(cat "$WORK/response")
    [ "$status" = "$expected" ] || fail "POST $path answered $status, expected $expected: $RESPONSE"
}

"$VERITY" serve --port "$PORT" >>"$WORK/serve.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 1 100); do curl -sf "$BASE/health" >/dev/null && break; sleep 0.1; done
curl -sf "$BASE/health" >/dev/null || fail "server did not answer /health"
CREATED=$("$VERITY" admin project create --name "Acme" --json) || fail "admin project create"
KEY=$(echo "$CREATED" | json "['apiKey']")
ok "verity serve on $BASE (VERITY_PUBLIC_URL) with a fresh data directory and project Acme"

start_driver "$DRIVER_PORT" || fail "chromedriver did not start"
ok "$("$CHROMEDRIVER" --version | cut -d' ' -f1-2) ready on $DRIVER_URL, browser $CHROMIUM"

# link_flow PHONE LOCALE: the backend starts a desktop flow, the app sends the instant link; sets FLOW_ID and LINK.
link_flow() {
    local phone=$1 locale=$2 token
    post 201 "$KEY" /v1/possession \
        "{\"phoneNumber\": \"$phone\", \"flow\": \"desktop\", \"finalTargetUrl\": \"https://shop.example/done\", \"locale\": \"$locale\"}"
    FLOW_ID=$(echo "$RESPONSE" | json "['correlationId']")
    token=$(echo "$RESPONSE" | json "['authToken']")
    [[ "$FLOW_ID" == pos_* && "$token" == vpt_pos_* ]] || fail "possession start answered $RESPONSE"
    post 200 "$token" "/v1/possession/$FLOW_ID/link/start"
    LINK=""
    for _ in $(seq 1 50); do
        LINK=$("$VERITY" outbox list --to "$phone" --json | python3 -c '
import json, re, sys
for message in json.load(sys.stdin):
    found = re.search(r"https?://\S+/p/\S+", message["body"])
    if message["status"] == "sent" and found:
        print(found.group())
        break') || fail "outbox list --json"
        [ -n "$LINK" ] && break
        sleep 0.1
    done
    [ -n "$LINK" ] || fail "outbox list never showed a sent instant link to $phone: $("$VERITY" outbox list --to "$phone")"
    [[ "$LINK" == "$BASE/p/"* ]] || fail "the instant link $LINK does not use VERITY_PUBLIC_URL $BASE"
}

# validate FLOW_ID: the backend's validate answer, in $RESPONSE.
validate() { post 200 "$KEY" "/v1/possession/$1/validate"; }

link_flow +14155550100 en
ok "desktop possession flow $FLOW_ID sent an instant link: ${LINK%.*}.<secret>"

# A plain GET (what a link scanner does) shows the page but confirms nothing.
curl -sf "$LINK" >"$WORK/page.html" || fail "GET $LINK"
grep -q '<button type="submit">Yes, this is my phone</button>' "$WORK/page.html" || fail "GET $LINK showed $(cat "$WORK/page.html")"
validate "$FLOW_ID"
[ "$(echo "$RESPONSE" | json "['success']")/$(echo "$RESPONSE" | json "['reason']")" = "False/pending" ] \
    || fail "validate before confirming answered $RESPONSE"
ok "opening the link without submitting leaves the flow pending"

python3 Tests/browser/webdriver.py --driver "$DRIVER_URL" --chromium "$CHROMIUM" --link "$LINK" --lang en \
    --project Acme --title "Confirm your phone" --button "Yes, this is my phone" \
    --confirm --done "Done. You can go back to Acme on your other device." --continue-text Continue \
    --next https://shop.example/done --invalid "This link has expired or was already used." \
    --artifacts "$ARTIFACTS" | tee "$WORK/browser-en.out" || fail "browser check (en)"
passed=$((passed + $(grep -c '^ok - ' "$WORK/browser-en.out")))

validate "$FLOW_ID"
[ "$(echo "$RESPONSE" | json "['success']")" = "True" ] && [ "$(echo "$RESPONSE" | json "['method']")" = "instant_link" ] \
    && [ "$(echo "$RESPONSE" | json "['phoneNumber']")" = "+14155550100" ] || fail "validate answered $RESPONSE"
ok "validate answers success: true, method: instant_link for +14155550100"
validate "$FLOW_ID"
[ "$(echo "$RESPONSE" | json "['reason']")" = "already_validated" ] || fail "a second validate answered $RESPONSE"
ok "a second validate answers already_validated"

link_flow +14155550101 de
"$VERITY" outbox list --to +14155550101 >"$WORK/outbox.txt" || fail "outbox list"
grep -q "Acme" "$WORK/outbox.txt" && grep -qF "$LINK" "$WORK/outbox.txt" || fail "outbox list text: $(cat "$WORK/outbox.txt")"
python3 Tests/browser/webdriver.py --driver "$DRIVER_URL" --chromium "$CHROMIUM" --link "$LINK" --lang de \
    --project Acme --title "Telefon bestätigen" --button "Ja, das ist mein Telefon" \
    --confirm --done "Fertig. Sie können zu Acme auf Ihrem anderen Gerät zurückkehren." --continue-text Weiter \
    --next https://shop.example/done --invalid "Dieser Link ist abgelaufen oder wurde bereits verwendet." \
    --artifacts "$ARTIFACTS" | tee "$WORK/browser-de.out" || fail "browser check (de)"
passed=$((passed + $(grep -c '^ok - ' "$WORK/browser-de.out")))
validate "$FLOW_ID"
[ "$(echo "$RESPONSE" | json "['success']")" = "True" ] && [ "$(echo "$RESPONSE" | json "['method']")" = "instant_link" ] \
    || fail "validate (de) answered $RESPONSE"
ok "German flow: validate answers success: true, method: instant_link"

echo "screenshots: $ARTIFACTS"
echo "instant_link: $passed passed, 0 failed"
