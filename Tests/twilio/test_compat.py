"""Drives the SMS/email side of Verity's Twilio Verify face (Services, Verifications, VerificationCheck) with the
official `twilio` package (twilio-python), unchanged, pointed at Verity with
`client.verify.base_url = VERITY_BASE + "/twilio"`. Run by Tests/twilio/compat.sh (see twilio_support.py for what it
sets). Prints one `ok - ...` line per case and exits non-zero if any case fails.
"""

import datetime
import functools
import json
import sys
import urllib.error
import urllib.request

import requests
from twilio.base.exceptions import TwilioException
from twilio_support import BASE, case, client, code_sent, codes_sent, expect_error, expect_sid, main, make_project, verity, wrong

ACME = make_project("Acme")
# A new project does not call; Acme does, as an operator turns calls on.
verity("admin", "project", "update", ACME["project"], "--disabled-channels", "none")
GLOBEX = make_project("Globex")
ACME_CLIENT = client(ACME["account_sid"], ACME["key"])
VERIFY = ACME_CLIENT.verify.v2
SERVICE = VERIFY.services.create(friendly_name="Acme Login", code_length=6).sid


@case("services: create, fetch, update, list across pages, delete; 404 20404 afterwards")
def services_lifecycle():
    created = VERIFY.services.create(friendly_name="Compat", code_length=8, totp_time_step=60, push_include_date=False)
    expect_sid(created.sid, "VA")
    assert created.account_sid == ACME["account_sid"]
    assert created.friendly_name == "Compat" and created.code_length == 8
    assert created.totp["time_step"] == 60 and created.totp["issuer"] == "Compat"
    assert isinstance(created.date_created, datetime.datetime), created.date_created
    assert created.url == f"{BASE}/twilio/v2/Services/{created.sid}"

    fetched = VERIFY.services(created.sid).fetch()
    assert fetched.friendly_name == "Compat"
    updated = VERIFY.services(created.sid).update(friendly_name="Compat 2", code_length=4)
    assert updated.friendly_name == "Compat 2" and updated.code_length == 4

    for index in range(3):
        VERIFY.services.create(friendly_name=f"Paged {index}")
    # page_size=2 makes the pager follow next_page_url twice: it must point at this server.
    listed = [service.friendly_name for service in VERIFY.services.list(page_size=2)]
    assert listed == ["Acme Login", "Compat 2", "Paged 0", "Paged 1", "Paged 2"], listed
    page = VERIFY.services.page(page_size=2)
    assert page.next_page_url.startswith(f"{BASE}/twilio/v2/Services?"), page.next_page_url

    assert VERIFY.services(created.sid).delete() is True
    expect_error(lambda: VERIFY.services(created.sid).fetch(), 404, 20404)


@case("services: a friendly name over 32 characters and a code length of 3 are 400 60200")
def services_invalid():
    expect_error(lambda: VERIFY.services.create(friendly_name="x" * 33), 400, 60200, "Invalid parameter: FriendlyName")
    expect_error(
        lambda: VERIFY.services.create(friendly_name="Short", code_length=3), 400, 60200, "Invalid parameter: CodeLength"
    )


def verification_rules(to, channel):
    """Start, the same code on re-send, a wrong code (200 pending / valid false), the right one, then 404 20404."""
    service = VERIFY.services(SERVICE)
    verification = service.verifications.create(to=to, channel=channel)
    expect_sid(verification.sid, "VE")
    assert verification.status == "pending" and verification.valid is False
    assert verification.to == to and verification.channel == channel
    assert verification.service_sid == SERVICE and verification.account_sid == ACME["account_sid"]
    assert isinstance(verification.date_created, datetime.datetime), verification.date_created
    assert len(verification.send_code_attempts) == 1
    code = code_sent(to)
    assert len(code) == 6

    fetched = service.verifications(verification.sid).fetch()
    assert fetched.status == "pending"
    again = service.verifications.create(to=to, channel=channel)
    assert again.sid == verification.sid and len(again.send_code_attempts) == 2, again.send_code_attempts
    assert codes_sent(to, 2) == [code, code]

    checked = service.verification_checks.create(to=to, code=wrong(code))
    assert checked.status == "pending" and checked.valid is False and checked.channel == channel

    approved = service.verification_checks.create(to=to, code=code)
    assert approved.status == "approved" and approved.valid is True and approved.sid == verification.sid

    expect_error(lambda: service.verification_checks.create(to=to, code=code), 404, 20404)
    expect_error(lambda: service.verification_checks.create(verification_sid=verification.sid, code=code), 404, 20404)
    expect_error(lambda: service.verifications(verification.sid).fetch(), 404, 20404)


