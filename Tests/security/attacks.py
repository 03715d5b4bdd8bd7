#!/usr/bin/env python3
"""The attack suite: the security review's findings, tried over the wire against a running `verity serve`.

Run by Tests/security/attacks.sh, which starts the server with the production limits (lowered where a case needs a
small number), creates a project and passes what this needs:

    python3 Tests/security/attacks.py BASE_URL API_KEY PROJECT_ID VERITY_BINARY DATA_DIR [redirect]

With `redirect` it runs only the redirect case, against a server started with VERITY_WEBHOOK_ALLOW_PRIVATE=true (so
that its webhook may point at a receiver on this machine at all). Each case prints `ok - …`; the first failure prints
`not ok - …` and exits 1.
"""
import base64
import http.client
import http.server
import json
import re
import subprocess
import sys
import threading
import time
import urllib.parse

BASE, KEY, PROJECT, VERITY, DATA_DIR = sys.argv[1:6]
ONLY_REDIRECT = sys.argv[6:] == ["redirect"]
URL = urllib.parse.urlparse(BASE)
passed = 0


def call(method, path, body=None, headers=None, session=None, key=None):
    connection = http.client.HTTPConnection(URL.hostname, URL.port, timeout=15)
    all_headers = {"Content-Type": "application/json", **(headers or {})}
    if session:
        all_headers["Authorization"] = f"Bearer {session}"
    elif key:
        all_headers["Authorization"] = f"Bearer {key}"
    if path.startswith("/v1/auth/"):
        all_headers["X-Verity-Project"] = PROJECT
    connection.request(method, path, body=json.dumps(body) if body is not None else None, headers=all_headers)
    response = connection.getresponse()
    data = response.read()
    connection.close()
    try:
        parsed = json.loads(data) if data else None
    except ValueError:
        parsed = data.decode(errors="replace")
    return response.status, parsed


def twilio(method, path, fields, key=KEY, project=PROJECT):
    """A Twilio-face request: form-encoded, HTTP Basic with the project's account SID and an API key."""
    account = json.loads(subprocess.run([VERITY, "admin", "twilio", "--project", project, "--data-dir", DATA_DIR,
                                         "--json"], check=True, capture_output=True, text=True).stdout)["accountSid"]
    token = base64.b64encode(f"{account}:{key}".encode()).decode()
    connection = http.client.HTTPConnection(URL.hostname, URL.port, timeout=15)
    connection.request(method, "/twilio/v2" + path, body=urllib.parse.urlencode(fields),
                       headers={"Content-Type": "application/x-www-form-urlencoded", "Authorization": f"Basic {token}"})
    response = connection.getresponse()
    data = response.read()
    connection.close()
    return response.status, json.loads(data) if data else None


def new_project(name):
    created = json.loads(subprocess.run([VERITY, "admin", "project", "create", "--name", name, "--data-dir",
                                         DATA_DIR, "--json"], check=True, capture_output=True, text=True).stdout)
    return created["project"]["id"], created["apiKey"]


def fail(message):
    print(f"not ok - {message}")
    sys.exit(1)


def ok(message):
    global passed
    passed += 1
    print(f"ok - {message}")


def expect(condition, message):
    if not condition:
        fail(message)


def outbox(to):
    """The messages the console sender 'sent' to `to`, newest first."""
    output = subprocess.run([VERITY, "outbox", "list", "--data-dir", DATA_DIR, "--to", to, "--json"],
                            check=True, capture_output=True, text=True).stdout
    return [m for m in json.loads(output) if m["status"] == "sent"]


def wait_for_code(to, count=1):
    for _ in range(100):
        messages = outbox(to)
        if len(messages) >= count:
            return re.search(r"\d{6}", messages[0]["body"]).group()
        time.sleep(0.1)
    fail(f"no message {count} to {to}")


def sign_in(login_id, count=1):
    status, _ = call("POST", "/v1/auth/otp/start", {"loginId": login_id})
    expect(status == 200, f"sign-in start for {login_id} answered {status}")
    code = wait_for_code(login_id, count)
    status, body = call("POST", "/v1/auth/otp/verify", {"loginId": login_id, "code": code})
    expect(status == 200, f"sign-in verify for {login_id} answered {status} {body}")
    return body


