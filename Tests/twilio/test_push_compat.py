"""Drives the Verify Push and TOTP side of Verity's Twilio Verify face: the backend with the official `twilio` package
(twilio-python), unchanged, and the phone as the Twilio Verify mobile SDKs speak to the server (access-token
enrollment, device JWTs with `cty: twilio-pba;v=1`, approvals signed over `Twilio-Verify-Signature-Fields`), with a
real P-256 key from `cryptography`. Run by Tests/twilio/compat.sh (see twilio_support.py for what it sets). Prints one
`ok - ...` line per case and exits non-zero if any case fails.
"""

import base64
import datetime
import json
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import requests
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
from twilio.request_validator import RequestValidator
from twilio_support import BASE, case, client, expect_error, expect_sid, main, make_project, remember_secret, verity

from totp import totp  # noqa: E402  (Tests/lib, put on the path by twilio_support)

ACME = make_project("Acme Push")
GLOBEX = make_project("Globex Push")
VERIFY = client(ACME["account_sid"], ACME["key"]).verify.v2
SERVICE_SID = VERIFY.services.create(friendly_name="Acme Push", totp_issuer="Acme").sid
SERVICE = VERIFY.services(SERVICE_SID)
DEVICE_BASE = f"{BASE}/twilio/v2/Services/{SERVICE_SID}"


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def compact_json(value):
    return json.dumps(value, separators=(",", ":")).encode()


class Device:
    """A phone running the Twilio Verify SDK: its own P-256 key, and the HTTP calls the SDK makes."""

    def __init__(self, identity, key=None):
        self.identity = identity
        self.key = key or ec.generate_private_key(ec.SECP256R1())
        self.factor = None

    @property
    def public_key(self):
        der = self.key.public_key().public_bytes(
            serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
        )
        return base64.b64encode(der).decode()

    def raw_signature(self, data, key=None):
        """ES256 as the SDKs send it in JWTs: r||s, 64 bytes."""
        r, s = decode_dss_signature((key or self.key).sign(data, ec.ECDSA(hashes.SHA256())))
        return r.to_bytes(32, "big") + s.to_bytes(32, "big")

    def jws(self, header, claims, key=None):
        signing_input = f"{b64url(compact_json(header))}.{b64url(compact_json(claims))}"
        return f"{signing_input}.{b64url(self.raw_signature(signing_input.encode(), key))}"

    def auth_jwt(self, key=None, kid=None, sub=None, nbf=None, lifetime=600):
        """The JWT the SDK puts in Basic auth for every call after enrollment (no `iat`, by the SDK's design)."""
        now = int(time.time()) if nbf is None else nbf
        header = {"cty": "twilio-pba;v=1", "kid": kid or self.factor["config"]["credential_sid"], "typ": "JWT", "alg": "ES256"}
        claims = {"sub": sub or self.factor["account_sid"], "nbf": now, "exp": now + lifetime}
        return self.jws(header, claims, key)

    def call(self, method, path, data=None, password=None, params=None):
        headers = {"Accept": "application/json", "Content-Type": "application/x-www-form-urlencoded"}
        if method == "GET":
            headers["Accept"] = "application/x-www-form-urlencoded"  # sic: what the SDKs send
        auth = ("token", password if password is not None else self.auth_jwt())
        return requests.request(
            method, f"{DEVICE_BASE}/Entities/{self.identity}{path}", data=data, params=params, headers=headers, auth=auth,
            timeout=10,
        )

    def enroll(self, access_token, friendly_name="Jane's iPhone", platform="apn"):
        form = {
            "FriendlyName": friendly_name,
            "FactorType": "push",
            "Binding.PublicKey": self.public_key,
            "Binding.Alg": "ES256",
            "Config.SdkVersion": "3.0.0",
            "Config.AppId": "com.example.acme",
            "Config.NotificationPlatform": platform,
            "Metadata": json.dumps({"os": "iOS"}),
        }
        if platform != "none":
            form["Config.NotificationToken"] = "a" * 64
        response = self.call("POST", "/Factors", form, password=access_token)
        assert response.status_code == 201, response.text
        self.factor = response.json()
        return self.factor

    def verify(self):
        der = self.key.sign(self.factor["sid"].encode(), ec.ECDSA(hashes.SHA256()))
        response = self.call("POST", f"/Factors/{self.factor['sid']}", {"AuthPayload": base64.b64encode(der).decode()})
        assert response.status_code == 200, response.text
        return response.json()

    def answer(self, challenge_sid, status, alter=None, key=None, fields=None):
        """Fetches the challenge and answers it as the SDK does: sign the listed fields plus `status`.

        Only a pending challenge names its fields (the SDK answers nothing else); to try a late answer anyway, as an
        attacker would, pass the `fields` a pending fetch named."""
        fetched = self.call("GET", f"/Challenges/{challenge_sid}")
        assert fetched.status_code == 200, fetched.text
        named = fetched.headers.get("Twilio-Verify-Signature-Fields")
        assert (named is not None) == (fetched.json()["status"] == "pending"), (named, fetched.json()["status"])
        fields = named or fields
        assert fields and " " not in fields, fields
        body = fetched.json()
        claims = {name: body[name] for name in fields.split(",")}
        claims["status"] = status
        if alter:
            alter(claims)
        payload = self.jws({"typ": "JWT", "alg": "ES256"}, claims, key)
        return self.call("POST", f"/Challenges/{challenge_sid}", {"AuthPayload": payload}), payload


