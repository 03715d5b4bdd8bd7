#!/usr/bin/env python3
"""The checks of Tests/cluster/cluster.sh: three Verity nodes on one PostgreSQL database, behind nginx.

cluster.sh starts everything and passes it in the environment:
    CLUSTER_PROXY       nginx's base URL (round-robin over the nodes)
    CLUSTER_NODES       the three nodes' base URLs, space-separated
    CLUSTER_NODE_PIDS   their process ids (the last property kills one with SIGKILL)
    CLUSTER_NODE_LOGS   their log files (VERITY_LOG_LEVEL=info)
    CLUSTER_API_KEY     the project's API key
    CLUSTER_WORK        a scratch directory
    VERITY_BIN, VERITY_DATABASE_URL, VERITY_MASTER_KEY   for `verity outbox list`
The servers run with VERITY_RATE_LIMIT_DESTINATION=3/h. Prints `ok - …` per property; exits 1 on the first
failure. Only the standard library, plus `cryptography` through bench/lib/pushload.py for the push property.
"""

import argparse
import contextlib
import http.client
import io
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.parse
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "bench", "lib"))

PROXY = os.environ["CLUSTER_PROXY"]
NODES = os.environ["CLUSTER_NODES"].split()
NODE_PIDS = [int(pid) for pid in os.environ["CLUSTER_NODE_PIDS"].split()]
NODE_LOGS = os.environ["CLUSTER_NODE_LOGS"].split()
API_KEY = os.environ["CLUSTER_API_KEY"]
WORK = os.environ["CLUSTER_WORK"]
VERITY = os.environ["VERITY_BIN"]

passed = 0


class Failure(Exception):
    pass


def ok(text: str) -> None:
    global passed
    passed += 1
    print(f"ok - {text}", flush=True)


def check(condition: bool, text: str) -> None:
    if not condition:
        raise Failure(text)


def call(base: str, method: str, path: str, body=None, token: str | None = API_KEY, timeout: float = 30):
    """One request on a fresh connection. Returns (status, parsed JSON or raw text or None)."""
    url = urllib.parse.urlsplit(base)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=timeout)
    try:
        headers = {}
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        conn.request(method, path, body=data, headers=headers)
        response = conn.getresponse()
        raw = response.read()
        try:
            payload = json.loads(raw) if raw else None
        except ValueError:
            payload = raw.decode("utf-8", "replace")
        return response.status, payload
    finally:
        conn.close()


def concurrently(jobs):
    """Runs the callables at once (released together by a barrier); returns their results in order."""
    barrier = threading.Barrier(len(jobs))

    def run(job):
        barrier.wait()
        return job()

    with ThreadPoolExecutor(max_workers=len(jobs)) as pool:
        return list(pool.map(run, jobs))


def start(base: str, to: str, expect=201) -> dict:
    status, payload = call(base, "POST", "/v1/verifications", {"to": to, "channel": "sms"})
    check(status == expect, f"start to {to} via {base} answered {status}: {payload}")
    return payload


def outbox(to: str | None = None, limit: int = 1000) -> list:
    command = [VERITY, "outbox", "list", "--json", "--limit", str(limit)]
    if to is not None:
        command += ["--to", to]
    done = subprocess.run(command, capture_output=True, text=True)
    check(done.returncode == 0, f"verity outbox list failed: {done.stderr}")
    return json.loads(done.stdout)


def code_for(to: str) -> str:
    """The code of the newest sent message to `to`, read as quickstart.sh does."""
    for _ in range(100):
        sent = [m for m in outbox(to) if m["status"] == "sent"]
        if sent:
            return re.search(r"\d{6}", sent[0]["body"]).group()
        time.sleep(0.1)
    raise Failure(f"no sent message to {to} in the outbox")


def wrong_code(code: str) -> str:
    return f"{(int(code) + 1) % 1_000_000:06d}"


# --- Properties ----------------------------------------------------------------------------------------------------

