#!/usr/bin/env python3
"""Load and checks for Tests/crash/crash.sh (standard library only).

    crash_load.py load   --base URL --key KEY --pid PID --out FILE [--threads N] [--kill-after S] [--max-starts N]
        Starts verifications and sends wrong codes to them from several threads; after --kill-after seconds it
        sends SIGKILL to PID (the server) and keeps going until every thread has seen the server gone. Writes
        to FILE what clients were told: every 201 (id -> number) and, per id, the number of `valid: false`
        answers. A request that failed with a connection error is unknown: it may or may not have happened.

    crash_load.py verify --base URL --key KEY --results FILE --verity BIN --log LOG [--log LOG …] [--wait S]
        Against the restarted server: every 201 exists, no attempt counter is lower than what clients saw,
        every started verification has an outbox message and all of them end up `sent`, and deliveries per
        message in the logs (duplicates are counted and reported; more than --max-duplicates fails).

Both print `ok - …` lines; a failed check prints `crash: FAILED: …` on stderr and exits 1.
"""

import argparse
import http.client
import json
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.parse

MAX_WRONG = 5  # VerificationService's attempt limit: the 5th wrong code answers valid:false, later ones 429.


def fail(message):
    print(f"crash: FAILED: {message}", file=sys.stderr)
    sys.exit(1)


def ok(message):
    print(f"ok - {message}", flush=True)


class Client:
    """One keep-alive connection; any transport error closes it and raises ConnectionError."""

    def __init__(self, base, key):
        url = urllib.parse.urlsplit(base)
        self.host, self.port = url.hostname, url.port
        self.headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
        self.connection = None

    def request(self, method, path, body=None):
        if self.connection is None:
            self.connection = http.client.HTTPConnection(self.host, self.port, timeout=15)
        try:
            payload = json.dumps(body) if body is not None else None
            self.connection.request(method, path, body=payload, headers=self.headers)
            response = self.connection.getresponse()
            data = response.read()
        except (OSError, http.client.HTTPException) as error:
            self.connection.close()
            self.connection = None
            raise ConnectionError(str(error)) from error
        try:
            parsed = json.loads(data) if data else None
        except ValueError:
            parsed = None
        return response.status, parsed


