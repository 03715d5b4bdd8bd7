#!/usr/bin/env bash
# Firebase compatibility: drives the Firebase face of a real `verity serve` (fresh data directory) with plain HTTP
# exactly as the Firebase iOS SDK sends it to an emulator host, and with firebase-admin from PyPI in emulator mode,
# through Tests/firebase/test_compat.py. Prints one `ok - …` line per case; exits non-zero on any failure.
#
#   python3 -m pip install firebase-admin requests     # once (CI installs them)
#   bash Tests/firebase/compat.sh
#   VERITY_BIN=path bash Tests/firebase/compat.sh
set -euo pipefail
cd "$(dirname "$0")/../.."

if ! python3 -c 'import firebase_admin, requests' 2>/dev/null; then
    echo "firebase-admin or requests is missing: python3 -m pip install firebase-admin requests" >&2
    exit 1
fi
source Tests/lib/serve.sh
# firebase-admin in emulator mode sends `Bearer owner`, which only the development setting accepts.
start_verity firebase VERITY_FIREBASE_EMULATOR_ADMIN=true

python3 Tests/firebase/test_compat.py || fail "a Firebase compatibility case failed"

check_verity_log