def check_any_node():
    for index, node in enumerate(NODES):
        to = f"+1415555010{index}"
        started = start(NODES[(index + 1) % 3], to)
        code = code_for(to)
        status, payload = call(node, "POST", "/v1/verifications/check", {"to": to, "code": code})
        check(status == 200 and payload.get("valid") is True and payload.get("status") == "approved",
              f"check on node {index + 1} of a start on node {(index + 1) % 3 + 1} answered {status}: {payload}")
        status, payload = call(PROXY, "GET", f"/v1/verifications/{started['id']}")
        check(status == 200 and payload["status"] == "approved", f"GET after approval answered {status}: {payload}")
    to = "+14155550110"
    start(PROXY, to)
    status, payload = call(PROXY, "POST", "/v1/verifications/check", {"to": to, "code": code_for(to)})
    check(status == 200 and payload.get("valid") is True, f"check through nginx answered {status}: {payload}")
    ok("a verification started on one node is checked on another (each pair, and through nginx)")


def check_attempt_limit():
    to = "+14155550120"
    verification = start(PROXY, to)
    code = code_for(to)
    wrong = wrong_code(code)
    jobs = [lambda i=i: call(NODES[i % 3], "POST", "/v1/verifications/check", {"id": verification["id"], "code": wrong})
            for i in range(100)]
    results = concurrently(jobs)
    answers = Counter(
        (status, payload.get("valid") if status == 200 else payload.get("code") if isinstance(payload, dict) else None)
        for status, payload in results)
    status, shown = call(PROXY, "GET", f"/v1/verifications/{verification['id']}")
    check(status == 200, f"GET answered {status}: {shown}")
    check(shown["checkAttempts"] == 5 and shown["status"] == "max_attempts_reached",
          f"after 100 concurrent wrong checks the verification is {shown}; answers {dict(answers)}")
    check(answers[(200, False)] == 5 and answers[(429, "max_check_attempts_reached")] == 95,
          f"100 concurrent wrong checks answered {dict(answers)}, not 5 x 200 valid:false and 95 x 429")
    # The right code no longer approves.
    status, payload = call(NODES[0], "POST", "/v1/verifications/check", {"id": verification["id"], "code": code})
    check(status == 429 or (status == 200 and payload.get("valid") is False),
          f"the right code after the limit answered {status}: {payload}")
    ok("100 concurrent wrong checks over 3 nodes: 5 x 200 valid:false, 95 x 429; checkAttempts 5, "
       "max_attempts_reached")


def check_single_approval():
    to = "+14155550130"
    verification = start(PROXY, to)
    code = code_for(to)
    jobs = [lambda i=i: call(NODES[i % 3], "POST", "/v1/verifications/check", {"to": to, "code": code})
            for i in range(20)]
    results = concurrently(jobs)
    approved = [p for s, p in results if s == 200 and p.get("valid") is True]
    not_found = [p for s, p in results if s == 404]
    others = [(s, p) for s, p in results if not (s == 200 and p.get("valid") is True) and s != 404]
    check(len(approved) == 1 and len(not_found) == 19,
          f"20 concurrent right checks: {len(approved)} valid:true, {len(not_found)} x 404, others {others[:3]}")
    status, shown = call(PROXY, "GET", f"/v1/verifications/{verification['id']}")
    check(status == 200 and shown["status"] == "approved" and shown["checkAttempts"] <= 1,
          f"after the concurrent checks the verification is {shown}")
    ok("20 concurrent right checks over 3 nodes approve exactly once (1 valid:true, 19 x 404)")


