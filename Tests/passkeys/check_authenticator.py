"""Checks the Python software authenticator (Tests/passkeys/authenticator.py) once against an independent relying
party, PyPI `webauthn` (py_webauthn): its options go in, the authenticator's answers must verify, and each hostile
switch (wrong origin, flipped signature bit, counter regression, no UV) must be refused. Prints one `ok - ...` line per
case and exits non-zero on the first that fails.

    python3 Tests/passkeys/check_authenticator.py
"""

import json
import os
import sys

from webauthn import (
    generate_authentication_options,
    generate_registration_options,
    options_to_json,
    verify_authentication_response,
    verify_registration_response,
)
from webauthn.helpers.structs import PublicKeyCredentialDescriptor, UserVerificationRequirement

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from authenticator import Authenticator, from_b64url  # noqa: E402

RP_ID, ORIGIN = "example.com", "https://example.com"


def refused(action) -> bool:
    """Whether `action` raises, as webauthn does for an answer it refuses."""
    try:
        action()
    except Exception:  # py_webauthn raises several types; any refusal counts
        return True
    return False


def main() -> None:
    device = Authenticator()
    creation = generate_registration_options(rp_id=RP_ID, rp_name="Example", user_name="ada")
    registration = device.create(options_to_json(creation), ORIGIN)
    verified = verify_registration_response(
        credential=json.dumps(registration),
        expected_challenge=creation.challenge,
        expected_rp_id=RP_ID,
        expected_origin=ORIGIN,
        require_user_verification=True,
    )
    assert verified.credential_id == from_b64url(registration["id"])
    print(f"ok - webauthn verifies the authenticator's registration (sign count {verified.sign_count})")

    def assertion_options():
        return generate_authentication_options(
            rp_id=RP_ID,
            allow_credentials=[PublicKeyCredentialDescriptor(id=verified.credential_id)],
            user_verification=UserVerificationRequirement.REQUIRED,
        )

    def verify(options, answer, count):
        return verify_authentication_response(
            credential=json.dumps(answer),
            expected_challenge=options.challenge,
            expected_rp_id=RP_ID,
            expected_origin=ORIGIN,
            credential_public_key=verified.credential_public_key,
            credential_current_sign_count=count,
            require_user_verification=True,
        )

    options = assertion_options()
    checked = verify(options, device.get(options_to_json(options), ORIGIN), verified.sign_count)
    print(f"ok - webauthn verifies the authenticator's assertion (new sign count {checked.new_sign_count})")

    options = assertion_options()
    answer = device.get(options_to_json(options), "https://evil.example")
    assert refused(lambda: verify(options, answer, checked.new_sign_count)), "a wrong origin was accepted"
    print("ok - webauthn refuses an assertion from another origin")

    device.flip_signature_bit = True
    options = assertion_options()
    answer = device.get(options_to_json(options), ORIGIN)
    assert refused(lambda: verify(options, answer, checked.new_sign_count)), "a flipped signature bit was accepted"
    device.flip_signature_bit = False
    print("ok - webauthn refuses a signature with a flipped bit")

    device.set_counter(verified.credential_id, 0)
    options = assertion_options()
    answer = device.get(options_to_json(options), ORIGIN)
    assert refused(lambda: verify(options, answer, checked.new_sign_count + 5)), "a counter regression was accepted"
    print("ok - webauthn refuses a counter regression")

    device.user_verified = False
    options = assertion_options()
    answer = device.get(options_to_json(options), ORIGIN)
    assert refused(lambda: verify(options, answer, 0)), "an assertion without UV was accepted"
    print("ok - webauthn refuses an assertion without UV where UV is required")


if __name__ == "__main__":
    main()
