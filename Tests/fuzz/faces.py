"""Fuzzes the faces that have no OpenAPI document (Twilio Verify, Descope, Firebase Auth and the operators' console)
of a running `verity serve`.

Schemathesis fuzzes the native API from its OpenAPI document. This script knows each other face's routes and field
names and sends, with the face's own credentials and live resources, requests a buggy or hostile client could send:
known fields with values of every type and size, unknown fields, bodies that are not JSON or not a form, the wrong
content type, odd path parameters and paging queries. Every answer must be below 500, and every refusal must be in
the face's own error shape. Run by Tests/fuzz/faces.sh; seeded, so a failure is repeatable:

    FUZZ_SEED=7 FUZZ_ROUNDS=200 bash Tests/fuzz/faces.sh
"""

import base64
import hashlib
import hmac
import json
import os
import random
import re
import subprocess
import sys
import time
import urllib.parse

import requests
from twilio.request_validator import RequestValidator

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from totp import totp  # noqa: E402
from verity_cli import remember_secret, verity  # noqa: E402

VERITY = os.environ["VERITY_BIN"]
BASE = os.environ["VERITY_BASE"]
SEED = int(os.environ.get("FUZZ_SEED", "1"))
ROUNDS = int(os.environ.get("FUZZ_ROUNDS", "40"))
rng = random.Random(SEED)


# MARK: - Values

UNLIKE = "".join(chr(0x4E00 + index * 7) for index in range(1500))
STRINGS = [
    "", " ", "0", "-1", "1", "6", "11", "2147483648", "99999999999999999999999", "1e309", "-0", "NaN", "Infinity",
    "true", "false", "null", "+14155550100", "+1415555", "+999999999999999999", "14155550100", "jane@example.com",
    "@", "a@", "jane@exa mple.com", "é", "Zoë", "\u202e", "😀" * 40, "x" * 5000, "\x00", "\x7f", "%00", "%ZZ",
    "../../etc/passwd", "<script>alert(1)</script>", "' OR 1=1 --", "2026-13-45T25:61:61Z", "1970-01-01T00:00:00Z",
    "9999-12-31T23:59:59Z", "2026-11-26T08:00:00+99:99", "VA" + "0" * 32, "YF" + "f" * 32, "YC" + "a" * 32,
    "sms", "email", "voice", "whatsapp", "push", "totp", "apn", "fcm", "none", "*", "{}", "[]", '{"a":', "ES256",
    "verified", "unverified", "approved", "denied", "canceled", "enabled", "disabled", "invited", "deleted",
    "refresh_token", "authorization_code", "en", "es-MX", "xx-YY", "zh-Hant-TW", "vk_", "vk_" + "A" * 40,
    # Long text that does not compress (PostgreSQL compresses large index entries), alone and as a URL.
    UNLIKE, "https://hooks.example.com/" + UNLIKE, "https://hooks.example.com/" + "a" * 2100,
]
NUMBERS = [0, 1, -1, 6, 10, 2**31, -(2**31) - 1, 2**63, 10**30, 1.5, -0.0, 1e308, -1e308]


def string():
    return rng.choice(STRINGS) if rng.random() < 0.85 else "".join(chr(rng.randint(1, 0x2FFF)) for _ in range(20))


def json_value(depth=0):
    kind = rng.randrange(8 if depth < 3 else 5)
    if kind < 2:
        return string()
    if kind == 2:
        return rng.choice(NUMBERS)
    if kind == 3:
        return rng.choice([True, False])
    if kind == 4:
        return None
    if kind == 5:
        return [json_value(depth + 1) for _ in range(rng.randrange(4))]
    if kind == 6:
        return {string()[:20]: json_value(depth + 1) for _ in range(rng.randrange(4))}
    return "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 12)))


def raw_body():
    return rng.choice([
        b"", b"{", b"[]", b"[1,2]", b"\"text\"", b"42", b"null", b"{\"a\":1e99999}", b"\xff\xfe\xfd",
        b"{" * 10000, b"a=%ZZ&b", b"=&=&", ("x=" + "y" * 70000).encode(),
        json.dumps({"x": "é" * 100}).encode("utf-16"),
    ])


# MARK: - Faces

