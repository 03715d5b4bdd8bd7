#!/usr/bin/env python3
"""Python load generator for the Verity bench: push-approval round trips, OTP sign-ins, session refreshes and
possession checks.

    pushload.py enroll BASE_URL API_KEY COUNT OUT_FILE [--workers 8]
    pushload.py test-numbers BASE_URL API_KEY [--count 10]
    pushload.py run BASE_URL --scenario push|signin|refresh|possession|health --duration S --connections C
                    [--processes P] [--api-key vk_…] [--devices FILE] [--fetch] [--project prj_…] [--out FILE]
                    [--cpu-out FILE] [--server-pid PID]
    pushload.py selftest       # times the client-side work of one round trip (signing, JSON, HTTP framing)

`enroll` does what an app does, COUNT times: the backend asks for an enrollment token (POST /v1/enrollment-tokens,
API key, one user per device), the device registers a fresh P-256 key (POST /v1/device/factors, enrollment token)
and proves it holds it (POST /v1/device/factors/{id}/verify, an ES256 JWS over {factorId, nonce}). It writes one
JSON object per line: {"factorId": "fac_…", "userId": "…", "key": "<PKCS#8 PEM>"}.

`test-numbers` registers the project's test phone numbers +16505550100 … +16505550109 (COUNT of them, at most 10,
the server's limit) with the fixed code 123456 (POST /v1/test-numbers, API key): their codes are never sent and
no rate limit applies, which is what lets the signin, refresh and possession scenarios run at full speed.

`run --scenario push` measures round trips: per iteration, on one keep-alive connection,
    1. backend:  POST /v1/challenges {"factorId": …, "message": …}                (API key)     -> 201 chl_…
    2. (--fetch) device: GET /v1/device/factors/{fid}/challenges/{cid}           (device JWT)  -> 200
    3. device:   POST /v1/device/factors/{fid}/challenges/{cid}/respond
                 {"status": "approved", "signature": ES256 JWS over the canonical payload} (device JWT) -> 200
Every device request carries a fresh device JWT (ES256, kid = sub = factor id, unique jti), because the server
refuses a replayed jti; the answer's signature binds the server-made challenge id, so nothing can be pre-signed.
Without --fetch the device computes the content hash itself from the message (it is fixed for the run), which is
the minimum a round trip costs; --fetch adds the read VerityPush.approve does before it signs.

`run --scenario signin` measures OTP sign-ins as an app makes them (no API key; every request names the project
with X-Verity-Project: --project): per iteration, on one keep-alive connection,
    1. POST /v1/auth/otp/start  {"loginId": "+1650555010N", "resend": false}   -> 200 {"verificationId", "sent": false}
    2. POST /v1/auth/otp/verify {"verificationId": "ver_…", "code": "123456"}   -> 200 {"sessionJwt", "refreshToken"}
Each connection owns one test number (two connections on one number would get the same pending verification), so
the scenario runs min(C, 10) connections.

`run --scenario refresh` measures session refreshes: before the window, one session per connection is signed in
(as above, one after the other; connection c uses test number c mod 10, and each sign-in is a session of its own),
then each connection loops POST /v1/auth/refresh {"refreshToken": "vrt_…"} -> 200 with a new refresh token, which
the next refresh sends. A token is sent once, whatever the answer: reusing one revokes the session, so a
connection that got no new token (an unexpected answer, a lost connection) stops.

`run --scenario possession` measures possession checks (Prove-style: the backend starts a flow, the app proves the
phone with a code, the backend validates the outcome): per iteration, on one keep-alive connection,
    1. backend: POST /v1/possession {"phoneNumber": "+1650555010N", "flow": "mobile"}  (API key)
                -> 201 {"correlationId": "pos_…", "authToken": "vpt_pos_….<secret>", …}
    2. app:     POST /v1/possession/{id}/otp/start {}                 (auth token) -> 200 status otp_sent
    3. app:     POST /v1/possession/{id}/otp/finish {"code": "123456"} (auth token) -> 200 status succeeded
    4. backend: POST /v1/possession/{id}/validate (no body)             (API key)    -> 200 success true, method otp
To a test number no code is sent and its fixed code works. Each flow's code is its own, so several flows may run
for one number at once: all C connections run, connection c with test number c mod 10.

`run --scenario health` is GET /health with the same client, so the push/health ratio can be taken with one
measuring stick as well as against wrk's /health.

Each of P processes runs C/P connections in one asyncio loop (a small HTTP/1.1 client on asyncio.Protocol, no
third-party HTTP library); only `cryptography` is needed, for ES256. All processes start at the same instant,
count what completes inside the window, and report CPU for the window only. The output is one line
    BENCH_RESULT {json}
in the shape bench/lib/report.lua prints for wrk (plus `extra`), so run.sh and summarize.py read both alike.
"""