def enrolled_device(identity, friendly_name="Jane's iPhone"):
    token = SERVICE.access_tokens.create(identity=identity, factor_type="push", factor_friendly_name=friendly_name, ttl=300)
    remember_secret(token.token)
    device = Device(identity)
    device.enroll(token.token, friendly_name)
    assert device.verify()["status"] == "verified"
    return device


def push_challenge(device, message="Approve sign-in to Acme?", **extra):
    return SERVICE.entities(device.identity).challenges.create(
        factor_sid=device.factor["sid"], details_message=message, **extra
    )


def expect_device_error(response, status, code):
    assert response.status_code == status, f"{response.status_code}, wanted {status}: {response.text}"
    body = response.json()
    assert set(body) == {"code", "message", "more_info", "status"}, body
    assert body["code"] == code and body["status"] == status, body
    if status == 401:
        # The SDKs correct their clock from this header and retry once.
        assert response.headers.get("Date", "").endswith(" GMT"), response.headers


@case("entities: create, fetch, list, delete; a bad identity is 400 60200; a gone one 404 20404")
def entities():
    created = SERVICE.entities.create(identity="user-0001-entity")
    expect_sid(created.sid, "YE")
    assert created.identity == "user-0001-entity" and created.service_sid == SERVICE_SID
    assert created.account_sid == ACME["account_sid"]
    assert isinstance(created.date_created, datetime.datetime), created.date_created
    assert SERVICE.entities("user-0001-entity").fetch().sid == created.sid
    assert "user-0001-entity" in [entity.identity for entity in SERVICE.entities.list()]
    expect_error(lambda: SERVICE.entities.create(identity="short"), 400, 60200)
    assert SERVICE.entities("user-0001-entity").delete() is True
    expect_error(lambda: SERVICE.entities("user-0001-entity").fetch(), 404, 20404)