class Face:
    """A face's routes, how a request is made, and the shape of its refusals."""

    name = ""
    form = False

    def __init__(self, routes, fields, params, queries=(), known=None):
        self.routes, self.fields, self.params, self.queries = routes, fields, params, list(queries)
        # Real values for some fields (a live session's token, a user's login id), so requests get past the look-up.
        self.known = known or {}

    def path(self, template):
        parts = []
        for part in template.split("/"):
            if part.startswith(":"):
                pool = self.params.get(part[1:], [])
                value = rng.choice(pool) if pool and rng.random() < 0.85 else string()
                part = urllib.parse.quote(value, safe="") if value else "-"
            parts.append(part)
        return "/".join(parts)

    def body(self, method):
        """(content type, bytes) of a request body, or (None, None) for none."""
        if method in ("GET", "DELETE") and rng.random() < 0.8:
            return None, None
        choice = rng.random()
        if choice < 0.12:
            content_type = rng.choice(["application/json", "application/x-www-form-urlencoded", "text/plain", None])
            return content_type, raw_body()
        fields = {name: self.value(name) for name in rng.sample(self.fields, rng.randint(0, min(6, len(self.fields))))}
        if choice < 0.2:
            fields[string()[:30] or "x"] = self.value("")
        if self.form:
            pairs = [(key, value) for key, values in fields.items() for value in values]
            content_type = "application/x-www-form-urlencoded" if choice > 0.25 else "application/json"
            return content_type, urllib.parse.urlencode(pairs).encode()
        content_type = "application/json" if choice > 0.25 else "application/x-www-form-urlencoded"
        return content_type, json.dumps(fields, ensure_ascii=rng.random() < 0.5).encode()

    def value(self, name):
        """A JSON value for `name`; for a form face, the list of its values (a repeated name has several)."""
        if name in self.known and rng.random() < 0.5:
            known = rng.choice(self.known[name])
            return [known] if self.form else known
        if self.form:
            return [string() for _ in range(rng.choice([1, 1, 1, 2]))]
        return json_value()

    def query(self):
        if not self.queries or rng.random() < 0.5:
            return {}
        return {name: string() for name in rng.sample(self.queries, rng.randint(1, len(self.queries)))}

    def headers(self, template):
        return {}

    def prepare(self, method, url, query, content_type, body):
        """The request's (headers, body), given its body and content type."""
        return ({"Content-Type": content_type} if content_type else {}), body

    def answered(self, template, response):
        """Sees each answer (a face with rotating credentials keeps its own up to date)."""

    def refusal_is_shaped(self, response):
        raise NotImplementedError


class Twilio(Face):
    name = "twilio"
    form = True

    def __init__(self, auth, **kwargs):
        super().__init__(**kwargs)
        self.auth = auth

    def headers(self, template):
        return {"Authorization": "Basic " + base64.b64encode(self.auth.encode()).decode()}

    def refusal_is_shaped(self, response):
        body = response.json()
        return isinstance(body.get("code"), int) and body.get("status") == response.status_code and "message" in body


class Descope(Face):
    name = "descope"

    def __init__(self, project, management_key, sign_in, **kwargs):
        super().__init__(**kwargs)
        self.project, self.management_key, self.sign_in = project, management_key, sign_in
        self.refresh = sign_in()
        self.wrong = [project, f"{project}:vk_nope", "nope", f"{project}:" + "x" * 300, ""]

    def headers(self, template):
        """Mostly the credential the route wants (the management key, or the live session's refresh token)."""
        right = self.management_key if "/mgmt/" in template else self.refresh
        bearer = f"{self.project}:{right}" if rng.random() < 0.7 else rng.choice(self.wrong)
        return {"Authorization": "Bearer " + bearer}

    def answered(self, template, response):
        # A refresh rotates the token (the old one then revokes the session); a logout ends it: sign in again.
        if response.status_code == 200 and "refreshJwt" in response.text:
            self.refresh = response.json()["refreshJwt"]
            remember_secret(self.refresh)
        elif (response.status_code == 200 and "logout" in template) or (
            response.status_code == 401 and rng.random() < 0.05
        ):
            self.refresh = self.sign_in()

    def refusal_is_shaped(self, response):
        body = response.json()
        return isinstance(body.get("errorCode"), str) and isinstance(body.get("errorDescription"), str)