def run_load(args):
    lock = threading.Lock()
    started = {}  # id -> number, every 201
    wrong = {}  # id -> valid:false answers seen
    refused = set()  # ids that answered 429 max_check_attempts_reached
    open_ids = []  # ids that may still take a wrong code
    counters = {"starts": 0, "checks": 0, "unknown": 0, "other": 0}
    unexpected = []
    next_number = [0]
    killed = threading.Event()
    kill_time = [None]
    stop = threading.Event()

    def number():
        with lock:
            next_number[0] += 1
            if next_number[0] > args.max_starts:
                return None
            return f"+1415{2000000 + next_number[0]:07d}"

    def worker(seed):
        rng = random.Random(seed)
        client = Client(args.base, args.key)
        while not stop.is_set():
            with lock:
                candidates = list(open_ids)
            to = None
            if not candidates or rng.random() < 0.35:
                to = number()
            try:
                if to is not None:
                    status, body = client.request("POST", "/v1/verifications", {"to": to, "channel": "sms"})
                    with lock:
                        if status == 201 and body and "id" in body:
                            started[body["id"]] = to
                            wrong.setdefault(body["id"], 0)
                            open_ids.append(body["id"])
                            counters["starts"] += 1
                        else:
                            counters["other"] += 1
                            unexpected.append(f"start {to}: {status} {body}")
                elif candidates:
                    vid = rng.choice(candidates)
                    status, body = client.request("POST", "/v1/verifications/check", {"id": vid, "code": "000000"})
                    with lock:
                        counters["checks"] += 1
                        if status == 200 and body and body.get("valid") is False:
                            wrong[vid] += 1
                            if body.get("status") != "pending" and vid in open_ids:
                                open_ids.remove(vid)
                        elif status == 429:
                            refused.add(vid)
                            if vid in open_ids:
                                open_ids.remove(vid)
                        else:
                            counters["other"] += 1
                            unexpected.append(f"check {vid}: {status} {body}")
                else:
                    time.sleep(0.01)  # the start cap is reached and nothing is left to check
            except ConnectionError:
                with lock:
                    counters["unknown"] += 1
                if killed.is_set():
                    return  # the server is gone: this request is unknown, and so is any later one
                time.sleep(0.01)

    threads = [threading.Thread(target=worker, args=(i,), daemon=True) for i in range(args.threads)]
    began = time.monotonic()
    for thread in threads:
        thread.start()
    time.sleep(args.kill_after)
    with lock:
        at_kill = dict(counters)
    os.kill(args.pid, signal.SIGKILL)
    kill_time[0] = time.monotonic() - began
    killed.set()
    for thread in threads:
        thread.join(timeout=20)
    stop.set()

    if unexpected:
        fail(f"{len(unexpected)} unexpected answers under load, e.g. {unexpected[:3]}")
    with open(args.out, "w") as out:
        json.dump({"started": started, "wrong": wrong, "refused": sorted(refused), "counters": counters}, out)
    seen = sum(1 for v in wrong.values() if v > 0)
    if counters["starts"] < 20 or seen < 10:
        fail(f"too little load before the kill to prove anything: {counters}")
    ok(
        f"load from {args.threads} threads, kill -9 after {kill_time[0]:.1f}s: {counters['starts']} starts answered 201, "
        f"{counters['checks']} wrong checks answered ({sum(wrong.values())} valid:false, {len(refused)} ids refused "
        f"with 429), {counters['unknown']} requests unknown (connection error); "
        f"{at_kill['starts']} starts and {at_kill['checks']} checks had been answered when the kill was sent"
    )


def outbox(args):
    output = subprocess.run(
        [args.verity, "outbox", "list", "--json", "--limit", "1000"], check=True, capture_output=True, text=True
    ).stdout
    return json.loads(output)


