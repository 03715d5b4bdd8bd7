#!/usr/bin/env bash
# Descope compatibility: drives the Descope face of a real `verity serve` (fresh data directory) with the official
# `descope` package from PyPI, unchanged, pointed at `<server>/descope` through Tests/descope/test_compat.py. Prints
# one `ok - …` line per case; exits non-zero on any failure.
#
#   python3 -m pip install descope     # once (CI installs it)
#   bash Tests/descope/compat.sh
#   VERITY_BIN=path bash Tests/descope/compat.sh
set -euo pipefail
cd "$(dirname "$0")/../.."

if ! python3 -c 'import descope' 2>/dev/null; then
    echo "descope is missing: python3 -m pip install descope" >&2
    exit 1
fi
source Tests/lib/serve.sh
# Every case runs from 127.0.0.1 within a minute: the per-client limit (60 a minute) is raised so that the cases count
# none of it; the limits have their own tests.
start_verity descope VERITY_RATE_LIMIT_CLIENT_IP=600/m

python3 Tests/descope/test_compat.py || fail "a Descope compatibility case failed"

check_verity_log