class Firebase(Face):
    name = "firebase"

    def __init__(self, key, admin_bearer, **kwargs):
        super().__init__(**kwargs)
        self.key, self.admin_bearer = key, admin_bearer

    def query(self):
        query = super().query()
        if rng.random() < 0.9:
            query["key"] = self.key
        return query

    def headers(self, template):
        return {"Authorization": "Bearer " + self.admin_bearer} if rng.random() < 0.8 else {}

    def refusal_is_shaped(self, response):
        error = response.json().get("error", {})
        return error.get("code") == response.status_code and isinstance(error.get("message"), str)


class Console(Face):
    """The operators' console: HTML forms with the session's CSRF token; a refusal is an HTML page."""

    name = "console"
    form = True

    def __init__(self, cookie, csrf, **kwargs):
        super().__init__(**kwargs)
        self.cookie, self.csrf = cookie, csrf

    def body(self, method):
        content_type, body = super().body(method)
        if method == "POST" and content_type == "application/x-www-form-urlencoded" and rng.random() < 0.9:
            body = urllib.parse.urlencode({"csrf": self.csrf}).encode() + (b"&" + body if body else b"")
        return content_type, body

    def headers(self, template):
        return {"Cookie": f"verity_console={self.cookie}"} if rng.random() < 0.9 else {}

    def refusal_is_shaped(self, response):
        return response.headers.get("Content-Type", "").startswith("text/html") and "<main" in response.text


class Callbacks(Face):
    """Providers' delivery-status callbacks (Meta's WhatsApp Cloud API, Twilio's status callbacks): most requests are
    signed with the secrets faces.sh gives the server, so the fuzz reaches what reads the body; refusals are the
    native API's problem+json."""

    name = "callbacks"

    def __init__(self, meta_secret, meta_verify_token, twilio_token, **kwargs):
        super().__init__(**kwargs)
        self.meta_secret, self.meta_verify_token = meta_secret.encode(), meta_verify_token
        self.twilio = RequestValidator(twilio_token)

    def query(self):
        query = super().query()
        if rng.random() < 0.5:
            query.update({"hub.mode": "subscribe", "hub.verify_token": self.meta_verify_token})
        return query

    def body(self, method):
        if rng.random() < 0.7:
            status = {"id": self.value("id"), "status": self.value("status"), "errors": [{"code": self.value("code")}]}
            notification = {"object": "whatsapp_business_account", "entry": [{"changes": [{"value": {
                "statuses": [status] if rng.random() < 0.8 else json_value()}}]}]}
            return "application/json", json.dumps(notification).encode()
        return super().body(method)

    def value(self, name):
        return super().value(name) if rng.random() < 0.5 else string()

    def prepare(self, method, url, query, content_type, body):
        """Signs most requests as the provider would; returns the request's (headers, body)."""
        headers = {"Content-Type": content_type} if content_type else {}
        if url.endswith("/twilio"):
            params = {name: self.value(name) for name in rng.sample(TWILIO_CALLBACK_FIELDS, rng.randint(0, 4))}
            params = {name: value for name, value in params.items() if isinstance(value, str)}
            body = urllib.parse.urlencode(params).encode()
            headers = {"Content-Type": "application/x-www-form-urlencoded"}
            if rng.random() < 0.8:
                signed_url = url + ("?" + urllib.parse.urlencode(query) if query else "")
                headers["X-Twilio-Signature"] = self.twilio.compute_signature(signed_url, params)
        elif method == "POST" and rng.random() < 0.8:
            digest = hmac.new(self.meta_secret, body or b"", hashlib.sha256).hexdigest()
            headers["X-Hub-Signature-256"] = "sha256=" + digest
        return headers, body

    def refusal_is_shaped(self, response):
        body = response.json()
        problem_json = response.headers.get("Content-Type", "").startswith("application/problem+json")
        return problem_json and isinstance(body.get("code"), str) and body.get("status") == response.status_code


# MARK: - Setup

created = verity("admin", "project", "create", "--name", "Fuzz")
PROJECT, KEY = created["project"]["id"], created["apiKey"]
remember_secret(KEY)
sids = verity("admin", "twilio", "--project", PROJECT)
firebase = verity("admin", "project", "firebase", PROJECT, "--firebase-project-id", "fuzz-app")
session = requests.Session()


def twilio_post(path, **form):
    response = session.post(f"{BASE}/twilio/v2/{path}", data=form, auth=(sids["accountSid"], KEY), timeout=10)
    response.raise_for_status()
    return response.json()


