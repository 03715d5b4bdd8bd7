#!/usr/bin/env bash
# Fuzzes the HTTP API from its own OpenAPI document with schemathesis against a real `verity serve`: every
# operation, examples plus generated and stateful cases, bounded by MAX_EXAMPLES. Fails on any response >= 500, on an
# answer the document does not declare (status, content type, body, headers), on a wrong method not answered 405,
# and on a server log that shows an unhandled error or a secret (the API key, a refresh or possession token). Then
# Tests/security/enumeration.py checks sign-in answers known and unknown login ids alike, in content and in time.
#
#   bash Tests/fuzz/schemathesis.sh              # MAX_EXAMPLES=25 per operation and pass
#   VERITY_BIN=path MAX_EXAMPLES=200 bash Tests/fuzz/schemathesis.sh
set -euo pipefail
cd "$(dirname "$0")/../.."

MAX_EXAMPLES=${MAX_EXAMPLES:-25}
# No 5xx; every answer's status, content type, body and headers as the document declares them; 405 with `Allow` for a
# method a path does not have. (Not positive/negative_data_acceptance: the server checks more than a schema can say, an
# E.164 number's country code for one, and reads an explicit null of an optional field as its absence.)
CHECKS=not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance
CHECKS=$CHECKS,response_headers_conformance,unsupported_method
# pip may put the `st` script in a directory that is not on PATH (~/.local/bin for a user install).
PATH="$PATH:$(python3 -c 'import sysconfig; print(sysconfig.get_path("scripts"))'):$HOME/.local/bin"
if ! command -v st >/dev/null; then
    echo "schemathesis is missing: python3 -m pip install schemathesis" >&2
    exit 1
fi
if [ -z "${VERITY_BIN:-}" ]; then
    swift build --product verity >/dev/null 2>&1 || swift build --product verity
    VERITY_BIN="$PWD/.build/debug/verity"
fi
WORK=$(mktemp -d /tmp/verity-fuzz.XXXXXX)
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
BASE="http://127.0.0.1:$PORT"
export VERITY_DATA_DIR="$WORK/data"
SERVER_PID=""
stop_server() { if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi; }
trap 'stop_server; rm -rf "$WORK"' EXIT
fail() { echo "fuzz: FAILED: $*" >&2; tail -50 "$WORK/serve.log" >&2 || true; exit 1; }

# Rate limits would turn most generated requests into 429s; the fuzzer is after 5xx, not limits.
VERITY_LOG_LEVEL=debug VERITY_RATE_LIMIT_CLIENT_IP=1000000/s VERITY_RATE_LIMIT_LOGIN_ID=1000000/s \
    VERITY_RATE_LIMIT_DESTINATION=1000000/s VERITY_RATE_LIMIT_NUMBER_BLOCK=1000000/s VERITY_RATE_LIMIT_PROJECT=1000000/s \
    "$VERITY_BIN" serve --port "$PORT" >"$WORK/serve.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 1 100); do curl -sf "$BASE/health" >/dev/null && break; sleep 0.1; done
CREATED=$("$VERITY_BIN" admin project create --name Fuzz --json)
KEY=$(echo "$CREATED" | python3 -c 'import json,sys; print(json.load(sys.stdin)["apiKey"])')
PROJECT=$(echo "$CREATED" | python3 -c 'import json,sys; print(json.load(sys.stdin)["project"]["id"])')

# Passkeys on, so the passkey operations get past "this project offers no passkeys" to the parsing of their bodies.
"$VERITY_BIN" admin project update "$PROJECT" --passkey-rp-id localhost --passkey-rp-name Fuzz \
    --passkey-origins http://localhost >/dev/null || fail "passkeys on"

# A signed-in session and a possession token, so the session- and token-guarded operations get past their checks
# in the second pass (each pass sends one bearer value to every operation).
curl -sf "$BASE/v1/test-numbers" -H "Authorization: Bearer $KEY" -H "Content-Type: application/json" \
    -d '{"phoneNumber": "+16505550100", "code": "123456"}' >/dev/null || fail "test number"
AUTH=(-H "X-Verity-Project: $PROJECT" -H "Content-Type: application/json")
curl -sf "$BASE/v1/auth/otp/start" "${AUTH[@]}" -d '{"loginId": "+16505550100"}' >/dev/null || fail "otp start"
SIGNED_IN=$(curl -sf "$BASE/v1/auth/otp/verify" "${AUTH[@]}" -d '{"loginId": "+16505550100", "code": "123456"}')
SESSION=$(echo "$SIGNED_IN" | python3 -c 'import json,sys; print(json.load(sys.stdin)["sessionJwt"])')
REFRESH=$(echo "$SIGNED_IN" | python3 -c 'import json,sys; print(json.load(sys.stdin)["refreshToken"])')