def redirect_case():
    """A public-looking endpoint that answers 302 to an inner address: the webhook client must not follow it."""
    seen = []

    class Receiver(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            seen.append(self.path)
            self.send_response(302)
            self.send_header("Location", "/inner-metadata")
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_GET = do_POST

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    project, key = new_project("Redirect")
    status, service = twilio("POST", "/Services", {"FriendlyName": "R"}, key=key, project=project)
    expect(status == 201, f"service create answered {status} {service}")
    status, hook = twilio("POST", f"/Services/{service['sid']}/Webhooks",
                          {"FriendlyName": "R", "EventTypes": "*",
                           "WebhookUrl": f"http://127.0.0.1:{server.server_address[1]}/hook"}, key=key, project=project)
    expect(status == 201, f"webhook create answered {status} {hook}")
    status, factor = twilio("POST", f"/Services/{service['sid']}/Entities/user-0001/Factors",
                            {"FriendlyName": "App", "FactorType": "totp"}, key=key, project=project)
    expect(status == 201, f"TOTP factor create answered {status} {factor}")
    for _ in range(100):
        if seen:
            break
        time.sleep(0.1)
    time.sleep(1)
    server.shutdown()
    expect(seen == ["/hook"], f"the receiver saw {seen}: the redirect was followed, or nothing came")
    ok("a webhook answered with a redirect to an inner address is not followed")


def toll_fraud_case():
    """Round 2, toll fraud: premium-rate and shared-cost numbers outside the five countries the old hand list knew,
    refused by SMS and by call on the native API, app sign-in and the Twilio face; and a new project does not call."""
    project, key = new_project("Tolls")

    def app_start(login_id, channel):
        connection = http.client.HTTPConnection(URL.hostname, URL.port, timeout=15)
        connection.request("POST", "/v1/auth/otp/start", body=json.dumps({"loginId": login_id, "channel": channel}),
                           headers={"Content-Type": "application/json", "X-Verity-Project": project})
        response = connection.getresponse()
        body = json.loads(response.read() or b"null")
        connection.close()
        return response.status, body

    status, body = app_start("+41900123457", "voice")
    expect(status == 403 and body["code"] == "channel_disabled",
           f"an anonymous call start on a new project answered {status} {body}")
    subprocess.run([VERITY, "admin", "project", "update", project, "--disabled-channels", "none", "--data-dir",
                    DATA_DIR], check=True, capture_output=True)
    status, service = twilio("POST", "/Services", {"FriendlyName": "Tolls"}, key=key, project=project)
    expect(status == 201, f"service create answered {status} {service}")
    numbers = {"CH 0900": "+41900123457", "CH 0840": "+41840123456", "AT 0900": "+43900123456",
               "BE 0900": "+3290012345", "PL 70x": "+48701234567", "CZ 90x": "+420900123456", "DK 90": "+4590123456",
               "HU 90": "+3690123456", "UK 084": "+448451234567"}
    for name, number in numbers.items():
        for channel in ["sms", "voice"]:
            status, body = app_start(number, channel)
            expect(status == 403 and body["code"] == "premium_rate_number",
                   f"sign-in by {channel} to {name} answered {status} {body}")
            status, body = call("POST", "/v1/verifications", {"to": number, "channel": channel}, key=key)
            expect(status == 403 and body["code"] == "premium_rate_number",
                   f"an API start by {channel} to {name} answered {status} {body}")
        for channel in ["sms", "call"]:
            status, body = twilio("POST", f"/Services/{service['sid']}/Verifications", {"To": number,
                                  "Channel": channel}, key=key, project=project)
            expect(status == 403 and body["code"] == 60605, f"a Twilio {channel} to {name} answered {status} {body}")
    time.sleep(0.5)
    sent = {name: outbox(number) for name, number in numbers.items() if outbox(number)}
    expect(not sent, f"messages went to {sent}")
    ok("a new project does not call; premium-rate and shared-cost numbers in CH, AT, BE, PL, CZ, DK, HU and UK 084 "
       "are refused by SMS and call on the API, app sign-in and the Twilio face, and nothing is sent")


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def es256(claims, key, **header):
    """A compact ES256 JWS of `claims` by `key` (a cryptography EC private key), with `header` beside `alg`."""
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
    signing_input = (b64url(json.dumps({"alg": "ES256", **header}).encode()) + "."
                     + b64url(json.dumps(claims, separators=(",", ":")).encode()))
    r, s = decode_dss_signature(key.sign(signing_input.encode(), ec.ECDSA(hashes.SHA256())))
    return signing_input + "." + b64url(r.to_bytes(32, "big") + s.to_bytes(32, "big"))


def verity_id(sid, prefix):
    """The Verity id a Twilio-face SID names (`YF…` → `fac_…`): its bytes in Verity's base32 alphabet."""
    alphabet, output, buffer, bits = "0123456789abcdefghjkmnpqrstvwxyz", "", 0, 0
    for byte in bytes.fromhex(sid[2:]):
        buffer, bits = (buffer << 8) | byte, bits + 8
        while bits >= 5:
            output += alphabet[(buffer >> (bits - 5)) & 31]
            bits -= 5
        buffer &= (1 << bits) - 1
    if bits:
        output += alphabet[(buffer << (5 - bits)) & 31]
    return f"{prefix}_{output}"


def suspended_twilio_factor_case():
    """Security round 2, finding 5: a Twilio-face factor suspended by "this wasn't me" cannot approve a challenge
    through the Twilio answer (it used to skip the factor checks the native answer makes)."""
    import os
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    project, key = new_project("Suspension")
    subprocess.run([VERITY, "admin", "project", "update", project, "--unusual-activity-response", "suspend_factor",
                    "--data-dir", DATA_DIR], check=True, capture_output=True)
    account = json.loads(subprocess.run([VERITY, "admin", "twilio", "--project", project, "--data-dir", DATA_DIR,
                                         "--json"], check=True, capture_output=True, text=True).stdout)["accountSid"]
    status, service = twilio("POST", "/Services", {"FriendlyName": "Suspension"}, key=key, project=project)
    expect(status == 201, f"service create answered {status} {service}")
    identity = "attacker-0001"
    entity = f"/Services/{service['sid']}/Entities/{identity}"
    status, token = twilio("POST", f"/Services/{service['sid']}/AccessTokens",
                           {"Identity": identity, "FactorType": "push"}, key=key, project=project)
    expect(status == 201, f"access token answered {status} {token}")
    device = ec.generate_private_key(ec.SECP256R1())
    public = device.public_key().public_bytes(serialization.Encoding.DER,
                                              serialization.PublicFormat.SubjectPublicKeyInfo)

    def device_call(method, path, fields, auth):
        connection = http.client.HTTPConnection(URL.hostname, URL.port, timeout=15)
        connection.request(method, "/twilio/v2" + path, body=urllib.parse.urlencode(fields),
                           headers={"Content-Type": "application/x-www-form-urlencoded",
                                    "Authorization": "Basic " + base64.b64encode(f"token:{auth}".encode()).decode()})
        response = connection.getresponse()
        data = response.read()
        connection.close()
        return response.status, json.loads(data) if data else None

    status, factor = device_call("POST", f"{entity}/Factors",
                                 {"FriendlyName": "Phone", "FactorType": "push", "Binding.Alg": "ES256",
                                  "Binding.PublicKey": base64.b64encode(public).decode(),
                                  "Config.NotificationPlatform": "none"}, token["token"])
    expect(status == 201, f"factor create answered {status} {factor}")
    factor_id = verity_id(factor["sid"], "fac")

    def twilio_jwt():
        now = int(time.time())
        return es256({"sub": account, "nbf": now - 5, "exp": now + 300}, device, kid=factor["config"]["credential_sid"],
                     cty="twilio-pba;v=1", typ="JWT")

    proof = base64.b64encode(device.sign(factor["sid"].encode(), ec.ECDSA(hashes.SHA256()))).decode()
    status, verified = device_call("POST", f"{entity}/Factors/{factor['sid']}", {"AuthPayload": proof}, twilio_jwt())
    expect(status == 200 and verified["status"] == "verified", f"factor verify answered {status} {verified}")
    challenges = []
    for _ in range(2):
        status, challenge = twilio("POST", f"{entity}/Challenges",
                                   {"FactorSid": factor["sid"], "Details.Message": "Sign in?"}, key=key,
                                   project=project)
        expect(status == 201, f"challenge create answered {status} {challenge}")
        challenges.append(challenge["sid"])

    # "This wasn't me" on the first challenge, by the same key over the native device protocol: the factor is
    # suspended.
    def native_token():
        now = int(time.time())
        return es256({"sub": factor_id, "iat": now, "exp": now + 300, "jti": os.urandom(12).hex()}, device, kid=factor_id, typ="JWT")

    first = verity_id(challenges[0], "chl")
    status, shown = call("GET", f"/v1/device/factors/{factor_id}/challenges/{first}", key=native_token())
    expect(status == 200, f"the native view of the challenge answered {status} {shown}")
    answer = {"challengeId": first, "contentHash": shown["contentHash"], "factorId": factor_id, "reason": "not_me",
              "status": "denied"}
    status, denied = call("POST", f"/v1/device/factors/{factor_id}/challenges/{first}/respond",
                          {"status": "denied", "reason": "not_me",
                           "signature": es256(answer, device, kid=factor_id, typ="verity-challenge+jws")},
                          key=native_token())
    expect(status == 200, f"the report of unusual activity answered {status} {denied}")

    # The second challenge, answered the Twilio way with a valid signature, is refused and stays pending.
    status, fetched = device_call("GET", f"{entity}/Challenges/{challenges[1]}", {}, twilio_jwt())
    claims = {field: fetched.get(field) for field in ["sid", "account_sid", "service_sid", "entity_sid", "identity",
                                                      "factor_sid", "date_created", "expiration_date", "details",
                                                      "hidden_details"]}
    claims["status"] = "approved"
    status, body = device_call("POST", f"{entity}/Challenges/{challenges[1]}",
                               {"AuthPayload": es256(claims, device, typ="JWT")}, twilio_jwt())
    expect(status == 403, f"a suspended factor's Twilio approval answered {status} {body}")
    refused = f"{status} {body['code']}"
    status, seen = twilio("GET", f"{entity}/Challenges/{challenges[1]}", {}, key=key, project=project)
    expect(seen["status"] == "pending", f"after the refused approval the challenge is {seen['status']}")
    ok(f"a suspended factor's signed Twilio approval is refused ({refused}); the challenge stays pending")


def console_totp_case():
    """Round 2, console: a leaked sign-in link does not beat the operator's authenticator code. 16 threads guess
    wrong codes with one link; three are checked, then the link is spent and the right code no longer signs in."""
    import pyotp
    from concurrent.futures import ThreadPoolExecutor

    def verity(*arguments):
        return subprocess.run([VERITY, "admin", *arguments, "--data-dir", DATA_DIR], check=True, capture_output=True,
                              text=True).stdout

    uri = re.search(r"otpauth://\S+", verity("operator", "create", "brute", "--totp")).group(0)
    totp = pyotp.parse_uri(uri)
    link = verity("console-login", "brute", "--url", BASE).strip()
    token = urllib.parse.parse_qs(urllib.parse.urlparse(link).query)["token"][0]

    def post(code):
        connection = http.client.HTTPConnection(URL.hostname, URL.port, timeout=15)
        connection.request("POST", "/console/sign-in", body=urllib.parse.urlencode({"token": token, "code": code}),
                           headers={"Content-Type": "application/x-www-form-urlencoded"})
        response = connection.getresponse()
        page = response.read().decode(errors="replace")
        connection.close()
        found = re.search(r'data-code="([a-z_]+)"', page)
        return response.status, found.group(1) if found else None

    right = totp.now()
    wrong = [f"{(int(right) + offset) % 1000000:06d}" for offset in range(1000, 1200)]
    with ThreadPoolExecutor(max_workers=16) as pool:
        answers = list(pool.map(post, wrong))
    checked = [answer for answer in answers if answer == (401, "wrong_code")]
    expect(len(checked) == 3 and all(answer in [(401, "wrong_code"), (401, "invalid_session")] for answer in answers),
           f"200 wrong codes from 16 threads with one link: {len(checked)} checked, answers {set(answers)}")
    status, code = post(totp.now())
    expect(status == 401 and code == "invalid_session", f"the right code after the guesses answered {status} {code}")
    ok("console sign-in: 200 wrong TOTP codes from 16 threads spend the link after 3; the right code then fails")


def descope_step_up_without_proof_case():
    """Round 2, finding 3: whoever reads a Descope step-up code and verifies it with only `Bearer projectId` (racing
    the user's own verify) gets a sign-in with that code, never the session's factors on top of it."""
    project, key = new_project("Step-up")
    phone, email = "+14155550133", "step-up@example.com"
    subprocess.run([VERITY, "admin", "user", "create", "--email", email, "--phone", phone, "--project", project,
                    "--data-dir", DATA_DIR], check=True, capture_output=True)

    def descope(path, body, bearer):
        return call("POST", "/descope/v1/auth/" + path, body, headers={"Authorization": f"Bearer {bearer}"})

    def claims(token):
        payload = token.split(".")[1]
        return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))

    status, _ = descope("otp/signup-in/sms", {"loginId": phone}, project)
    expect(status == 200, f"the victim's SMS sign-in start answered {status}")
    status, signed_in = descope("otp/verify/sms", {"loginId": phone, "code": wait_for_code(phone)}, project)
    expect(status == 200, f"the victim's SMS sign-in answered {status} {signed_in}")
    refresh = signed_in["refreshJwt"]
    status, _ = descope("otp/signin/email", {"loginId": email, "loginOptions": {"stepup": True}},
                        f"{project}:{refresh}")
    expect(status == 200, f"the step-up start answered {status}")
    status, taken = descope("otp/verify/email", {"loginId": email, "code": wait_for_code(email)}, project)
    expect(status == 200, f"the code holder's verify answered {status} {taken}")
    got = claims(taken["sessionJwt"])
    expect("su" not in got and got.get("acr") != "mfa" and "sms" not in got.get("amr", []),
           f"the code holder without the session's refresh JWT got {got}")
    status, refreshed = descope("refresh", {}, f"{project}:{refresh}")
    expect(status == 200 and "email" not in claims(refreshed["sessionJwt"]).get("amr", []),
           f"the victim's session was stepped up by the code holder: {status} {refreshed}")
    ok("a Descope step-up code verified without the session's refresh JWT signs in with that code only (no su, no mfa)")