service = twilio_post("Services", FriendlyName="Fuzz")["sid"]
verification = twilio_post(f"Services/{service}/Verifications", To="+14155550100", Channel="sms")["sid"]
factor = twilio_post(f"Services/{service}/Entities/fuzz-entity/Factors", FactorType="totp", FriendlyName="Phone")
webhook = twilio_post(
    f"Services/{service}/Webhooks", FriendlyName="Hook", EventTypes="*", WebhookUrl="https://example.com/hook"
)["sid"]
token = twilio_post(f"Services/{service}/AccessTokens", Identity="fuzz-entity", FactorType="push")["sid"]
secret = factor["binding"]["secret"]
twilio_post(f"Services/{service}/Entities/fuzz-entity/Factors/{factor['sid']}", AuthPayload=totp(secret))
# A TOTP challenge is answered by the code it comes with: the next step's, as the factor's own code is spent.
challenge = twilio_post(
    f"Services/{service}/Entities/fuzz-entity/Challenges",
    FactorSid=factor["sid"],
    AuthPayload=totp(secret, at=time.time() + 30),
)["sid"]


def code_sent(to):
    """The code of the first message sent to `to`."""
    deadline = time.time() + 10
    while time.time() < deadline:
        sent = [message for message in verity("outbox", "list", "--to", to) if message["status"] == "sent"]
        if sent:
            return re.search(r"\d{4,10}", sent[-1]["body"]).group()
        time.sleep(0.1)
    raise AssertionError(f"no message sent to {to} in 10 s: {verity('outbox', 'list', '--to', to)}")


def descope_post(path, body, bearer=PROJECT):
    headers = {"Authorization": f"Bearer {bearer}"}
    response = session.post(f"{BASE}/descope/{path}", json=body, headers=headers, timeout=10)
    response.raise_for_status()
    return response.json()


def descope_sign_in():
    """A fresh session of a new user; returns its refresh token. (One address would soon be refused: a pending
    verification takes five sends, and the fuzzer's own requests start some.)"""
    login = f"fuzz-{len(descope_user)}@example.com"
    descope_post("v1/auth/otp/signup-in/email", {"loginId": login})
    signed_in = descope_post("v1/auth/otp/verify/email", {"loginId": login, "code": code_sent(login)})
    remember_secret(signed_in["refreshJwt"])
    descope_user.append(signed_in["user"]["userId"])
    return signed_in["refreshJwt"]


descope_user = []


def firebase_post(name, body):
    url = f"{BASE}/identitytoolkit.googleapis.com/v1/{name}"
    response = session.post(url, params={"key": firebase["apiKey"]}, json=body, timeout=10)
    response.raise_for_status()
    return response.json()


session_info = firebase_post("accounts:sendVerificationCode", {"phoneNumber": "+14155550111"})["sessionInfo"]
firebase_session = firebase_post(
    "accounts:signInWithPhoneNumber", {"sessionInfo": session_info, "code": code_sent("+14155550111")}
)
remember_secret(firebase_session["refreshToken"])