def check_outbox_once():
    destinations = [f"+141555502{i:02d}" for i in range(30)]
    concurrently([lambda to=to: start(PROXY, to) for to in destinations])
    wanted = set(destinations)
    deadline = time.time() + 30
    while True:
        messages = [m for m in outbox() if m["to"] in wanted]
        if len(messages) == 30 and all(m["status"] == "sent" for m in messages):
            break
        if time.time() > deadline:
            states = Counter(m["status"] for m in messages)
            raise Failure(f"after 30 s the outbox holds {len(messages)} of 30 messages: {dict(states)}")
        time.sleep(0.2)
    check(len({m["id"] for m in messages}) == 30, "the outbox does not hold 30 distinct messages")
    # Let any duplicate delivery that is still under way reach the logs.
    time.sleep(1)
    deliveries = Counter()
    per_node = []
    for path in NODE_LOGS:
        with open(path, errors="replace") as log:
            found = [re.search(r"\bmessage=(msg_\w+)", line).group(1)
                     for line in log if "Console delivery" in line and "message=msg_" in line]
        found = [m for m in found if m in {msg["id"] for msg in messages}]
        per_node.append(len(found))
        deliveries.update(found)
    twice = {m: n for m, n in deliveries.items() if n != 1}
    missing = [m["id"] for m in messages if m["id"] not in deliveries]
    check(not twice and not missing, f"deliveries in the node logs: more than once {twice}, never {missing}")
    attempts = [m["attempts"] for m in messages if m["attempts"] != 1]
    check(not attempts, f"some messages took several attempts: {attempts}")
    ok(f"30 outbox messages sent exactly once in total by the nodes' workers (per node {per_node})")


def check_rate_limit():
    to = "+14155550140"
    first = start(NODES[0], to)
    second = start(NODES[1], to)
    third = start(PROXY, to)
    check(first["id"] == second["id"] == third["id"] and third["sendAttempts"] == 3,
          f"three starts while pending did not re-send one verification: {first}, {second}, {third}")
    for base in NODES[2], PROXY:
        status, payload = call(base, "POST", "/v1/verifications", {"to": to, "channel": "sms"})
        check(status == 429 and payload.get("code") == "rate_limited",
              f"the 4th start via {base} answered {status}: {payload}")
    # Another destination is not affected.
    start(NODES[2], "+14155550141")
    ok("VERITY_RATE_LIMIT_DESTINATION=3/h holds across nodes: starts on nodes 1, 2 and nginx, the 4th (node 3 "
       "or nginx) gets 429 rate_limited")


def check_push():
    import pushload  # bench/lib: enrollment and ES256 signing with `cryptography`

    devices_file = os.path.join(WORK, "devices.jsonl")
    node_a, node_b, node_c = NODES
    with contextlib.redirect_stderr(io.StringIO()) as said:
        enrolled = pushload.enroll_main(argparse.Namespace(
            base_url=node_a, api_key=API_KEY, count=1, out_file=devices_file, workers=1, platform="none"))
    check(enrolled == 0, f"enrollment failed: {said.getvalue()}")
    device = pushload.load_devices(devices_file)[0]
    status, challenge = call(node_a, "POST", "/v1/challenges",
                             {"factorId": device.factor_id, "message": pushload.MESSAGE})
    check(status == 201 and challenge.get("status") == "pending", f"challenge on node A answered {status}: {challenge}")
    path = f"/v1/device/factors/{device.factor_id}/challenges/{challenge['id']}"
    status, shown = call(node_b, "GET", path, token=device.token())
    check(status == 200 and shown["contentHash"] == pushload.content_hash(pushload.MESSAGE),
          f"the device's fetch on node B answered {status}: {shown}")
    answer = {"status": "approved", "signature": device.answer(challenge["id"], shown["contentHash"])}
    status, responded = call(node_b, "POST", path + "/respond", answer, token=device.token())
    check(status == 200 and responded.get("status") == "approved", f"respond on node B answered {status}: {responded}")
    status, read = call(node_c, "GET", f"/v1/challenges/{challenge['id']}")
    check(status == 200 and read["status"] == "approved" and read.get("respondedFactorId") == device.factor_id,
          f"node C reads the challenge as {status}: {read}")
    # A second answer on node C is refused: the first one stuck.
    again = {"status": "denied", "signature": device.answer(challenge["id"], shown["contentHash"], "denied")}
    status, payload = call(node_c, "POST", path + "/respond", again, token=device.token())
    check(status == 409 and payload.get("code") == "challenge_already_answered",
          f"a second answer on node C answered {status}: {payload}")
    ok("a push challenge created on node A is answered on node B and read approved on node C")