import argparse
import asyncio
import base64
import hashlib
import json
import multiprocessing
import os
import socket
import struct
import sys
import time
import traceback
import urllib.parse

try:
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
except ImportError:  # run.sh installs it; say how if someone runs this by hand.
    sys.exit("pushload.py needs the `cryptography` package: python3 -m pip install cryptography")

MESSAGE = "Sign in to Verity bench?"
DEVICE_TOKEN_LIFETIME = 300
# What one iteration of each scenario is (singular, plural).
ITERATION_NAMES = {"health": ("request", "requests"), "push": ("round trip", "round trips"),
                   "signin": ("sign-in", "sign-ins"), "refresh": ("refresh", "refreshes"),
                   "possession": ("flow", "flows")}
# The project's test phone numbers (the server allows at most 10 per project) and their fixed code.
TEST_NUMBER_PREFIX = "+1650555010"
MAX_TEST_NUMBERS = 10
TEST_CODE = "123456"


# --- ES256 compact JWS -------------------------------------------------------------------------------------------

def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def compact_json(value) -> bytes:
    return json.dumps(value, separators=(",", ":"), sort_keys=True).encode()


def content_hash(message: str, details=()) -> str:
    """ChallengeSigningPayload.contentHash: for [message, label1, value1, …] each UTF-8 length (u32 BE) + bytes,
    SHA-256, base64url without padding."""
    digest = hashlib.sha256()
    for text in [message, *[part for pair in details for part in pair]]:
        raw = text.encode("utf-8")
        digest.update(struct.pack(">I", len(raw)))
        digest.update(raw)
    return b64url(digest.digest())


class Device:
    """One enrolled factor: its key and pre-encoded JWS headers."""

    __slots__ = ("factor_id", "key", "jwt_header", "answer_header", "jti_prefix", "counter")

    def __init__(self, factor_id: str, key: ec.EllipticCurvePrivateKey):
        self.factor_id = factor_id
        self.key = key
        self.jwt_header = b64url(compact_json({"alg": "ES256", "kid": factor_id, "typ": "JWT"}))
        self.answer_header = b64url(
            compact_json({"alg": "ES256", "kid": factor_id, "typ": "verity-challenge+jws"}))
        # Unique across processes and runs against the same server: random prefix + counter.
        self.jti_prefix = os.urandom(6).hex()
        self.counter = 0

    def sign(self, header: str, payload: dict) -> str:
        signing_input = f"{header}.{b64url(compact_json(payload))}"
        der = self.key.sign(signing_input.encode("ascii"), ec.ECDSA(hashes.SHA256()))
        r, s = decode_dss_signature(der)
        return f"{signing_input}.{b64url(r.to_bytes(32, 'big') + s.to_bytes(32, 'big'))}"

    def token(self) -> str:
        """A fresh device JWT (used once: the server records its jti)."""
        self.counter += 1
        now = int(time.time())
        return self.sign(self.jwt_header, {
            "sub": self.factor_id, "iat": now, "exp": now + DEVICE_TOKEN_LIFETIME,
            "jti": f"{self.jti_prefix}-{self.counter}"})

    def answer(self, challenge_id: str, hash_: str, status: str = "approved") -> str:
        return self.sign(self.answer_header, {
            "challengeId": challenge_id, "factorId": self.factor_id, "contentHash": hash_, "status": status})


# --- A minimal HTTP/1.1 keep-alive client --------------------------------------------------------------------------

class HTTPError(Exception):
    pass


