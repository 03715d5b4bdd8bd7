"""Verifies ceremonies made by Verity's software authenticator with an independent relying party, PyPI `webauthn`
(py_webauthn): both registrations (`none` and `packed` self attestation) and the assertion. Prints one `ok - ...` line
per case and exits non-zero on the first that fails.

    python3 Tests/passkeys/verify_with_webauthn.py DIR    # DIR holds ceremonies.json (see independent_check.sh)
"""

import json
import sys

from webauthn import verify_authentication_response, verify_registration_response
from webauthn.helpers import base64url_to_bytes


def main(directory: str) -> None:
    with open(f"{directory}/ceremonies.json", encoding="utf-8") as handle:
        ceremonies = json.load(handle)
    rp_id, origin = ceremonies["rpId"], ceremonies["origin"]
    registration_challenge = base64url_to_bytes(ceremonies["registrationChallenge"])
    formats = []
    for credential in ceremonies["registrations"]:
        verified = verify_registration_response(
            credential=credential,
            expected_challenge=registration_challenge,
            expected_rp_id=rp_id,
            expected_origin=origin,
            require_user_verification=True,
        )
        fmt = str(getattr(verified.fmt, "value", verified.fmt))
        formats.append(fmt)
        print(f"ok - webauthn verifies a {fmt} registration (sign count {verified.sign_count})")
    assert formats == ["none", "packed"], formats

    first = verify_registration_response(
        credential=ceremonies["registrations"][0],
        expected_challenge=registration_challenge,
        expected_rp_id=rp_id,
        expected_origin=origin,
    )
    stored_key = base64url_to_bytes(ceremonies["storedPublicKey"])
    assert first.credential_public_key == stored_key, "Verity stores another public key than webauthn reads"
    print("ok - webauthn reads the same credential public key that Verity stores")

    verified = verify_authentication_response(
        credential=ceremonies["assertion"],
        expected_challenge=base64url_to_bytes(ceremonies["assertionChallenge"]),
        expected_rp_id=rp_id,
        expected_origin=origin,
        credential_public_key=stored_key,
        credential_current_sign_count=ceremonies["storedSignCount"],
        require_user_verification=True,
    )
    print(f"ok - webauthn verifies the assertion (new sign count {verified.new_sign_count})")


if __name__ == "__main__":
    main(sys.argv[1])