def firebase_emulator_admin_case():
    """Round 2, finding 4: with VERITY_FIREBASE_EMULATOR_ADMIN=true, the emulator's code list and Bearer owner are
    refused to a project that did not opt in, and to a client that is not this machine (here: through a proxy)."""
    project, _ = new_project("Emulator")
    named = json.loads(subprocess.run([VERITY, "admin", "project", "firebase", project, "--firebase-project-id",
                                       "emu-attack", "--data-dir", DATA_DIR, "--json"],
                                      check=True, capture_output=True, text=True).stdout)
    send = f"/identitytoolkit.googleapis.com/v1/accounts:sendVerificationCode?key={named['apiKey']}"
    status, sent = call("POST", send, {"phoneNumber": "+14155550144"})
    expect(status == 200, f"the Firebase send answered {status} {sent}")
    codes = "/emulator/v1/projects/emu-attack/verificationCodes"
    lookup = "/identitytoolkit.googleapis.com/v1/projects/emu-attack/accounts:lookup"

    def refused(headers):
        listed, body = call("GET", codes, headers=headers)
        owner, _ = call("POST", lookup, {"localId": ["usr_x"]}, headers={**headers, "Authorization": "Bearer owner"})
        return listed == 404 and owner == 401, (listed, body, owner)

    quiet, seen = refused({})
    expect(quiet, f"a project that did not opt in served the emulator admin: {seen}")
    subprocess.run([VERITY, "admin", "project", "update", project, "--firebase-emulator-admin", "all_numbers",
                    "--data-dir", DATA_DIR], check=True, capture_output=True)
    for header in ({"X-Forwarded-For": "127.0.0.1"}, {"Forwarded": "for=127.0.0.1"}, {"X-Real-IP": "127.0.0.1"}):
        quiet, seen = refused(header)
        expect(quiet, f"a client through a proxy ({header}) was served the emulator admin: {seen}")
    status, body = call("GET", codes)
    expect(status == 200 and body["verificationCodes"][0]["sessionInfo"] == sent["sessionInfo"],
           f"the opted-in project's own loopback client was not served: {status} {body}")
    ok("the Firebase emulator codes and Bearer owner are refused to a project not opted in and through any proxy")