@case("totp: a factor with a generated secret, its otpauth URI, a wrong code 403 60311, the right one verifies")
def totp_factor():
    identity = "user-0002-totp"
    SERVICE.entities.create(identity=identity)
    factor = SERVICE.entities(identity).new_factors.create(friendly_name="Jane", factor_type="totp")
    expect_sid(factor.sid, "YF")
    assert factor.status == "unverified" and factor.factor_type == "totp"
    secret = factor.binding["secret"]
    remember_secret(secret)
    assert factor.binding["uri"].startswith("otpauth://totp/"), factor.binding
    assert f"secret={secret}" in factor.binding["uri"] and "issuer=Acme" in factor.binding["uri"]
    assert factor.config["time_step"] == 30 and factor.config["code_length"] == 6, factor.config
    # The secret is shown once, at creation.
    fetched = requests.get(factor.url, auth=(ACME["account_sid"], ACME["key"]), timeout=10)
    assert fetched.status_code == 200 and fetched.json()["binding"] is None, fetched.text

    right = totp(secret)
    wrong_code = str((int(right) + 1) % 10**6).zfill(6)
    expect_error(lambda: SERVICE.entities(identity).factors(factor.sid).update(auth_payload=wrong_code), 403, 60311)
    verified = SERVICE.entities(identity).factors(factor.sid).update(auth_payload=right)
    assert verified.status == "verified"

    # A TOTP challenge is answered by the code it comes with (the next step's code: each one works once).
    challenge = SERVICE.entities(identity).challenges.create(
        factor_sid=factor.sid, auth_payload=totp(secret, at=time.time() + 30)
    )
    expect_sid(challenge.sid, "YC")
    assert challenge.status == "approved" and challenge.factor_type == "totp", challenge.status


@case("totp: five wrong codes lock the factor's verification: 4 x 403 60311, then 429 60310, even for the right code")
def totp_attempt_limit():
    identity = "user-0015-totp"
    factor = SERVICE.entities(identity).new_factors.create(friendly_name="Jane", factor_type="totp")
    secret = factor.binding["secret"]
    remember_secret(secret)
    right = totp(secret)
    wrong_code = str((int(right) + 1) % 10**6).zfill(6)
    update = SERVICE.entities(identity).factors(factor.sid).update
    for _ in range(4):
        expect_error(lambda: update(auth_payload=wrong_code), 403, 60311, "Factor verification failed")
    expect_error(lambda: update(auth_payload=wrong_code), 429, 60310, "Max factor verification attempts reached")
    expect_error(lambda: update(auth_payload=right), 429, 60310)
    assert SERVICE.entities(identity).factors(factor.sid).fetch().status == "unverified"


@case("device auth: a phone's JWT is 401 20003 on every route of the customer's backend")
def device_on_backend_routes():
    device = enrolled_device("user-0016-push")
    verification = SERVICE.verifications.create(to="+14155552001", channel="sms")
    jwt = ("token", device.auth_jwt())
    calls = [
        ("GET", "/Services", None),
        ("POST", "/Services", {"FriendlyName": "Mine"}),
        ("GET", f"/Services/{SERVICE_SID}", None),
        ("POST", f"/Services/{SERVICE_SID}", {"FriendlyName": "Mine"}),
        ("DELETE", f"/Services/{SERVICE_SID}", None),
        ("POST", f"/Services/{SERVICE_SID}/Verifications", {"To": "+14155552002", "Channel": "sms"}),
        ("GET", f"/Services/{SERVICE_SID}/Verifications/{verification.sid}", None),
        ("POST", f"/Services/{SERVICE_SID}/Verifications/{verification.sid}", {"Status": "approved"}),
        ("POST", f"/Services/{SERVICE_SID}/VerificationCheck", {"To": "+14155552001", "Code": "123456"}),
        ("GET", f"/Services/{SERVICE_SID}/Webhooks", None),
        ("POST", f"/Services/{SERVICE_SID}/AccessTokens", {"Identity": "user-0016-push", "FactorType": "push"}),
        ("GET", f"/Services/{SERVICE_SID}/Entities", None),
        ("GET", f"/Services/{SERVICE_SID}/Entities/user-0016-push", None),
        ("DELETE", f"/Services/{SERVICE_SID}/Entities/user-0016-push", None),
    ]
    for method, path, data in calls:
        response = requests.request(method, f"{BASE}/twilio/v2{path}", data=data, auth=jwt, timeout=10)
        expect_device_error(response, 401, 20003)
    challenge = push_challenge(device)
    notify = device.call("POST", f"/Challenges/{challenge.sid}/Notifications", {})
    expect_device_error(notify, 401, 20003)
    assert SERVICE.verifications(verification.sid).fetch().status == "pending"
    assert SERVICE.entities("user-0016-push").fetch().identity == "user-0016-push"
    assert device.call("GET", f"/Factors/{device.factor['sid']}").status_code == 200