class Connection(asyncio.Protocol):
    """One keep-alive connection, one request in flight at a time (like a wrk connection)."""

    def __init__(self, host_header: bytes):
        self.host_header = host_header
        self.transport = None
        self.buffer = bytearray()
        self.waiter: asyncio.Future | None = None
        self.closed = False

    @classmethod
    async def open(cls, host: str, port: int) -> "Connection":
        loop = asyncio.get_running_loop()
        _, protocol = await loop.create_connection(lambda: cls(f"{host}:{port}".encode()), host, port)
        return protocol

    def connection_made(self, transport):
        self.transport = transport
        sock = transport.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def connection_lost(self, exc):
        self.closed = True
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_exception(HTTPError(f"connection lost: {exc}"))

    def data_received(self, data):
        self.buffer += data
        self._try_complete()

    def _try_complete(self):
        if self.waiter is None or self.waiter.done():
            return
        end = self.buffer.find(b"\r\n\r\n")
        if end < 0:
            return
        head = bytes(self.buffer[:end]).decode("latin-1").split("\r\n")
        try:
            status = int(head[0].split(" ", 2)[1])
        except (IndexError, ValueError):
            self.waiter.set_exception(HTTPError(f"bad status line {head[0]!r}"))
            return
        length = None
        chunked = False
        for line in head[1:]:
            name, _, value = line.partition(":")
            name = name.strip().lower()
            if name == "content-length":
                length = int(value.strip())
            elif name == "transfer-encoding" and "chunked" in value.lower():
                chunked = True
        start = end + 4
        if chunked:
            body = bytearray()
            pos = start
            while True:
                line_end = self.buffer.find(b"\r\n", pos)
                if line_end < 0:
                    return
                size = int(bytes(self.buffer[pos:line_end]).split(b";")[0], 16)
                if len(self.buffer) < line_end + 2 + size + 2:
                    return
                body += self.buffer[line_end + 2:line_end + 2 + size]
                pos = line_end + 2 + size + 2
                if size == 0:
                    break
            del self.buffer[:pos]
        else:
            length = length or 0
            if len(self.buffer) < start + length:
                return
            body = bytes(self.buffer[start:start + length])
            del self.buffer[:start + length]
        waiter, self.waiter = self.waiter, None
        waiter.set_result((status, bytes(body)))

    async def request(self, method: str, path: str, token: str | None = None, body: bytes | None = None,
                      headers: tuple[str, ...] = ()):
        """One request; `headers` are extra "Name: value" lines. Returns (status, body)."""
        if self.closed:
            raise HTTPError("connection closed")
        lines = [f"{method} {path} HTTP/1.1", f"Host: {self.host_header.decode()}", *headers]
        if token is not None:
            lines.append(f"Authorization: Bearer {token}")
        if body is not None:
            lines.append("Content-Type: application/json")
            lines.append(f"Content-Length: {len(body)}")
        data = ("\r\n".join(lines) + "\r\n\r\n").encode()
        if body is not None:
            data += body
        self.waiter = asyncio.get_running_loop().create_future()
        self.transport.write(data)
        return await self.waiter

    def close(self):
        if self.transport is not None:
            self.transport.close()


# --- Enrollment ----------------------------------------------------------------------------------------------------

def enroll_main(args) -> int:
    import http.client
    from concurrent.futures import ThreadPoolExecutor
    import threading

    url = urllib.parse.urlsplit(args.base_url)
    local = threading.local()
    run_tag = os.urandom(4).hex()

    def call(method, path, token, payload):
        if getattr(local, "conn", None) is None:
            local.conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
        body = json.dumps(payload).encode() if payload is not None else None
        headers = {"Authorization": f"Bearer {token}"}
        if body is not None:
            headers["Content-Type"] = "application/json"
        local.conn.request(method, path, body=body, headers=headers)
        response = local.conn.getresponse()
        return response.status, response.read()

    def expect(status, payload, wanted, what):
        if status != wanted:
            raise RuntimeError(f"{what} answered {status}: {payload[:300]!r}")
        return json.loads(payload)

    def enroll_one(index: int) -> dict:
        user_id = f"bench-{run_tag}-{index}"
        token = expect(*call("POST", "/v1/enrollment-tokens", args.api_key, {"userId": user_id}), 201,
                       "POST /v1/enrollment-tokens")["token"]
        key = ec.generate_private_key(ec.SECP256R1())
        spki = key.public_key().public_bytes(
            serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
        enrolled = expect(*call("POST", "/v1/device/factors", token, {
            "publicKey": base64.b64encode(spki).decode(), "friendlyName": f"Bench phone {index}",
            "pushPlatform": args.platform, "pushToken": None if args.platform == "none" else f"bench-token-{index}",
            "appId": "com.example.bench", "sdkVersion": "bench"}), 201, "POST /v1/device/factors")
        factor_id = enrolled["factor"]["id"]
        proof = Device(factor_id, key).sign(
            b64url(compact_json({"alg": "ES256", "kid": factor_id, "typ": "JWT"})),
            {"factorId": factor_id, "nonce": enrolled["nonce"]})
        verified = expect(*call("POST", f"/v1/device/factors/{factor_id}/verify", token, {"signature": proof}),
                          200, "POST /v1/device/factors/{id}/verify")
        if verified.get("status") != "verified":
            raise RuntimeError(f"factor {factor_id} is {verified.get('status')} after verify")
        pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption()).decode()
        return {"factorId": factor_id, "userId": user_id, "key": pem}

    began = time.monotonic()
    with ThreadPoolExecutor(max_workers=args.workers) as pool:
        devices = list(pool.map(enroll_one, range(args.count)))
    elapsed = time.monotonic() - began
    with open(args.out_file, "w") as out:
        for device in devices:
            out.write(json.dumps(device) + "\n")
    print(f"enrolled and verified {args.count} push factors in {elapsed:.1f} s", file=sys.stderr)
    return 0


