#!/usr/bin/env python3
"""Enumeration over the wire: does sign-in tell a known login id from an unknown one, by answer or by time?

Against a running `verity serve` (rate limits lifted by the caller): N known users are created with the API key,
then `POST /v1/auth/otp/start` and a wrong `POST /v1/auth/otp/verify` are sent for known and unknown login ids,
interleaved (known, unknown, known, …) so that both see the same load and the same server state. Checks:

- the same status, the same body (with the masked destination and the ids taken out) and the same header names;
- the median latencies of known and unknown are within 25% of each other (over N pairs; the medians of interleaved
  samples are stable on a shared machine, unlike single timings).

    python3 Tests/security/enumeration.py BASE_URL API_KEY PROJECT_ID [N]

Prints `ok - …` lines and the medians; exits 1 on the first difference.
"""
import http.client
import json
import statistics
import sys
import time
import urllib.parse

BASE, KEY, PROJECT = sys.argv[1], sys.argv[2], sys.argv[3]
N = int(sys.argv[4]) if len(sys.argv) > 4 else 200
URL = urllib.parse.urlparse(BASE)
CONNECTION = http.client.HTTPConnection(URL.hostname, URL.port, timeout=10)
VOLATILE_HEADERS = {"date", "content-length", "x-request-id"}


def call(method, path, body, headers):
    started = time.perf_counter()
    CONNECTION.request(method, path, body=json.dumps(body), headers={"Content-Type": "application/json", **headers})
    response = CONNECTION.getresponse()
    data = response.read()
    elapsed = time.perf_counter() - started
    names = sorted(name.lower() for name, _ in response.getheaders() if name.lower() not in VOLATILE_HEADERS)
    return response.status, json.loads(data) if data else None, names, elapsed


def fail(message):
    print(f"not ok - {message}")
    sys.exit(1)


def shape(body):
    """The answer without what differs per request by design (ids, times, the masked number's last digits)."""
    if not isinstance(body, dict):
        return body
    return {key: ("…" if key in ("verificationId", "expiresAt", "maskedDestination", "instance") else value)
            for key, value in body.items()}


known = [f"+1415{2000000 + i:07d}" for i in range(N)]
unknown = [f"+1415{3000000 + i:07d}" for i in range(N)]
for number in known:
    status, body, _, _ = call("POST", "/v1/users", {"loginIds": [number]}, {"Authorization": f"Bearer {KEY}"})
    if status != 201:
        fail(f"creating the known user {number[:4]}…: {status} {body}")
print(f"ok - {N} known users created; {N} unknown login ids")

app = {"X-Verity-Project": PROJECT}
for step, body_of in (("otp/start", lambda n: {"loginId": n}),
                      ("otp/verify", lambda n: {"loginId": n, "code": "000000"})):
    timings = {"known": [], "unknown": []}
    answers = {"known": set(), "unknown": set()}
    for index in range(N):
        for kind, numbers in (("known", known), ("unknown", unknown)):
            status, body, names, elapsed = call("POST", f"/v1/auth/{step}", body_of(numbers[index]), app)
            timings[kind].append(elapsed)
            answers[kind].add(json.dumps([status, shape(body), names], sort_keys=True))
    if answers["known"] != answers["unknown"]:
        fail(f"{step}: known and unknown login ids get different answers: {answers}")
    (answer,) = answers["known"] if len(answers["known"]) == 1 else (sorted(answers["known"])[0],)
    status = json.loads(answer)[0]
    print(f"ok - {step}: the same answer ({status}, same body and headers) for known and unknown login ids")
    medians = {kind: statistics.median(values) * 1000 for kind, values in timings.items()}
    ratio = medians["known"] / medians["unknown"]
    line = (f"{step}: median {medians['known']:.2f} ms known vs {medians['unknown']:.2f} ms unknown "
            f"(ratio {ratio:.2f}, {N} interleaved pairs)")
    if not 0.8 <= ratio <= 1.25:
        fail(line + ": more than 25% apart")
    print(f"ok - {line}")