def send_limit(to, channel):
    service = VERIFY.services(SERVICE)
    for _ in range(5):
        service.verifications.create(to=to, channel=channel)
    expect_error(lambda: service.verifications.create(to=to, channel=channel), 429, 60203, "Max send attempts reached")


def check_limit(to, channel):
    service = VERIFY.services(SERVICE)
    verification = service.verifications.create(to=to, channel=channel)
    code = code_sent(to)
    statuses = [service.verification_checks.create(to=to, code=wrong(code)).status for _ in range(5)]
    # As on Twilio, the fifth wrong code still reports pending; the sixth check is refused with 60202.
    assert statuses == ["pending"] * 5, statuses
    expect_error(lambda: service.verification_checks.create(verification_sid=verification.sid, code=code), 429, 60202)
    # By To as well: the destination's latest verification is out of checks until it expires.
    expect_error(
        lambda: service.verification_checks.create(to=to, code=code), 429, 60202, "Max check attempts reached"
    )


# Every rule holds for every channel (calls and WhatsApp each in a block of 1,000 numbers of their own, so that the
# block's rate limit is not what stops them).
for channel, rules_to, send_to, check_to in [
    ("sms", "+14155550100", "+14155550103", "+14155550104"),
    ("email", "rules@example.com", "send-limit@example.com", "check-limit@example.com"),
    ("call", "+14155551100", "+14155551103", "+14155551104"),
    ("whatsapp", "+14155552100", "+14155552103", "+14155552104"),
]:
    case(f"{channel}: start, wrong code is 200 pending / valid false, re-send is the same code, right code approves, "
         "then 404 20404")(functools.partial(verification_rules, rules_to, channel))
    case(f"{channel}: the 6th send to one destination is 429 60203")(functools.partial(send_limit, send_to, channel))
    case(f"{channel}: after 5 wrong codes the next check is 429 60202, by To and by SID, even with the right code")(
        functools.partial(check_limit, check_to, channel)
    )


@case("verify: starting again while pending re-sends the same code under the same SID")
def same_code_on_resend():
    to = "+14155550101"
    service = VERIFY.services(SERVICE)
    first = service.verifications.create(to=to, channel="sms")
    second = service.verifications.create(to=to, channel="sms")
    assert second.sid == first.sid
    assert len(second.send_code_attempts) == 2
    codes = codes_sent(to, 2)
    assert codes[0] == codes[1], codes
    assert service.verification_checks.create(verification_sid=first.sid, code=codes[0]).status == "approved"


@case("verify: a call after an SMS, then WhatsApp, re-sends the same code by each, and each counts as a send")
def same_code_across_channels():
    to = "+14155553100"
    service = VERIFY.services(SERVICE)
    first = service.verifications.create(to=to, channel="sms")
    called = service.verifications.create(to=to, channel="call")
    assert called.sid == first.sid and called.channel == "call"
    messaged = service.verifications.create(to=to, channel="whatsapp")
    assert messaged.sid == first.sid and messaged.channel == "whatsapp"
    assert [attempt["channel"] for attempt in messaged.send_code_attempts] == ["SMS", "CALL", "WHATSAPP"], (
        messaged.send_code_attempts
    )
    channels = [m["channel"] for m in reversed(verity("outbox", "list", "--to", to))]
    assert channels == ["sms", "voice", "whatsapp"], channels
    codes = codes_sent(to, 3)
    assert len(set(codes)) == 1, codes
    checked = service.verification_checks.create(to=to, code=codes[0])
    assert checked.status == "approved" and checked.channel == "whatsapp"


@case("sna: with the project's carrier check off, Channel=sna is 400 60223 and nothing is stored or sent")
def sna_without_carrier_check():
    service = VERIFY.services(SERVICE)
    expect_error(
        lambda: service.verifications.create(to="+14155550106", channel="sna"),
        400,
        60223,
        "Delivery channel disabled",
    )
    assert verity("outbox", "list", "--to", "+14155550106") == []
    # No SNA verification was started, so a check without a code still needs its code.
    expect_error(lambda: service.verification_checks.create(to="+14155550106"), 400, 60200, "Invalid parameter: Code")


@case("verify: a call to a premium-rate number is 403 60605 and nothing is sent")
def premium_call():
    service = VERIFY.services(SERVICE)
    expect_error(lambda: service.verifications.create(to="+19005550100", channel="call"), 403, 60605)
    assert verity("outbox", "list", "--to", "+19005550100") == []