def descope_update_without_proof_case():
    """Issue 33 leftover: whoever reads the code of a Descope login-address update (otp/update/phone) and verifies it
    with only `Bearer projectId` gets a sign-in of that number, never a token of the user's session or their account."""
    project, _ = new_project("Update")
    email, phone = "update-victim@example.com", "+14155550166"

    def descope(path, body, bearer, method="POST"):
        return call(method, "/descope/v1/auth/" + path, body, headers={"Authorization": f"Bearer {bearer}"})

    status, _ = descope("otp/signup-in/email", {"loginId": email}, project)
    expect(status == 200, f"the victim's email sign-in start answered {status}")
    status, signed_in = descope("otp/verify/email", {"loginId": email, "code": wait_for_code(email)}, project)
    expect(status == 200, f"the victim's email sign-in answered {status} {signed_in}")
    refresh, victim = signed_in["refreshJwt"], signed_in["user"]["userId"]
    status, _ = descope("otp/update/phone/sms", {"loginId": email, "phone": phone, "addToLoginIDs": True},
                        f"{project}:{refresh}")
    expect(status == 200, f"the update start answered {status}")
    status, taken = descope("otp/verify/sms", {"loginId": phone, "code": wait_for_code(phone)}, project)
    expect(status == 200, f"the code holder's verify answered {status} {taken}")
    expect(taken["user"]["userId"] != victim and taken["user"]["loginIds"] == [phone],
           f"the code holder without the session's refresh JWT got the victim's account: {taken['user']}")
    status, me = descope("me", None, f"{project}:{refresh}", method="GET")
    expect(status == 200 and me["loginIds"] == [email], f"the victim's login ids changed: {status} {me}")
    ok("a Descope login-update code verified without the session's refresh JWT signs in that number only")