entity = "Services/:serviceSid/Entities/:identity"
TWILIO = Twilio(
    auth=f"{sids['accountSid']}:{KEY}",
    routes=[
        ("POST", "Services"), ("GET", "Services"), ("GET", "Services/:serviceSid"), ("POST", "Services/:serviceSid"),
        ("DELETE", "Services/:serviceSid"),
        ("POST", "Services/:serviceSid/Verifications"), ("GET", "Services/:serviceSid/Verifications/:sid"),
        ("POST", "Services/:serviceSid/Verifications/:sid"), ("POST", "Services/:serviceSid/VerificationCheck"),
        ("POST", "Services/:serviceSid/Entities"), ("GET", "Services/:serviceSid/Entities"), ("GET", entity),
        ("DELETE", entity), ("POST", entity + "/Factors"), ("GET", entity + "/Factors"),
        ("GET", entity + "/Factors/:factorSid"), ("POST", entity + "/Factors/:factorSid"),
        ("DELETE", entity + "/Factors/:factorSid"), ("POST", entity + "/Challenges"),
        ("GET", entity + "/Challenges"), ("GET", entity + "/Challenges/:challengeSid"),
        ("POST", entity + "/Challenges/:challengeSid"), ("POST", entity + "/Challenges/:challengeSid/Notifications"),
        ("POST", "Services/:serviceSid/AccessTokens"), ("GET", "Services/:serviceSid/AccessTokens/:tokenSid"),
        ("POST", "Services/:serviceSid/Webhooks"), ("GET", "Services/:serviceSid/Webhooks"),
        ("GET", "Services/:serviceSid/Webhooks/:webhookSid"), ("POST", "Services/:serviceSid/Webhooks/:webhookSid"),
        ("DELETE", "Services/:serviceSid/Webhooks/:webhookSid"),
    ],
    fields=[
        "AuthPayload", "Binding.Alg", "Binding.PublicKey", "Binding.Secret", "Channel", "Code", "CodeLength",
        "Config.Alg", "Config.AppId", "Config.CodeLength", "Config.NotificationPlatform", "Config.NotificationToken",
        "Config.SdkVersion", "Config.Skew", "Config.TimeStep", "Details.Fields", "Details.Message", "EventTypes",
        "ExpirationDate", "FactorFriendlyName", "FactorSid", "FactorType", "FriendlyName", "HiddenDetails",
        "Identity", "Locale", "Metadata", "Push.IncludeDate", "Status", "To", "Totp.CodeLength", "Totp.Issuer",
        "Totp.Skew", "Totp.TimeStep", "Ttl", "VerificationSid", "Version", "WebhookUrl",
    ],
    params={
        "serviceSid": [service], "sid": [verification, "+14155550100"], "identity": ["fuzz-entity"],
        "factorSid": [factor["sid"]], "webhookSid": [webhook], "tokenSid": [token], "challengeSid": [challenge],
    },
    queries=["PageSize", "Page", "PageToken", "Status", "FactorSid"],
    known={
        "FactorSid": [factor["sid"]], "Identity": ["fuzz-entity"], "To": ["+14155550100", "fuzz@example.com"],
        "Channel": ["sms", "email", "call", "whatsapp"], "FactorType": ["totp", "push"],
        "VerificationSid": [verification],
        "AuthPayload": [totp(secret)], "Status": ["approved", "denied", "canceled"], "EventTypes": ["*"],
    },
)

DESCOPE = Descope(
    project=PROJECT,
    management_key=KEY,
    sign_in=descope_sign_in,
    routes=[
        ("GET", "v2/keys/:projectId"), ("GET", "v1/keys/:projectId"),
        ("POST", "v1/auth/otp/signup-in/:method"), ("POST", "v1/auth/otp/signin/:method"),
        ("POST", "v1/auth/otp/signup/:method"), ("POST", "v1/auth/otp/verify/:method"),
        ("POST", "v1/auth/otp/update/phone/:method"), ("POST", "v1/auth/otp/update/email"),
        ("POST", "v1/auth/refresh"), ("GET", "v1/auth/me"), ("POST", "v1/auth/logout"), ("POST", "v1/auth/logoutall"),
        ("POST", "v1/mgmt/user/create"), ("GET", "v1/mgmt/user"), ("POST", "v1/mgmt/user/search"),
        ("POST", "v2/mgmt/user/search"), ("POST", "v1/mgmt/user/update"), ("POST", "v1/mgmt/user/update/status"),
        ("POST", "v1/mgmt/user/delete"), ("POST", "v1/mgmt/user/update/role/add"),
        ("POST", "v2/mgmt/user/update/role/add"), ("POST", "v1/mgmt/user/update/role/remove"),
        ("POST", "v1/mgmt/role/create"), ("GET", "v1/mgmt/role/all"), ("POST", "v1/mgmt/role/delete"),
    ],
    fields=[
        "loginId", "loginOptions", "email", "phone", "addToLoginIDs", "onMergeUseExisting", "locale", "code", "name",
        "displayName", "roleNames", "userTenants", "customAttributes", "additionalLoginIds", "status", "userId",
        "tenantId", "description", "permissionNames", "limit", "page", "loginIds", "emails", "phones", "userIds",
        "statuses", "tenantIds", "user",
    ],
    params={"projectId": [PROJECT], "method": ["sms", "email", "voice", "whatsapp"]},
    queries=["loginId", "userId"],
    known={"loginId": ["fuzz-0@example.com", "+14155550100"], "userId": descope_user,
           "roleNames": [["admin"]], "name": ["admin"], "status": ["enabled", "disabled"]},
)