@case("services: deleting a service deletes its factors: their device JWTs and access tokens are refused")
def service_delete_cascade():
    doomed_sid = VERIFY.services.create(friendly_name="Doomed").sid
    doomed = VERIFY.services(doomed_sid)
    token = doomed.access_tokens.create(identity="user-0017-push", factor_type="push", ttl=300)
    remember_secret(token.token)
    device = Device("user-0017-push")
    device.call = lambda method, path, data=None, password=None, params=None: requests.request(
        method,
        f"{BASE}/twilio/v2/Services/{doomed_sid}/Entities/user-0017-push{path}",
        data=data,
        params=params,
        auth=("token", password if password is not None else device.auth_jwt()),
        timeout=10,
    )
    device.enroll(token.token)
    assert device.verify()["status"] == "verified"
    unused = doomed.access_tokens.create(identity="user-0018-push", factor_type="push", ttl=300)
    remember_secret(unused.token)
    assert doomed.delete() is True
    expect_device_error(device.call("GET", f"/Factors/{device.factor['sid']}"), 401, 20003)
    late = requests.post(
        f"{BASE}/twilio/v2/Services/{doomed_sid}/Entities/user-0018-push/Factors",
        data={"FriendlyName": "x", "FactorType": "push", "Binding.PublicKey": device.public_key, "Binding.Alg": "ES256"},
        auth=("token", unused.token),
        timeout=10,
    )
    expect_device_error(late, 401, 20003)
    expect_error(lambda: doomed.entities("user-0017-push").fetch(), 404, 20404)


@case("totp: a challenge created on an unverified factor is refused with 60318")
def totp_unverified():
    identity = "user-0003-totp"
    SERVICE.entities.create(identity=identity)
    factor = SERVICE.entities(identity).new_factors.create(friendly_name="Jane", factor_type="totp")
    remember_secret(factor.binding["secret"])
    expect_error(
        lambda: SERVICE.entities(identity).challenges.create(factor_sid=factor.sid, auth_payload="123456"), 403, 60318
    )


@case("push: access token, SDK enrollment, verify by DER signature over the factor SID, challenge, signed approval")
def push_approve():
    token = SERVICE.access_tokens.create(identity="user-0004-push", factor_type="push", factor_friendly_name="Jane", ttl=300)
    remember_secret(token.token)
    expect_sid(token.sid, "YK")
    assert token.entity_identity == "user-0004-push" and token.factor_type == "push" and token.ttl == 300
    assert SERVICE.access_tokens(token.sid).fetch().sid == token.sid

    device = Device("user-0004-push")
    factor = device.enroll(token.token, "Jane")
    expect_sid(factor["sid"], "YF")
    assert factor["status"] == "unverified" and factor["factor_type"] == "push", factor
    assert factor["binding"] == {"alg": "ES256", "public_key": device.public_key}, factor["binding"]
    assert factor["account_sid"] == ACME["account_sid"] and factor["identity"] == "user-0004-push"
    assert factor["config"]["notification_platform"] == "apn" and factor["config"]["credential_sid"], factor["config"]
    assert factor["metadata"] == {"os": "iOS"}, factor["metadata"]
    assert device.verify()["status"] == "verified"
    # The access token enrolled one factor; it cannot enroll another.
    again = Device("user-0004-push").call("POST", "/Factors", {"FriendlyName": "x", "FactorType": "push"}, password=token.token)
    expect_device_error(again, 401, 20003)

    challenge = push_challenge(
        device,
        details_fields=[{"label": "Action", "value": "Sign in"}, {"label": "IP", "value": "203.0.113.7"}],
        hidden_details={"ip": "203.0.113.7"},
    )
    expect_sid(challenge.sid, "YC")
    assert challenge.status == "pending" and challenge.factor_sid == device.factor["sid"]
    assert challenge.details["message"] == "Approve sign-in to Acme?"
    assert challenge.details["fields"] == [{"label": "Action", "value": "Sign in"}, {"label": "IP", "value": "203.0.113.7"}]
    assert challenge.hidden_details == {"ip": "203.0.113.7"}

    pending = device.call("GET", "/Challenges", params={"FactorSid": device.factor["sid"], "Status": "pending"})
    assert pending.status_code == 200, pending.text
    assert [item["sid"] for item in pending.json()["challenges"]] == [challenge.sid]

    response, _ = device.answer(challenge.sid, "approved")
    assert response.status_code == 200 and response.json()["status"] == "approved", response.text
    fetched = SERVICE.entities(device.identity).challenges(challenge.sid).fetch()
    assert fetched.status == "approved" and isinstance(fetched.date_responded, datetime.datetime)