def app_attest_forged_root_case():
    """Issue 37: an App Attest attestation that is right in every field but chains to the attacker's own CA instead of
    Apple's pinned App Attestation Root CA is refused, no key is kept, and an assertion by that key sends nothing."""
    import datetime
    import hashlib
    import cbor2
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    global PROJECT
    saved, (PROJECT, _) = PROJECT, new_project("Attest")
    subprocess.run([VERITY, "admin", "project", "update", PROJECT, "--require-app-verification", "true",
                    "--app-attest", "on", "--app-attest-team-id", "ABCDE12345", "--app-attest-bundle-id",
                    "com.example.app", "--data-dir", DATA_DIR], check=True, capture_output=True)
    app_id, phone = b"ABCDE12345.com.example.app", "+14155550177"
    key = ec.generate_private_key(ec.SECP256R1())
    point = key.public_key().public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
    key_id = hashlib.sha256(point).digest()

    def challenge():
        status, body = call("POST", "/v1/auth/app-attest/challenges")
        expect(status == 201, f"the challenge answered {status} {body}")
        return body["challenge"]

    def certificate(subject, issuer, public_key, signer, ca, extension=None):
        now = datetime.datetime.now(datetime.timezone.utc)
        builder = (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
                   .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, issuer)]))
                   .public_key(public_key).serial_number(x509.random_serial_number())
                   .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=30))
                   .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
        if extension:
            builder = builder.add_extension(extension, critical=False)
        return builder.sign(signer, hashes.SHA256()).public_bytes(serialization.Encoding.DER)

    attest_challenge = challenge()
    cose = cbor2.dumps({1: 2, 3: -7, -1: 1, -2: point[1:33], -3: point[33:]})
    auth_data = (hashlib.sha256(app_id).digest() + b"\x40" + b"\0\0\0\0" + b"appattest" + b"\0" * 7 + b"\0\x20"
                 + key_id + cose)
    nonce = hashlib.sha256(auth_data + hashlib.sha256(attest_challenge.encode()).digest()).digest()
    root_key, ca_key = ec.generate_private_key(ec.SECP384R1()), ec.generate_private_key(ec.SECP256R1())
    # The attacker's own "Apple App Attestation Root CA", its intermediate and a credential certificate for the key.
    intermediate = certificate("Apple App Attestation CA 1", "Apple App Attestation Root CA", ca_key.public_key(),
                               root_key, True)
    nonce_extension = x509.UnrecognizedExtension(x509.ObjectIdentifier("1.2.840.113635.100.8.2"),
                                                 bytes([0x30, 0x24, 0xA1, 0x22, 0x04, 0x20]) + nonce)
    leaf = certificate(key_id.hex(), "Apple App Attestation CA 1", key.public_key(), ca_key, False, nonce_extension)
    attestation = cbor2.dumps({"fmt": "apple-appattest", "attStmt": {"x5c": [leaf, intermediate], "receipt": b""},
                               "authData": auth_data})
    status, body = call("POST", "/v1/auth/app-attest/keys", {
        "keyId": base64.b64encode(key_id).decode(), "attestationObject": base64.b64encode(attestation).decode(),
        "challenge": attest_challenge})
    expect(status == 403 and body["code"] == "app_verification_required",
           f"an attestation chained to a forged root answered {status} {body}")

    assert_challenge = challenge()
    client_data = f"verity-app-attest\n{assert_challenge}".encode()
    assert_data = hashlib.sha256(app_id).digest() + b"\x40\0\0\0\x01"
    # Apple signs nonce = SHA-256(authenticatorData ‖ SHA-256(clientData)) with ECDSA-SHA256.
    signed = hashlib.sha256(assert_data + hashlib.sha256(client_data).digest()).digest()
    signature = key.sign(signed, ec.ECDSA(hashes.SHA256()))
    assertion = base64.urlsafe_b64encode(cbor2.dumps({"signature": signature, "authenticatorData": assert_data}))
    proof = f"appattest.{base64.b64encode(key_id).decode()}.{assert_challenge}.{assertion.decode().rstrip('=')}"
    status, body = call("POST", "/v1/auth/otp/start", {"loginId": phone}, headers={"X-Verity-App-Verification": proof})
    expect(status == 403 and body["code"] == "app_verification_required",
           f"an assertion by the unattested key answered {status} {body}")
    time.sleep(0.5)
    expect(outbox(phone) == [], f"a code went to {phone}: {outbox(phone)}")
    PROJECT = saved
    ok("an App Attest attestation chained to a forged root is refused, and its key's assertion sends nothing")