v1, v3 = "identitytoolkit.googleapis.com/v1/", "www.googleapis.com/identitytoolkit/v3/relyingparty/"
admin = "identitytoolkit.googleapis.com/v1/projects/:firebaseProjectId/"
FIREBASE = Firebase(
    key=firebase["apiKey"],
    admin_bearer=KEY,
    routes=[
        ("POST", v1 + "accounts:sendVerificationCode"), ("POST", v1 + "accounts:signInWithPhoneNumber"),
        ("POST", v1 + "accounts:lookup"), ("POST", v3 + "sendVerificationCode"), ("POST", v3 + "verifyPhoneNumber"),
        ("POST", v3 + "getAccountInfo"), ("GET", v3 + "getProjectConfig"),
        ("POST", "securetoken.googleapis.com/v1/token"),
        ("POST", admin + "accounts:lookup"), ("GET", admin + "accounts:batchGet"), ("POST", admin + "accounts:update"),
        ("POST", admin + "accounts:delete"), ("GET", "emulator/v1/projects/:firebaseProjectId/verificationCodes"),
    ],
    fields=[
        "phoneNumber", "recaptchaToken", "iosReceipt", "sessionInfo", "code", "idToken", "temporaryProof",
        "grantType", "grant_type", "refreshToken", "refresh_token", "localId", "displayName", "customAttributes",
        "disableUser", "validSince", "email", "password", "deleteProvider", "returnSecureToken",
    ],
    params={"firebaseProjectId": ["fuzz-app", PROJECT]},
    queries=["maxResults", "nextPageToken"],
    known={"sessionInfo": [session_info], "refreshToken": [firebase_session["refreshToken"]],
           "refresh_token": [firebase_session["refreshToken"]], "grant_type": ["refresh_token"],
           "grantType": ["refresh_token"], "idToken": [firebase_session["idToken"]],
           "localId": [firebase_session["localId"], [firebase_session["localId"]]], "phoneNumber": ["+14155550111"]},
)
subprocess.run([VERITY, "admin", "operator", "create", "fuzz"], check=True, capture_output=True)
link = subprocess.run(
    [VERITY, "admin", "console-login", "fuzz", "--url", BASE], check=True, capture_output=True, text=True
).stdout.strip()
link_token = urllib.parse.parse_qs(urllib.parse.urlsplit(link).query)["token"][0]
signed_in_console = session.post(f"{BASE}/console/sign-in", data={"token": link_token}, allow_redirects=False)
console_cookie = signed_in_console.cookies["verity_console"]
remember_secret(console_cookie)
projects_page = session.get(f"{BASE}/console/projects", headers={"Cookie": f"verity_console={console_cookie}"})
csrf = re.search(r'name="csrf" value="([^"]+)"', projects_page.text).group(1)
key_id = re.search(r"/console/projects/[^/]+/keys/([^/]+)/revoke", session.get(
    f"{BASE}/console/projects/{PROJECT}", headers={"Cookie": f"verity_console={console_cookie}"}).text).group(1)
message_id = verity("outbox", "list", "--to", "+14155550111")[0]["id"]
project_path = "projects/:project"
CONSOLE = Console(
    cookie=console_cookie,
    csrf=csrf,
    routes=[
        ("GET", ""), ("GET", "verifications"), ("GET", "messages"), ("POST", "messages/:message/retry"),
        ("GET", "audit"), ("GET", "sign-in"), ("POST", "sign-in"), ("GET", "projects"), ("POST", "projects"),
        ("GET", project_path), ("POST", project_path + "/settings"), ("POST", project_path + "/webhook"),
        ("POST", project_path + "/keys"), ("POST", project_path + "/roles"), ("POST", project_path + "/test-numbers"),
        ("GET", project_path + "/users"), ("GET", project_path + "/users/:user"),
        ("POST", project_path + "/users/:user/disable"), ("POST", project_path + "/users/:user/enable"),
        ("POST", project_path + "/users/:user/revoke-sessions"), ("GET", project_path + "/twilio"),
        ("GET", project_path + "/security-events"), ("GET", project_path + "/challenges"),
        ("GET", project_path + "/possession"), ("POST", project_path + "/keys/:key/revoke"),
    ],
    fields=[
        "allowedCountries", "code", "codeLength", "codeLifetime", "descopeCookies", "descopeProjectId",
        "disabledChannels", "fallbackChannel", "name", "permissions", "phoneNumber", "requiresAppVerification",
        "token", "unusualActivityResponse", "url",
    ],
    params={"project": [PROJECT], "user": descope_user, "key": [key_id], "message": [message_id]},
    queries=["cursor", "project", "q", "status"],
    known={
        "fallbackChannel": ["sms", "email", "voice", "whatsapp", ""], "disabledChannels": ["voice,whatsapp", ""],
        "unusualActivityResponse": ["none", "revoke_sessions", "suspend_factor", "disable_user", ""],
        "codeLength": ["6"], "codeLifetime": ["600"],
        "url": ["https://example.com/hook"], "phoneNumber": ["+15005550100"], "code": ["123456"],
    },
)

