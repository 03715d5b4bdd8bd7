#!/usr/bin/env bash
# An independent check of the passkey code: the Swift test PasskeyExportTests makes registrations and an assertion
# with the software authenticator (written from the WebAuthn spec) and checks them with Verity's relying party, then
# PyPI `webauthn` verifies the same ceremonies as a relying party of its own; then the Python software authenticator
# (authenticator.py, which the compatibility scripts drive vendor SDKs with) is checked against `webauthn` the same way.
# Prints one `ok - …` line per case.
#
#   python3 -m pip install webauthn     # once (CI installs it)
#   bash Tests/passkeys/independent_check.sh
set -euo pipefail
cd "$(dirname "$0")/../.."

if ! python3 -c 'import webauthn' 2>/dev/null; then
    echo "webauthn (py_webauthn) is missing: python3 -m pip install webauthn" >&2
    exit 1
fi
EXPORT_DIR=$(mktemp -d /tmp/verity-passkeys.XXXXXX)
trap 'rm -rf "$EXPORT_DIR"' EXIT

# SWIFT_TEST_FLAGS (say `-j 1 --skip-build`) go to swift test as they are.
# shellcheck disable=SC2086
VERITY_PASSKEY_EXPORT_DIR="$EXPORT_DIR" swift test ${SWIFT_TEST_FLAGS:-} --filter PasskeyExportTests \
    >"$EXPORT_DIR/swift.log" 2>&1 || { tail -n 40 "$EXPORT_DIR/swift.log"; echo "PasskeyExportTests failed" >&2; exit 1; }
[ -s "$EXPORT_DIR/ceremonies.json" ] || { echo "PasskeyExportTests wrote no ceremonies" >&2; exit 1; }
python3 Tests/passkeys/verify_with_webauthn.py "$EXPORT_DIR"
python3 Tests/passkeys/check_authenticator.py