if ONLY_REDIRECT:
    redirect_case()
    print(f"attacks (redirect): {passed} passed, 0 failed")
    sys.exit(0)

# Finding 1: case variants of one address are one destination.
variants = ["john@x.com", "JoHn@x.com", "JOHN@x.com", "jOhn@x.com"]
ids = set()
for variant in variants:
    status, body = call("POST", "/v1/auth/otp/start", {"loginId": variant})
    expect(status == 200, f"start for {variant} answered {status} {body}")
    ids.add(body["verificationId"])
expect(len(ids) == 1, f"four spellings got {len(ids)} sign-in codes")
code = wait_for_code("john@x.com", 4)
expect(len(outbox("JOHN@x.com")) == 0, "a message went to another spelling")
wrong = f"{(int(code) + 1) % 1000000:06d}"
remaining = []
for variant in variants:
    status, body = call("POST", "/v1/auth/otp/verify", {"loginId": variant, "code": wrong})
    remaining.append(body.get("remainingAttempts"))
expect(remaining == [4, 3, 2, 1], f"wrong codes over four spellings left {remaining} attempts")
status, body = call("POST", "/v1/auth/otp/verify", {"loginId": "JOHN@X.COM", "code": code})
expect(status == 200, f"the right code by another spelling answered {status} {body}")
ok("case variants of an address share one sign-in code, one message stream and one set of 5 attempts")

