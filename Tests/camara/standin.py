"""A CAMARA Number Verification aggregator on loopback, for the compatibility scripts (the Swift tests have their
own, CamaraStandIn): the OpenID Connect authorization-code flow in front of the API, as the CAMARA Security and
Interoperability Profile describes it, and `POST {apiRoot}/number-verification/v1/verify` as
number-verification-v1.yaml (beside this file) publishes it.

- `GET /authorize`: the operator recognises the data session's SIM and redirects to `redirect_uri` with a code (or
  with `error=...` when told to deny); needs `response_type=code`, the client id, `openid` in the scope, a state and
  a PKCE S256 challenge.
- `POST /token`: `client_secret_basic`, `grant_type=authorization_code`; a code works once, for its redirect URI
  and its PKCE verifier; answers a single-use bearer token.
- `POST /number-verification/v1/verify`: with that token, a body of exactly one property, `phoneNumber` or
  `hashedPhoneNumber`, each checked against the document's schema; answers `devicePhoneNumberVerified`.

Every request whose shape is wrong is answered 400 and recorded in `refused`, so a script can say why.

    standin = CamaraStandIn(device_phone_number="+14155550199")
    standin.start()            # standin.base is http://127.0.0.1:PORT
    ...
    standin.stop()
"""

import base64
import hashlib
import json
import os
import re
import secrets
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import yaml

DOCUMENT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "number-verification-v1.yaml")
CLIENT_ID = "verity-compat-client"
CLIENT_SECRET = "compat-standin-secret-" + secrets.token_hex(8)


def request_schema():
    """The `/verify` request body's schema, read from the published document."""
    with open(DOCUMENT, encoding="utf-8") as file:
        document = yaml.safe_load(file)
    body = document["paths"]["/verify"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    while "$ref" in body:
        body = document["components"]["schemas"][body["$ref"].split("/")[-1]]
    return body


class CamaraStandIn:
    def __init__(self, device_phone_number):
        self.device_phone_number = device_phone_number
        self.authorization_error = None
        self.schema = request_schema()
        self.grants = {}
        self.tokens = set()
        self.verify_bodies = []
        self.refused = []
        self.lock = threading.Lock()
        self.server = None

    @property
    def base(self):
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def start(self):
        standin = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                standin.authorize(self)

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                path = urllib.parse.urlsplit(self.path).path
                if path == "/token":
                    standin.token(self, body)
                elif path == "/number-verification/v1/verify":
                    standin.verify(self, body)
                else:
                    standin.answer(self, 404, {"status": 404, "code": "NOT_FOUND", "message": path})

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self):
        self.server.shutdown()
        self.server.server_close()

    def answer(self, handler, status, body, headers=None):
        data = json.dumps(body).encode()
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            handler.send_header(name, value)
        handler.end_headers()
        handler.wfile.write(data)

    def refuse(self, handler, status, why, body):
        with self.lock:
            self.refused.append(why)
        self.answer(handler, status, body)

    def authorize(self, handler):
        url = urllib.parse.urlsplit(handler.path)
        query = dict(urllib.parse.parse_qsl(url.query))
        if url.path != "/authorize":
            return self.answer(handler, 404, {"error": "not_found"})
        if not (
            query.get("response_type") == "code"
            and query.get("client_id") == CLIENT_ID
            and "openid" in query.get("scope", "").split(" ")
            and query.get("state")
            and query.get("code_challenge")
            and query.get("code_challenge_method") == "S256"
            and query.get("redirect_uri")
        ):
            return self.refuse(handler, 400, f"authorize: {query}", {"error": "invalid_request"})
        if self.authorization_error:
            params = {"error": self.authorization_error, "state": query["state"]}
        else:
            code = "code-" + secrets.token_urlsafe(16)
            with self.lock:
                self.grants[code] = (query["code_challenge"], query["redirect_uri"])
            params = {"code": code, "state": query["state"]}
        location = query["redirect_uri"] + ("&" if "?" in query["redirect_uri"] else "?")
        location += urllib.parse.urlencode(params)
        handler.send_response(302)
        handler.send_header("Location", location)
        handler.send_header("Content-Length", "0")
        handler.end_headers()

    def token(self, handler, body):
        basic = "Basic " + base64.b64encode(f"{CLIENT_ID}:{CLIENT_SECRET}".encode()).decode()
        if handler.headers.get("Authorization") != basic:
            return self.refuse(handler, 401, "token: not client_secret_basic", {"error": "invalid_client"})
        form = dict(urllib.parse.parse_qsl(body.decode()))
        with self.lock:
            grant = self.grants.pop(form.get("code", ""), None)
        verifier = form.get("code_verifier", "")
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
        if not (
            form.get("grant_type") == "authorization_code"
            and grant
            and grant[1] == form.get("redirect_uri")
            and grant[0] == challenge
        ):
            return self.refuse(handler, 400, f"token: {sorted(form)}", {"error": "invalid_grant"})
        token = "at-" + secrets.token_urlsafe(16)
        with self.lock:
            self.tokens.add(token)
        self.answer(handler, 200, {"access_token": token, "token_type": "Bearer", "expires_in": 300})

    def verify(self, handler, raw):
        token = (handler.headers.get("Authorization") or "").removeprefix("Bearer ")
        with self.lock:
            known = token in self.tokens
            self.tokens.discard(token)
        if not known:
            return self.refuse(handler, 401, "verify: unknown token", {"status": 401, "code": "UNAUTHENTICATED"})
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        why = self.schema_violation(body)
        if why:
            return self.refuse(handler, 400, f"verify: {why}", {"status": 400, "code": "INVALID_ARGUMENT"})
        with self.lock:
            self.verify_bodies.append(body)
        if "phoneNumber" in body:
            verified = body["phoneNumber"] == self.device_phone_number
        else:
            digest = hashlib.sha256(self.device_phone_number.encode()).hexdigest()
            verified = body["hashedPhoneNumber"].lower() == digest
        self.answer(handler, 200, {"devicePhoneNumberVerified": verified})

    def schema_violation(self, body):
        """Why `body` does not follow NumberVerificationRequestBody, or None."""
        schema = self.schema
        if not isinstance(body, dict):
            return "not a JSON object"
        if not schema.get("minProperties", 0) <= len(body) <= schema.get("maxProperties", len(body)):
            return f"{len(body)} properties"
        for name, value in body.items():
            property_schema = schema["properties"].get(name)
            if property_schema is None:
                return f"unknown property {name}"
            if not isinstance(value, str):
                return f"{name} is not a string"
            pattern = property_schema.get("pattern")
            if pattern and not re.search(pattern, value):
                return f"{name} does not match {pattern}"
        return None