# Hypothesis (under schemathesis) sometimes fails inside itself while describing a strategy ("SystemError: AST
# constructor recursion depth mismatch", a CPython 3.11 ast bug). Such a run has no failed check and its only
# errors are runtime errors raised from hypothesis's own code; anything else (a failed check, a network error, a
# schema error) still fails the pass.
# Only the summary's "Errors:" block is read for the kinds of error: a traceback may quote any source text (one
# quoted schemathesis's own module, whose names contain "Unsupported").
tolerated_error() {
    local report=$1 kinds
    grep -cE '^=+ FAILURES =+$' "$report" >/dev/null && return 1
    kinds=$(awk '/^Errors:$/ { on = 1; next } on && /^[^ ]/ { on = 0 } on && NF' "$report")
    [ -n "$kinds" ] || return 1
    echo "$kinds" | grep -vqE 'Runtime Error: [0-9]+$' && return 1
    grep -cE 'site-packages/hypothesis/' "$report" >/dev/null
}

# A report's failures block (each failing operation, its check and a curl line that repeats it), at most 150 lines,
# and its summary; the whole report's tail when it has no such block.
failures() {
    local report=$1
    if grep -qE '^=+ FAILURES =+$' "$report"; then
        awk '/^=+ FAILURES =+$/ { on = 1 } /^=+ SUMMARY =+$/ { on = 0 } on' "$report" | head -150
        awk '/^=+ SUMMARY =+$/ { on = 1 } on' "$report" | grep -vE '^ *- |^💡|No links point' | head -40
    else
        tail -120 "$report"
    fi
}

run_pass() {
    local label=$1; shift
    echo "fuzz: $label ($MAX_EXAMPLES examples per operation)"
    # filter_too_much is hypothesis giving up on generating data for a schema with overlapping constraints (a pattern,
    # a format and an enum on one field), at random: a stop of the generator, not an answer of the server.
    if ! st run "$BASE/openapi.json" --url "$BASE" --checks "$CHECKS" --max-examples "$MAX_EXAMPLES" \
        --suppress-health-check filter_too_much --workers 2 --no-color "$@" >"$WORK/$label.out" 2>&1; then
        # The report's tail names the failing operations, or the errors (network, schema) that stopped the run.
        local artifacts=${ARTIFACTS_DIR:-${TMPDIR:-/tmp}/verity-artifacts}
        mkdir -p "$artifacts" && cp "$WORK/$label.out" "$artifacts/fuzz-$label.out"
        if tolerated_error "$WORK/$label.out"; then
            echo "fuzz: warning: schemathesis stopped on an error inside hypothesis, not on a response; all its" \
                "checks passed (report: $artifacts/fuzz-$label.out)"
        else
            # The server's last lines first, then the failures (operation, check, the request to repeat) and the
            # summary, so that the report's head is not pushed out of a CI log's tail by what follows it.
            tail -30 "$WORK/serve.log" >&2 || true
            failures "$WORK/$label.out" >&2
            echo "fuzz: FAILED: schemathesis found server errors in the $label pass" >&2
            exit 1
        fi
    fi
    curl -sf "$BASE/health" >/dev/null || fail "the server stopped answering during the $label pass"
    grep -E "generated|passed" "$WORK/$label.out" | tail -1
}
run_pass api-key -H "Authorization: Bearer $KEY" -H "X-Verity-Project: $PROJECT"
run_pass session -H "Authorization: Bearer $SESSION" -H "X-Verity-Project: $PROJECT" \
    --include-path-regex '^/v1/auth/'

# Enumeration over the wire: the same answers, and medians within 25%, for known and unknown login ids.
python3 Tests/security/enumeration.py "$BASE" "$KEY" "$PROJECT" 200 || fail "enumeration"

grep -q "Unhandled error" "$WORK/serve.log" && fail "the server logged an unhandled error"
for secret in "$KEY" "$REFRESH" "${SESSION##*.}"; do
    grep -qF "$secret" "$WORK/serve.log" && fail "a secret reached the server log"
done
grep -qE '\+1650555[0-9]{4}' "$WORK/serve.log" && fail "a full phone number reached the server log"
echo "fuzz: no response >= 500, no unhandled error, no secret in the log"
