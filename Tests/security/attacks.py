#!/usr/bin/env python3
"""The attack suite: the security review's findings, tried over the wire against a running `verity serve`.

Run by Tests/security/attacks.sh, which starts the server with the production limits (lowered where a case needs a
small number), creates a project and passes what this needs:

    python3 Tests/security/attacks.py BASE_URL API_KEY PROJECT_ID VERITY_BINARY DATA_DIR

Each case prints `ok - …`; the first failure prints `not ok - …` and exits 1.
"""
import http.client
import json
import re
import subprocess
import sys
import time
import urllib.parse

BASE, KEY, PROJECT, VERITY, DATA_DIR = sys.argv[1:6]
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

print(f"attacks: {passed} passed, 0 failed")