status, first = call("POST", "/v1/verifications", {"to": "mary@x.com", "channel": "email"}, key=KEY)
status, second = call("POST", "/v1/verifications", {"to": "MARY@X.com", "channel": "email"}, key=KEY)
expect(status == 201 and first["id"] == second["id"] and second["sendAttempts"] == 2,
       f"API starts for two spellings: {first} / {second}")
ok("API verifications: two spellings are one verification, the second a re-send")

# Finding 2: an approved step-up challenge steps up once.
user = sign_in("+14155550150")
session = user["sessionJwt"]
status, token = call("POST", "/v1/enrollment-tokens", {"userId": user["user"]["id"]}, key=KEY)
expect(status == 201, f"enrollment token answered {status} {token}")
phone_dir = DATA_DIR + "-phone"
subprocess.run([VERITY, "device", "enroll", "--server", BASE, "--token", token["token"], "--state-dir", phone_dir],
               check=True, capture_output=True)
status, started = call("POST", "/v1/auth/stepup/start", {}, session=session)
expect(status == 200 and started["method"] == "push", f"step-up start answered {status} {started}")
subprocess.run([VERITY, "device", "approve", started["challengeId"], "--state-dir", phone_dir],
               check=True, capture_output=True)
status, stepped = call("POST", "/v1/auth/stepup/verify", {"challengeId": started["challengeId"]}, session=session)
expect(status == 200, f"the first step-up answered {status} {stepped}")
status, replayed = call("POST", "/v1/auth/stepup/verify", {"challengeId": started["challengeId"]}, session=session)
expect(status == 409 and replayed["code"] == "challenge_already_answered",
       f"the replayed approval answered {status} {replayed}")