async def test_numbers_main(args) -> int:
    url = urllib.parse.urlsplit(args.base_url)
    conn = await Connection.open(url.hostname, url.port)
    try:
        for index in range(args.count):
            body = json.dumps({"phoneNumber": test_number(index), "code": TEST_CODE}).encode()
            status, payload = await conn.request("POST", "/v1/test-numbers", args.api_key, body)
            if status != 201:
                raise SystemExit(f"POST /v1/test-numbers answered {status}: {payload[:300]!r}")
    finally:
        conn.close()
    print(f"registered {args.count} test numbers {test_number(0)}…{test_number(args.count - 1)} "
          f"(code {TEST_CODE})", file=sys.stderr)
    return 0


def load_devices(path: str) -> list[Device]:
    devices = []
    with open(path) as f:
        for line in f:
            if line.strip():
                item = json.loads(line)
                key = serialization.load_pem_private_key(item["key"].encode(), password=None)
                devices.append(Device(item["factorId"], key))
    if not devices:
        raise SystemExit(f"no devices in {path}")
    return devices


# --- Load ----------------------------------------------------------------------------------------------------------

class Stats:
    def __init__(self):
        self.latencies = []          # seconds, per iteration (round trip, sign-in, refresh, flow or request)
        self.step_latencies = {}     # step name -> [seconds], iterations with all answers as expected
        self.step_requests = {}      # step name -> requests completed inside the window, whatever their answer
        self.statuses = {}           # "step status" -> count, for every response seen
        self.completed = 0           # iterations finished inside the window, all answers as expected
        self.failed = 0              # iterations with an unexpected answer inside the window
        self.requests = 0            # HTTP requests completed inside the window
        self.socket_errors = 0
        self.samples = []            # a few unexpected answers, for the report

    def sample(self, text: str) -> None:
        if len(self.samples) < 5:
            self.samples.append(text)


class Iteration:
    """One iteration's requests: each is timed as a step, its status counted, and any unexpected answer marks the
    iteration failed."""

    __slots__ = ("stats", "clock", "steps", "ok")

    def __init__(self, stats: Stats, clock):
        self.stats = stats
        self.clock = clock
        self.steps = []              # (step name, seconds)
        self.ok = True

    async def call(self, conn: Connection, step: str, expected: int, method: str, path: str,
                   token: str | None = None, body: bytes | None = None, headers: tuple[str, ...] = (),
                   want: dict | None = None):
        """Sends one request; returns the parsed JSON answer when the status is `expected` and the answer has the
        fields in `want` (e.g. {"status": "approved"}), else None."""
        t0 = self.clock()
        status, payload = await conn.request(method, path, token, body, headers)
        self.steps.append((step, self.clock() - t0))
        key = f"{step} {status}"
        self.stats.statuses[key] = self.stats.statuses.get(key, 0) + 1
        if status != expected:
            self.fail(step, f"{status}: {payload[:200]!r}")
            return None
        answer = json.loads(payload) if payload else {}
        for name, value in (want or {}).items():
            if answer.get(name) != value:
                self.fail(step, f"{name} {answer.get(name)!r}, not {value!r}")
                return None
        return answer

    def fail(self, step: str, why: str) -> None:
        self.ok = False
        self.stats.sample(f"{step} -> {why}")


# One driver per connection: `iterate` makes one iteration's requests; `alive` False stops the connection.

class HealthDriver:
    alive = True

    async def iterate(self, it: Iteration, conn: Connection) -> None:
        await it.call(conn, "health", 200, "GET", "/health")


class PushDriver:
    """Round trips over this connection's devices, round-robin."""
    alive = True

    def __init__(self, args, devices: list[Device]):
        self.args = args
        self.devices = devices
        self.cursor = 0
        self.hash = content_hash(MESSAGE)
        self.bodies = {d.factor_id: json.dumps({"factorId": d.factor_id, "message": MESSAGE}).encode()
                       for d in devices}

    async def iterate(self, it: Iteration, conn: Connection) -> None:
        device = self.devices[self.cursor % len(self.devices)]
        self.cursor += 1
        created = await it.call(conn, "create", 201, "POST", "/v1/challenges", self.args.api_key,
                                self.bodies[device.factor_id])
        if created is None:
            return
        challenge_id = created["id"]
        base = f"/v1/device/factors/{device.factor_id}/challenges/{challenge_id}"
        if self.args.fetch:
            shown = await it.call(conn, "fetch", 200, "GET", base, device.token())
            if shown is None:
                return
            if shown["contentHash"] != self.hash:
                raise SystemExit("the server's contentHash differs from the client's computation")
        answer = json.dumps({"status": "approved", "signature": device.answer(challenge_id, self.hash)}).encode()
        await it.call(conn, "respond", 200, "POST", base + "/respond", device.token(), answer,
                      want={"status": "approved"})


def project_headers(project_id: str) -> tuple[str, ...]:
    return (f"X-Verity-Project: {project_id}",)


