#!/usr/bin/env bash
# Fuzzes the faces without an OpenAPI document (Twilio Verify, Descope, Firebase Auth, the console) of a real
# `verity serve` (fresh data directory) through Tests/fuzz/faces.py: every route, with each face's credentials, known
# fields of every type and size, bodies that are not JSON or not a form, odd path parameters. Fails on any answer
# >= 500, a refusal outside the face's error shape, an unhandled error or a secret in the server log.
#
#   bash Tests/fuzz/faces.sh                         # FUZZ_ROUNDS=40 requests per route, FUZZ_SEED=1
#   FUZZ_SEED=7 FUZZ_ROUNDS=200 VERITY_BIN=path bash Tests/fuzz/faces.sh
set -euo pipefail
cd "$(dirname "$0")/../.."

source Tests/lib/serve.sh
# Rate limits would turn most requests into 429s; the fuzzer is after 5xx, not limits.
start_verity fuzz-faces VERITY_FIREBASE_EMULATOR_ADMIN=true VERITY_RATE_LIMIT_CLIENT_IP=1000000/s \
    VERITY_RATE_LIMIT_LOGIN_ID=1000000/s VERITY_RATE_LIMIT_DESTINATION=1000000/s \
    VERITY_RATE_LIMIT_NUMBER_BLOCK=1000000/s VERITY_RATE_LIMIT_PROJECT=1000000/s

python3 Tests/fuzz/faces.py || fail "a face answered a fuzzed request badly"

check_verity_log