def run_verify(args):
    with open(args.results) as source:
        results = json.load(source)
    started, wrong = results["started"], results["wrong"]
    client = Client(args.base, args.key)

    # 1. Every 201 survived.
    missing, low, states = [], [], {}
    for vid, to in started.items():
        status, body = client.request("GET", f"/v1/verifications/{urllib.parse.quote(vid)}")
        if status != 200 or not body or body.get("id") != vid or body.get("to") != to:
            missing.append(f"{vid}: {status} {body}")
            continue
        states[body["status"]] = states.get(body["status"], 0) + 1
        # 2. Attempt counters never behind what clients were told.
        if body["checkAttempts"] < wrong.get(vid, 0) or body["checkAttempts"] > MAX_WRONG:
            low.append(f"{vid}: checkAttempts {body['checkAttempts']}, clients saw {wrong.get(vid, 0)} valid:false")
        elif vid in results["refused"] and body["checkAttempts"] != MAX_WRONG:
            low.append(f"{vid}: a client got 429 but checkAttempts is {body['checkAttempts']}")
    if missing:
        fail(f"{len(missing)} of {len(started)} verifications that got a 201 are gone after the crash: {missing[:5]}")
    ok(f"all {len(started)} verifications that got a 201 exist after the restart ({states})")
    if low:
        fail(f"{len(low)} attempt counters are behind what clients saw: {low[:5]}")
    checked = sum(1 for v in wrong.values() if v > 0)
    ok(
        f"no attempt counter is lower than the valid:false answers clients saw ({checked} ids checked, "
        f"{sum(wrong.values())} answers; {len(results['refused'])} ids that answered 429 are at {MAX_WRONG})"
    )

    # 3. Every started verification has its message, and the restarted worker sends all of them.
    wanted = set(started.values())
    began = time.monotonic()
    while True:
        messages = outbox(args)
        if len(messages) >= 1000:
            fail("outbox list hit its 1000-message limit; lower --max-starts")
        by_to = {}
        for message in messages:
            by_to.setdefault(message["to"], []).append(message)
        lost = sorted(wanted - set(by_to))
        if lost:
            fail(f"{len(lost)} verifications that got a 201 have no outbox message: {lost[:5]}")
        unsent = [m for to in wanted for m in by_to[to] if m["status"] != "sent"]
        if not unsent or time.monotonic() - began > args.wait:
            break
        time.sleep(1)
    waited = time.monotonic() - began
    if unsent:
        fail(
            f"{len(unsent)} messages still not sent {waited:.0f}s after the restart: "
            f"{[(m['id'], m['status'], m['attempts']) for m in unsent[:5]]}"
        )
    extra = len(messages) - sum(len(by_to[to]) for to in wanted)
    ok(
        f"every verification that got a 201 has its outbox message ({len(wanted)}), all sent "
        f"{waited:.0f}s after the restart; {extra} more messages belong to starts whose answer was lost in the kill"
    )

    # 4. Deliveries in the logs of the killed and the restarted server.
    deliveries, per_log = {}, []
    pattern = re.compile(r"\bmessage=(msg_[0-9a-z]+)")  # the metadata comes before the text in a log line
    for log in args.log:
        counts = {}
        with open(log, errors="replace") as source:
            for line in source:
                match = pattern.search(line) if "Console delivery" in line else None
                if match:
                    deliveries[match.group(1)] = deliveries.get(match.group(1), 0) + 1
                    counts[match.group(1)] = counts.get(match.group(1), 0) + 1
        per_log.append(counts)
    # A repeat may only come from the crash: one server never delivers a message twice.
    twice = [(log, mid) for log, counts in zip(args.log, per_log) for mid, n in counts.items() if n > 1]
    if twice:
        fail(f"{len(twice)} messages were delivered twice by one server (not a crash repeat): {twice[:5]}")
    sent = [m for m in messages if m["status"] == "sent"]
    undelivered = [m["id"] for m in sent if m["id"] not in deliveries]
    if undelivered:
        fail(f"{len(undelivered)} messages are marked sent without a `Console delivery` log line: {undelivered[:5]}")
    duplicated = {mid: n for mid, n in deliveries.items() if n > 1}
    duplicates = sum(n - 1 for n in duplicated.values())
    if duplicates > args.max_duplicates:
        fail(f"{duplicates} duplicate deliveries (more than {args.max_duplicates}): {list(duplicated.items())[:5]}")
    ok(
        f"each of the {len(sent)} sent messages has a `Console delivery` line; {duplicates} duplicate deliveries "
        f"across the crash (at-least-once; at most {args.max_duplicates} tolerated)"
        + (f": {duplicated}" if duplicated else "")
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="mode", required=True)
    load = sub.add_parser("load")
    load.add_argument("--base", required=True)
    load.add_argument("--key", required=True)
    load.add_argument("--pid", type=int, required=True)
    load.add_argument("--out", required=True)
    load.add_argument("--threads", type=int, default=4)
    load.add_argument("--kill-after", type=float, default=3.0)
    load.add_argument("--max-starts", type=int, default=900)  # outbox list shows at most 1000
    verify = sub.add_parser("verify")
    verify.add_argument("--base", required=True)
    verify.add_argument("--key", required=True)
    verify.add_argument("--results", required=True)
    verify.add_argument("--verity", required=True)
    verify.add_argument("--log", action="append", required=True)
    verify.add_argument("--wait", type=float, default=80.0)
    verify.add_argument("--max-duplicates", type=int, default=2)
    args = parser.parse_args()
    run_load(args) if args.mode == "load" else run_verify(args)


if __name__ == "__main__":
    main()