async def sign_in(it: Iteration, conn: Connection, headers: tuple[str, ...], start_body: bytes) -> str | None:
    """OTP start + verify for a test number; returns the session's refresh token (None if an answer was wrong)."""
    started = await it.call(conn, "start", 200, "POST", "/v1/auth/otp/start", body=start_body, headers=headers)
    if started is None:
        return None
    if started.get("sent") is not False:
        it.fail("start", f"sent = {started.get('sent')!r}: the login id is not a test number")
        return None
    verify_body = json.dumps({"verificationId": started["verificationId"], "code": TEST_CODE}).encode()
    verified = await it.call(conn, "verify", 200, "POST", "/v1/auth/otp/verify", body=verify_body, headers=headers)
    if verified is None:
        return None
    token = verified.get("refreshToken") or ""
    if not token.startswith("vrt_") or not verified.get("sessionJwt"):
        it.fail("verify", "no sessionJwt or vrt_ refresh token in the answer")
        return None
    return token


def start_body(login_id: str) -> bytes:
    return json.dumps({"loginId": login_id, "resend": False}).encode()


class SignInDriver:
    """Sign-ins with one test number (this connection's own)."""
    alive = True

    def __init__(self, args, login_id: str):
        self.headers = project_headers(args.project)
        self.start_body = start_body(login_id)

    async def iterate(self, it: Iteration, conn: Connection) -> None:
        await sign_in(it, conn, self.headers, self.start_body)


class RefreshDriver:
    """Refreshes of one session, each with the token the previous one returned."""

    def __init__(self, args, token: str):
        self.headers = project_headers(args.project)
        self.token = token

    @property
    def alive(self) -> bool:
        return self.token is not None

    async def iterate(self, it: Iteration, conn: Connection) -> None:
        # Sent once whatever happens: after a wrong answer or a lost connection its state is unknown, and a reuse
        # would revoke the session. The connection stops then.
        token, self.token = self.token, None
        body = json.dumps({"refreshToken": token}).encode()
        refreshed = await it.call(conn, "refresh", 200, "POST", "/v1/auth/refresh", body=body, headers=self.headers)
        if refreshed is None:
            return
        new = refreshed.get("refreshToken") or ""
        if not new.startswith("vrt_") or new == token:
            it.fail("refresh", "no new vrt_ refresh token in the answer")
            return
        self.token = new


class PossessionDriver:
    """Possession checks (start, OTP start, OTP finish, validate) for one test number (shared with other
    connections: each flow has a code of its own)."""
    alive = True

    def __init__(self, args, phone_number: str):
        self.api_key = args.api_key
        self.start_body = json.dumps({"phoneNumber": phone_number, "flow": "mobile"}).encode()
        self.finish_body = json.dumps({"code": TEST_CODE}).encode()

    async def iterate(self, it: Iteration, conn: Connection) -> None:
        started = await it.call(conn, "start", 201, "POST", "/v1/possession", self.api_key, self.start_body)
        if started is None:
            return
        flow_id, token = started.get("correlationId") or "", started.get("authToken") or ""
        if not flow_id.startswith("pos_") or not token.startswith(f"vpt_{flow_id}."):
            it.fail("start", "no pos_ correlationId or vpt_ auth token naming it in the answer")
            return
        base = f"/v1/possession/{flow_id}"
        if await it.call(conn, "otp_start", 200, "POST", base + "/otp/start", token, b"{}",
                         want={"status": "otp_sent"}) is None:
            return
        if await it.call(conn, "otp_finish", 200, "POST", base + "/otp/finish", token, self.finish_body,
                         want={"status": "succeeded"}) is None:
            return
        await it.call(conn, "validate", 200, "POST", base + "/validate", self.api_key,
                      want={"success": True, "method": "otp"})


def test_number(index: int) -> str:
    return f"{TEST_NUMBER_PREFIX}{index}"


async def open_sessions(args, url, count: int) -> list[str]:
    """Signs in `count` sessions one after the other (session c with test number c mod 10); their refresh tokens."""
    conn = await Connection.open(url.hostname, url.port)
    stats = Stats()
    headers = project_headers(args.project)
    tokens = []
    try:
        for c in range(count):
            token = await sign_in(Iteration(stats, time.perf_counter), conn, headers,
                                  start_body(test_number(c % MAX_TEST_NUMBERS)))
            if token is None:
                raise SystemExit(f"signing in the refresh scenario's sessions failed: {stats.samples}")
            tokens.append(token)
    finally:
        conn.close()
    return tokens


