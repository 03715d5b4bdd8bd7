#!/usr/bin/env bash
# Twilio Verify compatibility: drives the Twilio face of a real `verity serve` (fresh data directory, default
# settings) with the official twilio-python client, unchanged, through Tests/twilio/test_compat.py (services and
# verifications), Tests/twilio/test_push_compat.py (entities, factors, challenges and the device protocol) and
# Tests/twilio/test_sna_compat.py (Silent Network Auth against the CAMARA stand-in Tests/camara/standin.py, which needs
# PyYAML) and Tests/twilio/test_passkeys_compat.py (Verify Passkeys, with the Python software authenticator of
# Tests/passkeys). Prints one `ok - …` line per case; exits non-zero on the first broken expectation of the script or
# any failed case.
#
#   python3 -m pip install twilio cryptography pyyaml     # once (CI installs them)
#   bash Tests/twilio/compat.sh
#   VERITY_BIN=path bash Tests/twilio/compat.sh
set -euo pipefail
cd "$(dirname "$0")/../.."

if ! python3 -c 'import twilio, cryptography, yaml' 2>/dev/null; then
    echo "twilio (twilio-python), cryptography or PyYAML is missing: python3 -m pip install twilio cryptography pyyaml" >&2
    exit 1
fi
source Tests/lib/serve.sh
# The push cases point webhooks at a receiver on 127.0.0.1, which only the development setting allows.
start_verity twilio VERITY_WEBHOOK_ALLOW_PRIVATE=true

python3 Tests/twilio/test_compat.py || fail "a Twilio compatibility case failed (verifications)"
python3 Tests/twilio/test_push_compat.py || fail "a Twilio compatibility case failed (push and TOTP)"
python3 Tests/twilio/test_sna_compat.py || fail "a Twilio compatibility case failed (Silent Network Auth)"
python3 Tests/twilio/test_passkeys_compat.py || fail "a Twilio compatibility case failed (passkeys)"

check_verity_log