def check_key_revocation():
    """Every node caches API keys (PostgreSQL notifies them of changes): a key revoked with the CLI, another process
    on another connection, must be refused by all three nodes at once."""
    project = os.environ["CLUSTER_PROJECT"]
    done = subprocess.run([VERITY, "admin", "key", "create", "--project", project, "--name", "revoked", "--json"],
                          capture_output=True, text=True)
    check(done.returncode == 0, f"verity admin key create failed: {done.stderr}")
    created = json.loads(done.stdout)
    secret, key_id = created["secret"], created["key"]["id"]
    for _ in range(3):  # every node has the key in its cache
        for node in NODES:
            status, payload = call(node, "GET", "/v1/project", token=secret)
            check(status == 200, f"the new key on {node} answered {status}: {payload}")
    done = subprocess.run([VERITY, "admin", "key", "revoke", key_id, "--project", project],
                          capture_output=True, text=True)
    check(done.returncode == 0, f"verity admin key revoke failed: {done.stderr}")
    revoked_at = time.monotonic()
    waited = {}
    for node in NODES:
        while True:
            status, payload = call(node, "GET", "/v1/project", token=secret)
            if status == 401:
                waited[node] = time.monotonic() - revoked_at
                break
            check(status == 200, f"the key on {node} answered {status}: {payload}")
            check(time.monotonic() - revoked_at < 5, f"{node} still takes the key revoked 5 s ago")
            time.sleep(0.005)
    status, _ = call(PROXY, "GET", "/v1/project")
    check(status == 200, f"the project's first key stopped working too: {status}")
    slowest = max(waited.values()) * 1000
    ok(f"a key revoked with the CLI is refused by all three caching nodes (the last {slowest:.0f} ms after the "
       f"revoke command returned); the project's other key still works")


def check_node_death():
    victim = 2  # node 3
    destinations = [f"+141555503{i:02d}" for i in range(90)]
    results = [None] * len(destinations)
    issued = threading.Semaphore(0)

    def one(index):
        issued.release()
        try:
            results[index] = call(PROXY, "POST", "/v1/verifications", {"to": destinations[index], "channel": "sms"},
                                  timeout=15)
        except OSError as error:
            results[index] = (None, str(error))

    with ThreadPoolExecutor(max_workers=10) as pool:
        futures = [pool.submit(one, i) for i in range(len(destinations))]
        for _ in range(30):
            issued.acquire()
        os.kill(NODE_PIDS[victim], signal.SIGKILL)
        killed_at = sum(1 for r in results if r is not None)
        for future in futures:
            future.result()
    created = [p for s, p in results if s == 201]
    statuses = Counter(s for s, _ in results)
    check(len(created) >= 60, f"only {len(created)} of 90 starts got 201 after the kill: {dict(statuses)}")
    survivors = [n for i, n in enumerate(NODES) if i != victim]
    lost = []
    for n, verification in enumerate(created):
        for base in (survivors[n % 2], PROXY):
            status, payload = call(base, "GET", f"/v1/verifications/{verification['id']}")
            if status != 200 or payload.get("id") != verification["id"]:
                lost.append((verification["id"], base, status))
    check(not lost, f"starts that got 201 are missing after the kill: {lost[:5]} ({len(lost)} in all)")
    ok(f"node 3 killed (SIGKILL) after {killed_at} of 90 answered starts through nginx: all {len(created)} "
       f"201s exist on the surviving nodes (answers {dict(statuses)})")


def main() -> int:
    properties = [check_any_node, check_attempt_limit, check_single_approval, check_outbox_once, check_rate_limit,
                  check_push, check_key_revocation, check_node_death]
    only = sys.argv[1:]
    for prop in properties:
        if only and prop.__name__ not in only:
            continue
        try:
            prop()
        except Failure as failure:
            print(f"cluster: {prop.__name__}: {failure}", file=sys.stderr)
            return 1
    print(f"cluster: {passed} passed, 0 failed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