def make_drivers(args, url) -> list:
    """One driver per connection, made before the load processes fork (they inherit them)."""
    if args.scenario == "health":
        return [HealthDriver() for _ in range(args.connections)]
    if args.scenario == "push":
        devices = load_devices(args.devices)
        # Connection c uses devices c, c + C, c + 2C, … so no device is shared between connections.
        return [PushDriver(args, devices[c::args.connections] or [devices[c % len(devices)]])
                for c in range(args.connections)]
    if args.scenario == "signin":
        return [SignInDriver(args, test_number(c)) for c in range(args.connections)]
    if args.scenario == "possession":
        return [PossessionDriver(args, test_number(c % MAX_TEST_NUMBERS)) for c in range(args.connections)]
    began = time.monotonic()
    tokens = asyncio.run(open_sessions(args, url, args.connections))
    print(f"signed in {len(tokens)} sessions for the refresh run in {time.monotonic() - began:.1f} s",
          file=sys.stderr)
    return [RefreshDriver(args, token) for token in tokens]


async def worker_loop(driver, stats: Stats, start: float, end: float, url) -> None:
    conn = await Connection.open(url.hostname, url.port)
    await asyncio.sleep(max(0.0, start - time.time()))
    clock = time.perf_counter
    wall_offset = time.time() - clock()   # perf_counter -> wall time
    start_perf, end_perf = start - wall_offset, end - wall_offset

    while driver.alive:
        began = clock()
        if began >= end_perf:
            break
        it = Iteration(stats, clock)
        try:
            await driver.iterate(it, conn)
        except HTTPError as error:
            stats.socket_errors += 1
            stats.sample(f"socket: {error}")
            conn.close()
            if clock() >= end_perf or not driver.alive:
                break
            conn = await Connection.open(url.hostname, url.port)
            continue
        finished = clock()
        if finished > end_perf:
            break  # finished after the window closed: not counted (as wrk does)
        if began < start_perf:
            continue
        stats.requests += len(it.steps)
        for name, _ in it.steps:
            stats.step_requests[name] = stats.step_requests.get(name, 0) + 1
        if it.ok:
            stats.completed += 1
            stats.latencies.append(finished - began)
            for name, seconds in it.steps:
                stats.step_latencies.setdefault(name, []).append(seconds)
        else:
            stats.failed += 1
    conn.close()


def process_main(args, index: int, drivers: list, start: float, end: float, pipe) -> None:
    """One load process: its share of the connections in one event loop. Sends its Stats back as a dict."""
    try:
        url = urllib.parse.urlsplit(args.base_url)
        stats = Stats()
        mine = [driver for c, driver in enumerate(drivers) if c % args.processes == index]

        async def main():
            await asyncio.gather(*(worker_loop(driver, stats, start, end, url) for driver in mine))

        cpu_start = None

        async def runner():
            nonlocal cpu_start
            job = asyncio.ensure_future(main())
            await asyncio.sleep(max(0.0, start - time.time()))
            cpu_start = time.process_time()
            await job

        asyncio.run(runner())
        cpu_end = time.process_time()
        pipe.send({
            "latencies": stats.latencies, "steps": stats.step_latencies, "step_requests": stats.step_requests,
            "statuses": stats.statuses, "completed": stats.completed, "failed": stats.failed,
            "requests": stats.requests, "socket_errors": stats.socket_errors, "samples": stats.samples,
            "cpu_s": cpu_end - (cpu_start if cpu_start is not None else cpu_end),
        })
    except BaseException:
        pipe.send({"error": traceback.format_exc()})
    finally:
        pipe.close()


def proc_cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def context_switches(pid: int) -> int:
    """Context switches (voluntary + involuntary) of every thread of `pid` so far: each is a thread going to sleep
    or being preempted, so their count per request shows how many thread hand-offs a request takes."""
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/status") as f:
                for line in f:
                    if "ctxt_switches" in line:
                        total += int(line.split()[1])
        except FileNotFoundError:
            pass  # the thread exited meanwhile
    return total


def machine_cpu_seconds() -> float:
    with open("/proc/stat") as f:
        fields = f.readline().split()
    return (int(fields[1]) + int(fields[2]) + int(fields[3])) / os.sysconf("SC_CLK_TCK")


def percentile(sorted_values, pct):
    if not sorted_values:
        return 0.0
    rank = max(0, min(len(sorted_values) - 1, int(round(pct / 100 * len(sorted_values) + 0.5)) - 1))
    return sorted_values[rank]


def latency_summary(values_s):
    values = sorted(v * 1e6 for v in values_s)
    if not values:
        return {"mean": 0, "min": 0, "max": 0, "p50": 0, "p90": 0, "p99": 0, "p999": 0, "stdev": 0}
    mean = sum(values) / len(values)
    stdev = (sum((v - mean) ** 2 for v in values) / len(values)) ** 0.5
    return {"mean": round(mean, 1), "stdev": round(stdev, 1), "min": round(values[0], 1),
            "max": round(values[-1], 1), "p50": round(percentile(values, 50), 1),
            "p90": round(percentile(values, 90), 1), "p99": round(percentile(values, 99), 1),
            "p999": round(percentile(values, 99.9), 1)}


