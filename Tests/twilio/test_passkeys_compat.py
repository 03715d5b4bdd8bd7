"""Drives Verify Passkeys on Verity's Twilio Verify face with the official `twilio` package (twilio-python), unchanged:
the service's `Passkeys.*` settings, `new_factors`, `new_verify_factors`, `new_challenge` and `approve_challenge`, with
the Python software authenticator (Tests/passkeys/authenticator.py) as the user's device. Run by Tests/twilio/compat.sh
(see twilio_support.py for what it sets). Prints one `ok - ...` line per case and exits non-zero if any case fails.
"""

import os
import sys

from twilio.rest.verify.v2.service.approve_challenge import ApproveChallengeList
from twilio.rest.verify.v2.service.new_challenge import NewChallengeContext
from twilio.rest.verify.v2.service.new_factor import NewFactorList
from twilio.rest.verify.v2.service.new_verify_factor import NewVerifyFactorList
from twilio_support import case, client, expect_error, expect_sid, main, make_project

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "passkeys"))
from authenticator import Authenticator  # noqa: E402

ORIGIN = "https://example.com"
ACME = make_project("Acme Passkeys")
VERIFY = client(ACME["account_sid"], ACME["key"]).verify.v2
SERVICE_SID = VERIFY.services.create(
    friendly_name="Acme Passkeys",
    passkeys_relying_party_id="example.com",
    passkeys_relying_party_name="Acme",
    passkeys_relying_party_origins="example.com,login.example.com",
    passkeys_authenticator_attachment="platform",
    passkeys_discoverable_credentials="preferred",
    passkeys_user_verification="required",
).sid
SERVICE = VERIFY.services(SERVICE_SID)
IDENTITY = "ada-0001-abcd"
DEVICE = Authenticator()
STATE = {}


def new_factor(identity, config=None):
    request = {"friendly_name": "Ada's phone", "identity": identity}
    if config is not None:
        request["config"] = config
    return SERVICE.new_factors.create(NewFactorList.CreateNewPasskeysFactorRequest(request))


def verify_factor(credential):
    return SERVICE.new_verify_factors.update(NewVerifyFactorList.VerifyPasskeysFactorRequest(credential))


def new_challenge(identity, factor_sid=None):
    request = {"identity": identity}
    if factor_sid is not None:
        request["factor_sid"] = factor_sid
    return SERVICE.new_challenge().create(NewChallengeContext.CreatePasskeysChallengeRequest(request))


def approve(assertion):
    return SERVICE.approve_challenge.update(ApproveChallengeList.ApprovePasskeysChallengeRequest(assertion))


@case("service: the Passkeys.* settings are kept and shown as passkeys")
def service_settings():
    passkeys = SERVICE.fetch().passkeys
    assert passkeys["relying_party"]["id"] == "example.com", passkeys
    assert passkeys["relying_party"]["origins"] == ["example.com", "login.example.com"], passkeys
    assert passkeys["user_verification"] == "required", passkeys


@case("new_factors: an unverified YF factor with creation options; new_verify_factors verifies it")
def register():
    factor = new_factor(IDENTITY)
    expect_sid(factor.sid, "YF")
    expect_sid(factor.entity_sid, "YE")
    assert factor.status == "unverified" and factor.factor_type == "passkeys", (factor.status, factor.factor_type)
    options = factor.options["publicKey"]
    assert options["rp"]["id"] == "example.com", options["rp"]
    assert options["authenticatorSelection"]["userVerification"] == "required", options
    credential = DEVICE.create(factor.options, ORIGIN)
    verified = verify_factor(credential)
    assert verified.sid == factor.sid and verified.status == "verified", (verified.sid, verified.status)
    STATE["factor"] = factor.sid


@case("new_challenge and approve_challenge: a YC challenge with request options, approved by the passkey")
def approve_challenge():
    challenge = new_challenge(IDENTITY, STATE["factor"])
    expect_sid(challenge.sid, "YC")
    assert challenge.status == "pending", challenge.status
    approved = approve(DEVICE.get(challenge.options, ORIGIN))
    assert approved.sid == challenge.sid and approved.status == "approved", (approved.sid, approved.status)
    assert approved.factor_sid == STATE["factor"], approved.factor_sid


@case("approve_challenge: an assertion from another origin is refused (60324) through the SDK's exception")
def wrong_origin():
    challenge = new_challenge(IDENTITY)
    assertion = DEVICE.get(challenge.options, "https://example.evil")
    expect_error(lambda: approve(assertion), 403, 60324)


@case("entities(...).factors: the passkey factor is listed and fetched among the entity's, and deleted there")
def entity_factors():
    identity = "bob-0002-efgh"
    device = Authenticator()
    factor = new_factor(identity)
    verify_factor(device.create(factor.options, ORIGIN))
    factors = SERVICE.entities(identity).factors
    listed = factors.list(page_size=1)
    assert [(f.sid, f.factor_type, f.status) for f in listed] == [(factor.sid, "passkeys", "verified")], listed
    fetched = factors(factor.sid).fetch()
    assert fetched.sid == factor.sid and fetched.friendly_name == "Ada's phone", (fetched.sid, fetched.friendly_name)
    assert factors(factor.sid).delete()
    assert factors.list() == [], "the deleted factor is gone"
    assertion = device.get(new_challenge(identity).options, ORIGIN)
    expect_error(lambda: approve(assertion), 403, 60324)


@case("new_factors: authenticator criteria missing from the config and the service are 60393")
def missing_criteria():
    bare = VERIFY.services.create(
        friendly_name="Bare passkeys",
        passkeys_relying_party_id="example.com",
        passkeys_relying_party_name="Acme",
        passkeys_relying_party_origins=ORIGIN,
    ).sid
    request = NewFactorList.CreateNewPasskeysFactorRequest({"friendly_name": "Phone", "identity": IDENTITY})
    expect_error(lambda: VERIFY.services(bare).new_factors.create(request), 400, 60393, "user_verification")


if __name__ == "__main__":
    sys.exit(main())