@case("push: a denial signed by the device is recorded as denied")
def push_deny():
    device = enrolled_device("user-0005-push")
    challenge = push_challenge(device)
    response, _ = device.answer(challenge.sid, "denied")
    assert response.status_code == 200 and response.json()["status"] == "denied", response.text
    assert SERVICE.entities(device.identity).challenges(challenge.sid).fetch().status == "denied"


@case("push: a replayed approval is 403 60322; an answer over altered fields or by another key 60324")
def push_replay_and_tamper():
    device = enrolled_device("user-0006-push")
    challenge = push_challenge(device)
    # Fields that do not match the stored challenge: the device was shown something else.
    tampered, _ = device.answer(challenge.sid, "approved", alter=lambda claims: claims.update(details={"message": "x"}))
    expect_device_error(tampered, 403, 60324)
    # Signed by a key that is not the factor's.
    foreign, _ = device.answer(challenge.sid, "approved", key=ec.generate_private_key(ec.SECP256R1()))
    expect_device_error(foreign, 403, 60324)
    assert SERVICE.entities(device.identity).challenges(challenge.sid).fetch().status == "pending"

    approved, payload = device.answer(challenge.sid, "approved")
    assert approved.status_code == 200, approved.text
    replay = device.call("POST", f"/Challenges/{challenge.sid}", {"AuthPayload": payload})
    expect_device_error(replay, 403, 60322)


@case("push: an expired challenge cannot be answered (60323) and lists as expired")
def push_expired():
    device = enrolled_device("user-0007-push")
    expires = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=11)
    challenge = push_challenge(device, expiration_date=expires)
    fields = device.call("GET", f"/Challenges/{challenge.sid}").headers["Twilio-Verify-Signature-Fields"]
    time.sleep(12)
    response, _ = device.answer(challenge.sid, "approved", fields=fields)
    expect_device_error(response, 403, 60323)
    assert SERVICE.entities(device.identity).challenges(challenge.sid).fetch().status == "expired"
    expired = SERVICE.entities(device.identity).challenges.list(status="expired")
    assert [item.sid for item in expired] == [challenge.sid]


@case("device auth: tampered, foreign-key, expired, unknown-kid and other-identity JWTs are 401 20003 with Date")
def device_auth_refused():
    device = enrolled_device("user-0008-push")
    other = enrolled_device("user-0009-push")
    path = f"/Factors/{device.factor['sid']}"
    assert device.call("GET", path).status_code == 200

    header, claims, signature = device.auth_jwt().split(".")
    forged_claims = json.loads(base64.urlsafe_b64decode(claims + "=" * (-len(claims) % 4)))
    forged_claims["exp"] += 3600
    tampered = f"{header}.{b64url(compact_json(forged_claims))}.{signature}"
    expect_device_error(device.call("GET", path, password=tampered), 401, 20003)

    wrong_key = device.auth_jwt(key=ec.generate_private_key(ec.SECP256R1()))
    expect_device_error(device.call("GET", path, password=wrong_key), 401, 20003)

    expired = device.auth_jwt(nbf=int(time.time()) - 1300)
    expect_device_error(device.call("GET", path, password=expired), 401, 20003)

    too_long = device.auth_jwt(lifetime=3600)
    expect_device_error(device.call("GET", path, password=too_long), 401, 20003)

    unknown_kid = device.auth_jwt(kid="CR" + "0" * 32)
    expect_device_error(device.call("GET", path, password=unknown_kid), 401, 20003)

    other_account = device.auth_jwt(sub=GLOBEX["account_sid"])
    expect_device_error(device.call("GET", path, password=other_account), 401, 20003)

    # A valid JWT of another identity's factor opens none of this identity's factors or challenges.
    intruder = Device(device.identity, other.key)
    intruder.factor = other.factor
    expect_device_error(intruder.call("GET", path), 404, 20404)
    challenge = push_challenge(device)
    expect_device_error(intruder.call("GET", f"/Challenges/{challenge.sid}"), 404, 20404)
    forged = intruder.jws({"typ": "JWT", "alg": "ES256"}, {"sid": challenge.sid, "status": "approved"})
    expect_device_error(intruder.call("POST", f"/Challenges/{challenge.sid}", {"AuthPayload": forged}), 404, 20404)
    listed = intruder.call("GET", "/Challenges")
    assert listed.status_code == 200 and listed.json()["challenges"] == [], listed.text
    assert SERVICE.entities(device.identity).challenges(challenge.sid).fetch().status == "pending"