def run_main(args) -> int:
    if args.scenario == "push" and (not args.api_key or not args.devices):
        raise SystemExit("--scenario push needs --api-key and --devices")
    if args.scenario == "possession" and not args.api_key:
        raise SystemExit("--scenario possession needs --api-key")
    if args.scenario in ("signin", "refresh") and not args.project:
        raise SystemExit(f"--scenario {args.scenario} needs --project")
    connections_asked = args.connections
    if args.scenario == "signin" and args.connections > MAX_TEST_NUMBERS:
        # One test number per connection, and a project has at most 10.
        args.connections = MAX_TEST_NUMBERS
        print(f"signin: {args.connections} connections, one per test number ({connections_asked} asked)",
              file=sys.stderr)
    args.processes = max(1, min(args.processes, args.connections))
    url = urllib.parse.urlsplit(args.base_url)
    drivers = make_drivers(args, url)
    ctx = multiprocessing.get_context("fork")
    # Give every process time to open its connections before the common start.
    start = time.time() + args.setup_time
    end = start + args.duration
    procs, pipes = [], []
    for index in range(args.processes):
        parent_end, child_end = ctx.Pipe(duplex=False)
        proc = ctx.Process(target=process_main, args=(args, index, drivers, start, end, child_end))
        proc.start()
        child_end.close()
        procs.append(proc)
        pipes.append(parent_end)

    time.sleep(max(0.0, start - time.time()))
    server_before = proc_cpu_seconds(args.server_pid) if args.server_pid else 0.0
    switches_before = context_switches(args.server_pid) if args.server_pid else 0
    machine_before = machine_cpu_seconds()
    self_before = time.process_time()
    wall_before = time.time()
    time.sleep(max(0.0, end - time.time()))
    wall_after = time.time()
    server_after = proc_cpu_seconds(args.server_pid) if args.server_pid else 0.0
    switches_after = context_switches(args.server_pid) if args.server_pid else 0
    machine_after = machine_cpu_seconds()
    self_after = time.process_time()

    results = []
    for proc, pipe in zip(procs, pipes):
        try:
            results.append(pipe.recv())
        except EOFError:
            results.append({"error": f"load process {proc.pid} died without a result"})
        proc.join()
    errors = [r["error"] for r in results if "error" in r]
    if errors:
        for error in errors:
            print(error, file=sys.stderr)
        return 1

    latencies = [v for r in results for v in r["latencies"]]
    steps, step_requests = {}, {}
    for r in results:
        for name, values in r["steps"].items():
            steps.setdefault(name, []).extend(values)
        for name, count in r["step_requests"].items():
            step_requests[name] = step_requests.get(name, 0) + count
    statuses = {}
    for r in results:
        for key, count in r["statuses"].items():
            statuses[key] = statuses.get(key, 0) + count
    completed = sum(r["completed"] for r in results)
    failed = sum(r["failed"] for r in results)
    requests = sum(r["requests"] for r in results)
    load_cpu = sum(r["cpu_s"] for r in results) + (self_after - self_before)
    per_process_cpu = [r["cpu_s"] for r in results]
    wall = wall_after - wall_before
    duration_us = int(args.duration * 1e6)

    # Iterations per second: round trips for push, sign-ins (verify 200s), refreshes, possession flows (validate
    # 200s with success true), requests for health.
    result = {
        "scenario": f"{args.scenario}-py" if args.scenario == "health" else args.scenario,
        "client": "pushload.py",
        "threads": args.processes,
        "connections": args.connections,
        "requests": completed,
        "duration_us": duration_us,
        "requests_per_sec": completed / args.duration,
        "latency_us": latency_summary(latencies),
        # report.lua's statuses are per HTTP status; here "step status" (e.g. "create 201", "respond 200").
        "statuses": statuses,
        "non_2xx": failed,
        "socket_errors": {"connect": 0, "read": r_sum(results, "socket_errors"), "write": 0, "timeout": 0},
        "extra": {
            "iteration": ITERATION_NAMES[args.scenario][0],
            "iterations": ITERATION_NAMES[args.scenario][1],
            "http_requests": requests,
            "http_requests_per_sec": requests / args.duration,
            "connections_asked": connections_asked,
            "fetch": bool(args.fetch),
            "devices": count_lines(args.devices) if args.scenario == "push" else 0,
            "test_numbers": (min(args.connections, MAX_TEST_NUMBERS)
                             if args.scenario in ("signin", "refresh", "possession") else 0),
            # Per step: requests/s inside the window (whatever the answer), latency of the expected answers; the
            # steps in the order an iteration makes them (first seen), as the JSON line sorts its keys.
            "step_order": list(step_requests),
            "step_requests_per_sec": {name: count / args.duration for name, count in step_requests.items()},
            "step_latency_us": {name: latency_summary(values) for name, values in steps.items()},
            "load_cpu_s": round(load_cpu, 3),
            "load_cpu_pct_per_process": [round(100 * c / wall, 1) for c in per_process_cpu],
            "load_cpu_us_per_iteration": round(1e6 * load_cpu / completed, 1) if completed else None,
            "samples": [s for r in results for s in r["samples"]][:5],
        },
    }
    line = "BENCH_RESULT " + json.dumps(result, sort_keys=True)
    print(line)
    extra = result["extra"]
    print(f"{result['requests_per_sec']:.1f} {extra['iterations']}/s ({extra['http_requests_per_sec']:.1f} HTTP "
          f"req/s), p50 {result['latency_us']['p50'] / 1000:.2f} ms, p99 {result['latency_us']['p99'] / 1000:.2f} ms, "
          f"unexpected answers {failed}, socket errors {r_sum(results, 'socket_errors')}, client CPU "
          f"{extra['load_cpu_us_per_iteration']} us per {extra['iteration']}, per process "
          f"{extra['load_cpu_pct_per_process']}% of a core", file=sys.stderr)
    for sample in extra["samples"]:
        print(f"unexpected: {sample}", file=sys.stderr)
    if args.out:
        with open(args.out, "w") as f:
            f.write(line + "\n")
    if args.cpu_out:
        with open(args.cpu_out, "w") as f:
            f.write(f"{server_after - server_before:.3f} {load_cpu:.3f} {wall:.3f} "
                    f"{machine_after - machine_before:.3f} {switches_after - switches_before}\n")
    return 0