@case("verify: a channel the project turned off is 400 60223, and the others still work")
def channel_turned_off():
    project = make_project("Initech")
    updated = verity("admin", "project", "update", project["project"], "--disabled-channels", "whatsapp,voice")
    assert updated["settings"]["disabledChannels"] == ["voice", "whatsapp"], updated["settings"]
    verify = client(project["account_sid"], project["key"]).verify.v2
    service = verify.services(verify.services.create(friendly_name="Initech").sid)
    for channel in ["whatsapp", "call"]:
        expect_error(
            lambda: service.verifications.create(to="+14155554100", channel=channel),
            400,
            60223,
            "Delivery channel disabled",
        )
    assert verity("outbox", "list", "--to", "+14155554100") == []
    assert service.verifications.create(to="+14155554100", channel="sms").status == "pending"


@case("verify: an email verification is checked by its SID")
def email_by_sid():
    service = VERIFY.services(SERVICE)
    verification = service.verifications.create(to="jane@example.com", channel="email")
    assert verification.channel == "email"
    code = code_sent("jane@example.com")
    checked = service.verification_checks.create(verification_sid=verification.sid, code=code)
    assert checked.status == "approved" and checked.valid is True


@case("verify: update Status=canceled, then Status=approved on a new one; finished ones are 404 20404")
def update_status():
    to = "+14155550102"
    service = VERIFY.services(SERVICE)
    first = service.verifications.create(to=to, channel="sms")
    canceled = service.verifications(first.sid).update(status="canceled")
    assert canceled.status == "canceled"
    expect_error(lambda: service.verifications(first.sid).update(status="canceled"), 404, 20404)
    second = service.verifications.create(to=to, channel="sms")
    assert second.sid != first.sid
    approved = service.verifications(second.sid).update(status="approved")
    assert approved.status == "approved" and approved.valid is True
    expect_error(lambda: service.verifications(second.sid).fetch(), 404, 20404)


@case("verify: an invalid number is 400 60200, an unsupported channel too, and nothing is sent")
def invalid_input():
    service = VERIFY.services(SERVICE)
    expect_error(lambda: service.verifications.create(to="+1555", channel="sms"), 400, 60200, "Invalid parameter: To")
    expect_error(lambda: service.verifications.create(to="12345", channel="sms"), 400, 60200, "Invalid parameter: To")
    expect_error(
        lambda: service.verifications.create(to="+14155550105", channel="auto"),
        400,
        60200,
        "Invalid parameter: Channel",
    )
    assert verity("outbox", "list", "--to", "+14155550105") == []
    expect_error(lambda: service.verification_checks.create(code="123456"), 400, 60221)


@case("auth: the API key SID with its secret works too")
def api_key_sid():
    keyed = client(ACME["api_key_sid"], ACME["key"], ACME["account_sid"])
    assert keyed.verify.v2.services(SERVICE).fetch().sid == SERVICE


@case("auth: a wrong token, another project's account SID or key are 401 20003")
def bad_credentials():
    wrong_token = client(ACME["account_sid"], "vk_" + "0" * 40)
    expect_error(lambda: wrong_token.verify.v2.services(SERVICE).fetch(), 401, 20003, "Authenticate")
    # twilio-python's pager raises a plain TwilioException on any non-200 page, against Twilio too.
    try:
        wrong_token.verify.v2.services.list()
        raise AssertionError("a list with a wrong token succeeded")
    except TwilioException as error:
        assert "HTTP 401" in str(error) and '"code":20003' in str(error), error
    mixed = client(GLOBEX["account_sid"], ACME["key"])
    expect_error(lambda: mixed.verify.v2.services(SERVICE).fetch(), 401, 20003)
    other_key = client(ACME["account_sid"], GLOBEX["key"])
    expect_error(lambda: other_key.verify.v2.services(SERVICE).fetch(), 401, 20003)


@case("tenancy: another account does not see this account's service (404 20404)")
def other_account():
    globex = client(GLOBEX["account_sid"], GLOBEX["key"])
    expect_error(lambda: globex.verify.v2.services(SERVICE).fetch(), 404, 20404)
    expect_error(
        lambda: globex.verify.v2.services(SERVICE).verifications.create(to="+14155550106", channel="sms"), 404, 20404
    )


@case("errors: the body is {code, message, more_info, status}, read by TwilioRestException")
def error_body():
    error = expect_error(lambda: VERIFY.services("VA" + "0" * 32).fetch(), 404, 20404)
    assert f"/Services/VA{'0' * 32} was not found" in error.msg, error.msg
    # The raw body has exactly Twilio's keys: with `type` and `title` twilio-python would raise another class.
    try:
        urllib.request.urlopen(f"{BASE}/twilio/v2/Services")
        raise AssertionError("an unauthenticated request succeeded")
    except urllib.error.HTTPError as response:
        body = json.loads(response.read())
        assert response.code == 401 and response.headers["Date"], response.headers
    assert body == {
        "code": 20003,
        "message": "Authenticate",
        "more_info": "https://www.twilio.com/docs/errors/20003",
        "status": 401,
    }, body