@case("challenges: list by status, newest first with Order=desc, across pages by PageToken and the iOS pageToken")
def challenge_paging():
    device = enrolled_device("user-0010-push")
    sids = [push_challenge(device, message=f"Approve #{index}").sid for index in range(3)]
    device.answer(sids[0], "approved")
    entity = SERVICE.entities(device.identity)
    assert [c.sid for c in entity.challenges.list(status="pending", page_size=1)] == sids[1:]
    assert [c.sid for c in entity.challenges.list(order="desc", page_size=2)] == list(reversed(sids))
    first = device.call("GET", "/Challenges", params={"FactorSid": device.factor["sid"], "PageSize": 2})
    meta = first.json()["meta"]
    assert meta["page_size"] == 2 and meta["page"] == 0 and meta["next_page_url"].startswith(DEVICE_BASE), meta
    token = meta["next_page_url"].split("PageToken=")[1].split("&")[0]
    second = device.call(
        "GET", "/Challenges", params={"FactorSid": device.factor["sid"], "PageSize": 2, "pageToken": token}
    )
    assert [c["sid"] for c in second.json()["challenges"]] == sids[2:], second.text


@case("factors: the device updates its push token, lists and deletes its factor; 404 afterwards")
def factor_update_delete():
    device = enrolled_device("user-0011-push")
    path = f"/Factors/{device.factor['sid']}"
    updated = device.call(
        "POST",
        path,
        {
            "FriendlyName": "Jane's iPhone",
            "Config.SdkVersion": "3.0.1",
            "Config.AppId": "com.example.acme",
            "Config.NotificationPlatform": "apn",
            "Config.NotificationToken": "b" * 64,
        },
    )
    assert updated.status_code == 200, updated.text
    assert updated.json()["config"]["sdk_version"] == "3.0.1"
    listed = SERVICE.entities(device.identity).factors.list()
    assert [factor.sid for factor in listed] == [device.factor["sid"]]
    deleted = device.call("DELETE", path)
    assert deleted.status_code == 204, deleted.text
    expect_error(lambda: SERVICE.entities(device.identity).factors(device.factor["sid"]).fetch(), 404, 20404)


@case("notifications: a pending challenge is pushed again (NT…, ttl); an answered one is refused")
def notifications():
    device = enrolled_device("user-0012-push")
    challenge = push_challenge(device)
    notification = SERVICE.entities(device.identity).challenges(challenge.sid).notifications.create(ttl=120)
    expect_sid(notification.sid, "NT")
    assert notification.challenge_sid == challenge.sid and notification.ttl == 120 and notification.priority == "high"
    device.answer(challenge.sid, "approved")
    error = None
    try:
        SERVICE.entities(device.identity).challenges(challenge.sid).notifications.create()
    except Exception as raised:  # noqa: BLE001 - the code is checked below
        error = raised
    assert error is not None and error.status == 403 and error.code == 60322, error