def count_lines(path):
    with open(path) as f:
        return sum(1 for line in f if line.strip())


def r_sum(results, key):
    return sum(r[key] for r in results)


# --- Self-test: client cost per round trip -------------------------------------------------------------------------

def selftest_main(args) -> int:
    device = Device("fac_" + "x" * 26, ec.generate_private_key(ec.SECP256R1()))
    hash_ = content_hash(MESSAGE)
    # The documented example: "Hi" with detail ("A", "") hashes 00000002 4869 00000001 41 00000000.
    expected = b64url(hashlib.sha256(bytes.fromhex("000000024869000000014100000000")).digest())
    assert content_hash("Hi", [("A", "")]) == expected, "contentHash does not follow the documented format"
    n = args.iterations
    began = time.process_time()
    for i in range(n):
        json.dumps({"factorId": device.factor_id, "message": MESSAGE})
        token = device.token()
        body = json.dumps({"status": "approved", "signature": device.answer(f"chl_{i:026d}", hash_)})
        json.loads('{"id":"chl_00000000000000000000000000","status":"pending"}')
    per = (time.process_time() - began) / n
    print(f"client crypto + JSON per round trip: {per * 1e6:.1f} us CPU "
          f"(2 ES256 signatures; ~{1 / per:.0f} round trips/s per core before HTTP)")
    print(f"token length {len(token)}, answer body length {len(body)}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)

    enroll = sub.add_parser("enroll")
    enroll.add_argument("base_url")
    enroll.add_argument("api_key")
    enroll.add_argument("count", type=int)
    enroll.add_argument("out_file")
    enroll.add_argument("--workers", type=int, default=8)
    enroll.add_argument("--platform", default="apns", choices=["apns", "fcm", "none"],
                        help="push platform of the factors (default apns: every challenge is pushed through the "
                             "outbox, to the console push sender when no APNs/FCM credentials are configured)")

    numbers = sub.add_parser("test-numbers")
    numbers.add_argument("base_url")
    numbers.add_argument("api_key")
    numbers.add_argument("--count", type=int, default=MAX_TEST_NUMBERS, choices=range(1, MAX_TEST_NUMBERS + 1),
                         metavar=f"1..{MAX_TEST_NUMBERS}")

    run = sub.add_parser("run")
    run.add_argument("base_url")
    run.add_argument("--scenario", choices=list(ITERATION_NAMES), required=True)
    run.add_argument("--duration", type=float, default=15)
    run.add_argument("--connections", type=int, default=32)
    run.add_argument("--processes", type=int, default=2)
    run.add_argument("--api-key", help="the project's API key (vk_…), for push and possession")
    run.add_argument("--devices")
    run.add_argument("--fetch", action="store_true", help="the device GETs the challenge before answering")
    run.add_argument("--project", help="the project's public id (prj_…), for signin and refresh")
    run.add_argument("--server-pid", type=int)
    run.add_argument("--setup-time", type=float, default=2.0, help="seconds to connect before the common start")
    run.add_argument("--out")
    run.add_argument("--cpu-out")

    selftest = sub.add_parser("selftest")
    selftest.add_argument("--iterations", type=int, default=5000)

    args = parser.parse_args()
    if args.command == "enroll":
        return enroll_main(args)
    if args.command == "test-numbers":
        return asyncio.run(test_numbers_main(args))
    if args.command == "run":
        return run_main(args)
    return selftest_main(args)


if __name__ == "__main__":
    sys.exit(main())