ok("an approved step-up challenge steps up once; the replay is 409 challenge_already_answered")

# Finding 3: a test number's fixed code has the guessing limits of any number (VERITY_RATE_LIMIT_LOGIN_ID=12/h).
subprocess.run([VERITY, "admin", "project", "test-number", "add", "+16505551234", "123456", "--project", PROJECT,
                "--data-dir", DATA_DIR], check=True, capture_output=True)
statuses = []
for guess in range(1, 15):
    status, _ = call("POST", "/v1/auth/otp/verify", {"loginId": "+16505551234", "code": f"{guess:06d}"},
                     headers={"X-Forwarded-For": f"203.0.113.{guess}"})
    statuses.append(status)
expect(429 in statuses, f"fourteen guesses at a test number's code answered {statuses}")
ok(f"guesses at a test number's fixed code meet the login-id limit, whatever the client says it is: {statuses}")

# Finding 5: a tenant's webhook may not point at this machine or the cloud metadata service.
status, service = twilio("POST", "/Services", {"FriendlyName": "SSRF"})
expect(status == 201, f"service create answered {status} {service}")
for target in ["http://127.0.0.1:8080/admin", "http://169.254.169.254/latest/meta-data/", "http://[::1]/",
               "http://127.1/", "http://localhost/"]:
    status, body = twilio("POST", f"/Services/{service['sid']}/Webhooks",
                          {"FriendlyName": "x", "EventTypes": "*", "WebhookUrl": target})
    expect(status == 400 and body["code"] == 60200, f"a webhook to {target} answered {status} {body}")
ok("Twilio-face webhooks to 127.0.0.1, 169.254.169.254, [::1], 127.1 and localhost are refused (400 60200)")

# Security round 2, finding 5: the Twilio answer by a suspended factor.
suspended_twilio_factor_case()

# Finding 6: an X-Forwarded-For from an untrusted peer changes nothing (VERITY_RATE_LIMIT_CLIENT_IP=40/m, its own
# project so that nothing above has used its bucket).
PROJECT, KEY = new_project("Proxy")
statuses = []
for index in range(41):
    status, _ = call("POST", "/v1/auth/otp/start", {"loginId": f"+1415{555 + index}1000"},
                     headers={"X-Forwarded-For": f"198.51.100.{index + 1}"})
    statuses.append(status)
expect(statuses[:40] == [200] * 40 and statuses[40] == 429,
       f"41 starts with 41 spoofed X-Forwarded-For addresses answered {statuses}")
ok("a spoofed X-Forwarded-For from an untrusted peer does not escape the per-client limit (the 41st start is 429)")

toll_fraud_case()


console_totp_case()


descope_step_up_without_proof_case()
firebase_emulator_admin_case()
descope_update_without_proof_case()
app_attest_forged_root_case()

print(f"attacks: {passed} passed, 0 failed")