TWILIO_CALLBACK_FIELDS = ["MessageSid", "MessageStatus", "SmsStatus", "CallSid", "CallStatus", "ErrorCode", "To"]
CALLBACKS = Callbacks(
    meta_secret=os.environ["FUZZ_META_APP_SECRET"],
    meta_verify_token=os.environ["FUZZ_META_VERIFY_TOKEN"],
    twilio_token=os.environ["FUZZ_TWILIO_AUTH_TOKEN"],
    routes=[("GET", "whatsapp-cloud"), ("POST", "whatsapp-cloud"), ("POST", "twilio")],
    fields=TWILIO_CALLBACK_FIELDS,
    params={},
    queries=["hub.mode", "hub.verify_token", "hub.challenge"],
    known={
        "status": ["failed", "sent", "delivered"], "code": [131026, 131000, 1], "MessageStatus": ["failed", "sent"],
        "SmsStatus": ["undelivered"], "CallStatus": ["failed", "busy", "no-answer", "completed"],
        "MessageSid": ["SM" + "0" * 32], "CallSid": ["CA" + "0" * 32], "ErrorCode": ["30003", "30008"],
    },
)

PREFIX = {
    "twilio": "/twilio/v2/", "descope": "/descope/", "firebase": "/", "console": "/console/",
    "callbacks": "/v1/delivery-status/",
}


# MARK: - Run


def problem(face, response):
    """What is wrong with an answer, or None."""
    if response.status_code >= 500:
        return f"answered {response.status_code}"
    if response.status_code >= 400:
        try:
            shaped = face.refusal_is_shaped(response)
        except (ValueError, AttributeError):
            shaped = False
        if not shaped:
            return f"refused ({response.status_code}) outside {face.name}'s error shape"
    return None


def deletes_last(route):
    """Deletes run last, the most nested first, so the other routes keep finding the resources they name."""
    method, template = route
    return (method == "DELETE", -template.count("/") if method == "DELETE" else 0)


failures = 0
sent = 0
for face in (TWILIO, DESCOPE, FIREBASE, CONSOLE, CALLBACKS):
    statuses = {}
    failures_before = failures
    for method, template in sorted(face.routes, key=deletes_last):
        for _ in range(ROUNDS):
            path = PREFIX[face.name] + face.path(template)
            query = face.query()
            headers, body = face.prepare(method, BASE + path, query, *face.body(method))
            headers.update(face.headers(template))
            try:
                response = session.request(
                    method, BASE + path, params=query, data=body, headers=headers, timeout=30, allow_redirects=False
                )
                wrong = problem(face, response)
            except requests.RequestException as error:
                response, wrong = None, str(error)
            sent += 1
            if response is not None:
                face.answered(template, response)
                statuses[response.status_code] = statuses.get(response.status_code, 0) + 1
            if wrong:
                failures += 1
                if failures <= 30:
                    answer = response.text[:300] if response is not None else ""
                    print(
                        f"not ok - {face.name} {method} {path} query={query} "
                        f"type={headers.get('Content-Type')} body={(body or b'')[:300]!r}: {wrong}: {answer}",
                        file=sys.stderr,
                    )
    answers = ", ".join(f"{status}: {count}" for status, count in sorted(statuses.items()))
    verdict = "ok" if failures == failures_before else "not ok"
    summary = f"{len(face.routes)} routes x {ROUNDS} requests, none 5xx or out of shape ({answers})"
    print(f"{verdict} - {face.name}: {summary}")

print(f"fuzz faces: {sent} requests (seed {SEED}), {failures} failed")
sys.exit(1 if failures else 0)