def raw_error(response, status, code):
    """Checks a raw error response: Twilio's status, code and exactly Twilio's keys."""
    assert response.status_code == status, f"{response.status_code}, wanted {status}: {response.text}"
    body = response.json()
    assert set(body) == {"code", "message", "more_info", "status"}, body
    assert body["code"] == code and body["status"] == status, body
    assert body["more_info"] == f"https://www.twilio.com/docs/errors/{code}", body
    return body


@case("email: an invalid address is 400 60200, in Twilio's error body")
def email_invalid():
    service = VERIFY.services(SERVICE)
    for address in ["nobody@", "not an address", "@example.com"]:
        expect_error(
            lambda: service.verifications.create(to=address, channel="email"), 400, 60200, "Invalid parameter: To"
        )
    response = requests.post(
        f"{BASE}/twilio/v2/Services/{SERVICE}/Verifications",
        data={"To": "nobody@", "Channel": "email"},
        auth=(ACME["account_sid"], ACME["key"]),
        timeout=10,
    )
    raw_error(response, 400, 60200)


@case("verify: PSD2 Amount and Payee are refused with 400 60204 rather than ignored")
def psd2_refused():
    service = VERIFY.services(SERVICE)
    expect_error(
        lambda: service.verifications.create(to="+14155553001", channel="sms", amount="€39.99", payee="Acme"),
        400,
        60204,
        "Amount",
    )
    assert verity("outbox", "list", "--to", "+14155553001") == []
    expect_error(lambda: service.verification_checks.create(to="+14155553001", code="123456", payee="Acme"), 400, 60204)


@case("routes: an unknown resource is 404 20404 and a wrong method 405 20004, in Twilio's error body")
def unknown_routes():
    service = VERIFY.services(SERVICE)
    error = expect_error(lambda: service.rate_limits("RK" + "0" * 32).fetch(), 404, 20404)
    assert f"/Services/{SERVICE}/RateLimits/RK" in error.msg, error.msg
    expect_error(lambda: service.rate_limits.create(unique_name="per_ip"), 404, 20404)
    expect_error(lambda: service.messaging_configurations("US").fetch(), 404, 20404)
    # twilio-python's pager raises a plain TwilioException on any non-200 page, against Twilio too.
    try:
        service.rate_limits.list()
        raise AssertionError("listing rate limits succeeded")
    except TwilioException as error:
        assert "HTTP 404" in str(error) and '"code":20404' in str(error), error
    credentials = (ACME["account_sid"], ACME["key"])
    raw_error(requests.get(f"{BASE}/twilio/v2/Nothing", auth=credentials, timeout=10), 404, 20404)
    body = raw_error(
        requests.delete(f"{BASE}/twilio/v2/Services/{SERVICE}/Verifications", auth=credentials, timeout=10), 405, 20004
    )
    assert body["message"] == "Method not allowed", body
    raw_error(requests.put(f"{BASE}/twilio/v2/Services/{SERVICE}", auth=credentials, timeout=10), 405, 20004)


@case("paging: meta has first_page_url, previous_page_url null, url, key and an absolute next_page_url")
def paging_meta():
    for index in range(2):
        VERIFY.services.create(friendly_name=f"Meta {index}")
    response = requests.get(
        f"{BASE}/twilio/v2/Services", params={"PageSize": 2}, auth=(ACME["account_sid"], ACME["key"]), timeout=10
    )
    assert response.status_code == 200, response.text
    meta = response.json()["meta"]
    assert meta["key"] == "services" and meta["page"] == 0 and meta["page_size"] == 2, meta
    assert meta["first_page_url"] == f"{BASE}/twilio/v2/Services?PageSize=2&Page=0", meta
    assert meta["url"] == meta["first_page_url"], meta
    assert meta["previous_page_url"] is None, meta
    assert meta["next_page_url"].startswith(f"{BASE}/twilio/v2/Services?PageSize=2&Page=1&PageToken=PA"), meta
    second = requests.get(meta["next_page_url"], auth=(ACME["account_sid"], ACME["key"]), timeout=10).json()["meta"]
    assert second["page"] == 1 and second["url"] == meta["next_page_url"], second
    assert second["first_page_url"] == meta["first_page_url"] and second["previous_page_url"] is None, second
    page = VERIFY.services.page(page_size=2)
    assert page.previous_page_url is None and page.next_page_url == meta["next_page_url"], page.next_page_url


if __name__ == "__main__":
    sys.exit(main())