@case("tenancy: another account sees none of this service's entities, factors or challenges")
def tenancy():
    device = enrolled_device("user-0013-push")
    challenge = push_challenge(device)
    globex = client(GLOBEX["account_sid"], GLOBEX["key"]).verify.v2.services(SERVICE_SID)
    expect_error(lambda: globex.entities(device.identity).fetch(), 404, 20404)
    expect_error(lambda: globex.entities(device.identity).challenges(challenge.sid).fetch(), 404, 20404)
    expect_error(
        lambda: globex.access_tokens.create(identity="user-0013-push", factor_type="push"), 404, 20404
    )


class Receiver(BaseHTTPRequestHandler):
    """The customer's webhook endpoint: keeps every POST (path, headers, form parameters)."""

    received = []

    def do_POST(self):  # noqa: N802 - the name http.server calls
        body = self.rfile.read(int(self.headers["Content-Length"])).decode()
        Receiver.received.append((self.path, dict(self.headers), dict(urllib.parse.parse_qsl(body))))
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args):
        pass


def events(count, path):
    deadline = time.time() + 15
    while time.time() < deadline:
        found = [event for event in Receiver.received if event[0] == path]
        if len(found) >= count:
            return found
        time.sleep(0.1)
    raise AssertionError(f"expected {count} event(s) at {path}, got {Receiver.received}")


@case("webhooks: CRUD, and factor and challenge events in Twilio's shape, signed for RequestValidator")
def webhooks():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/verify-events"
    try:
        created = SERVICE.webhooks.create(friendly_name="Backend", event_types=["*"], webhook_url=url)
        expect_sid(created.sid, "YW")
        assert created.event_types == ["*"] and created.status == "enabled" and created.webhook_url == url
        disabled = SERVICE.webhooks.create(
            friendly_name="Off", event_types=["challenge.approved"], webhook_url=url + "-off", status="disabled"
        )
        assert [hook.sid for hook in SERVICE.webhooks.list()] == [created.sid, disabled.sid]
        updated = SERVICE.webhooks(disabled.sid).update(friendly_name="Still off")
        assert updated.friendly_name == "Still off" and updated.status == "disabled"
        expect_error(lambda: SERVICE.webhooks.create(friendly_name="x", event_types=["nope"], webhook_url=url), 400, 60200)

        secret = verity("admin", "twilio", "--project", ACME["project"])["webhookSigningSecret"]
        remember_secret(secret)
        validator = RequestValidator(secret)

        device = enrolled_device("user-0014-push")
        challenge = push_challenge(device, hidden_details={"ip": "203.0.113.7"})
        device.answer(challenge.sid, "approved")
        received = events(3, "/verify-events")
        # The outbox delivers in parallel: events may arrive in any order.
        by_type = {params["type"]: params for _, _, params in received}
        assert sorted(by_type) == ["challenge.approved", "factor.created", "factor.verified"], sorted(by_type)
        for _, headers, params in received:
            assert headers["Content-Type"] == "application/x-www-form-urlencoded", headers
            assert validator.validate(url, params, headers["X-Twilio-Signature"]), (headers, params)
            assert not validator.validate(url, {**params, "status": "denied"}, headers["X-Twilio-Signature"])
            assert params["account_sid"] == ACME["account_sid"] and params["service_sid"] == SERVICE_SID
            assert params["entity_identity"] == "user-0014-push" and params["factor_sid"] == device.factor["sid"]
            assert params["factor_type"] == "push" and params["uuid"]
        approved = by_type["challenge.approved"]
        assert approved["challenge_sid"] == challenge.sid and approved["status"] == "approved"
        assert json.loads(approved["challenge_details"])["message"] == "Approve sign-in to Acme?"
        assert json.loads(approved["hidden_details"]) == {"ip": "203.0.113.7"}
        assert not any(path == "/verify-events-off" for path, _, _ in Receiver.received)

        assert SERVICE.webhooks(created.sid).delete() is True
        expect_error(lambda: SERVICE.webhooks(created.sid).fetch(), 404, 20404)
    finally:
        server.shutdown()


if __name__ == "__main__":
    sys.exit(main())
