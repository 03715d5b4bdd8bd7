"""Drives Silent Network Auth on Verity's Twilio face with the official `twilio` package (twilio-python), unchanged:
`verifications.create(channel="sna")` answers `sna.url`; the test opens it the way the app does over mobile data
(following the operator's redirect back to Verity), against a CAMARA Number Verification stand-in
(Tests/camara/standin.py) that the project's carrier check points at; then `verification_checks.create(to=...)`
without a code is `approved`, or `pending` with `sna_attempts_error_codes` when the operator does not confirm the
number. Run by Tests/twilio/compat.sh.
"""

import os
import sys

import requests
from twilio_support import case, client, expect_error, expect_sid, main, make_project, remember_secret, verity

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "camara"))
from standin import CLIENT_ID, CLIENT_SECRET, CamaraStandIn  # noqa: E402

DEVICE = "+14155550161"
STANDIN = CamaraStandIn(device_phone_number=DEVICE).start()
remember_secret(CLIENT_SECRET)
# The stand-in is on 127.0.0.1: the CLI checks the carrier URLs as the server does (compat.sh starts the server with
# the same development setting).
os.environ["VERITY_WEBHOOK_ALLOW_PRIVATE"] = "true"
UMBRELLA = make_project("Umbrella")
verity(
    "admin", "project", "update", UMBRELLA["project"],
    "--carrier-check", "on",
    "--carrier-authorization-url", STANDIN.base + "/authorize",
    "--carrier-token-url", STANDIN.base + "/token",
    "--carrier-api-url", STANDIN.base + "/number-verification/v1",
    "--carrier-client-id", CLIENT_ID,
    "--carrier-client-secret", CLIENT_SECRET,
)  # fmt: skip
SERVICE = client(UMBRELLA["account_sid"], UMBRELLA["key"]).verify.v2.services.create(friendly_name="Umbrella").sid


def service():
    return client(UMBRELLA["account_sid"], UMBRELLA["key"]).verify.v2.services(SERVICE)


def open_over_mobile_data(url):
    """What the app does with `sna.url`: a GET over the cellular interface, following the operator's redirect to
    Verity's carrier callback, which answers once the operator has answered."""
    response = requests.get(url, timeout=15, allow_redirects=True)
    assert response.status_code == 200, f"{response.status_code}: {response.text}"
    assert len(response.history) == 1 and response.history[0].status_code == 302, response.history
    return response


@case("sna: twilio-python starts SNA; its sna.url, opened over mobile data, lets a check without a code approve")
def sna_approved():
    verification = service().verifications.create(to=DEVICE, channel="sna")
    expect_sid(verification.sid, "VE")
    assert verification.channel == "sna" and verification.status == "pending", verification.status
    url = verification.sna["url"]
    assert url.startswith(STANDIN.base + "/authorize?"), url
    open_over_mobile_data(url)
    checked = service().verification_checks.create(to=DEVICE)
    assert checked.status == "approved" and checked.valid is True, checked.status
    assert checked.channel == "sna" and checked.sid == verification.sid, (checked.channel, checked.sid)
    # Hashed by default: the operator never saw the number itself.
    assert STANDIN.verify_bodies[-1].keys() == {"hashedPhoneNumber"}, STANDIN.verify_bodies[-1]
    assert verity("outbox", "list", "--to", DEVICE) == []
    # Approved once, then gone, as on Twilio.
    expect_error(lambda: service().verification_checks.create(to=DEVICE), 404, 20404)


@case("sna: when the operator answers false, a codeless check stays pending with 60500 in sna_attempts_error_codes")
def sna_not_confirmed():
    other = "+14155550162"
    verification = service().verifications.create(to=other, channel="sna")
    pending = service().verification_checks.create(to=other)
    assert pending.status == "pending" and pending.valid is False, pending.status
    waiting = pending.sna_attempts_error_codes
    assert [attempt["code"] for attempt in waiting] == [60519], waiting
    open_over_mobile_data(verification.sna["url"])
    refused = service().verification_checks.create(to=other)
    assert refused.status == "pending" and refused.valid is False, refused.status
    codes = refused.sna_attempts_error_codes
    assert [attempt["code"] for attempt in codes] == [60500], codes
    expect_sid(codes[0]["attempt_sid"], "VL")
    assert STANDIN.verify_bodies[-1].keys() == {"hashedPhoneNumber"}, STANDIN.verify_bodies[-1]


@case("sna: an operator that refuses the authorization step leaves the check pending with 60510")
def sna_authorization_refused():
    other = "+14155550163"
    STANDIN.authorization_error = "access_denied"
    try:
        verification = service().verifications.create(to=other, channel="sna")
        open_over_mobile_data(verification.sna["url"])
    finally:
        STANDIN.authorization_error = None
    refused = service().verification_checks.create(to=other)
    assert refused.status == "pending", refused.status
    codes = refused.sna_attempts_error_codes
    assert [attempt["code"] for attempt in codes] == [60510], codes


@case("camara: every request Verity sent the stand-in followed the published document and the OAuth steps")
def standin_saw_no_bad_request():
    assert STANDIN.refused == [], STANDIN.refused
    assert len(STANDIN.verify_bodies) == 2, STANDIN.verify_bodies


if __name__ == "__main__":
    try:
        status = main()
    finally:
        STANDIN.stop()
    sys.exit(status)
