#!/usr/bin/env python3
"""How many statements PostgreSQL runs for one push answer (`POST …/challenges/{id}/respond`): starts `verity serve`
on a PostgreSQL database, enrolls a device, answers ROUNDS challenges, and reads what the server logged for each
answer with `log_statement = 'all'` (set on that database only, and reset at the end).

    pgstatements.py --bin .build/debug/verity --database-url postgres://postgres@127.0.0.1:55432/verity_pgpush \\
        --log /tmp/devpg/log [--rounds 6] [--webhook]

The database's `public` schema is dropped and made again: give it a scratch database. Each answer is bracketed by
two marker statements; between them the script keeps the statements of the answer (reads of the factor or the
challenge, the replay log, the challenge update, the webhook look-up, outbox inserts, and the BEGIN/COMMIT of a
transaction holding any of these, grouped by backend pid) and leaves out what housekeeping and the outbox worker
ran meanwhile. The first rounds prepare statements on fresh connections, so the last round is the steady count.
"""

import argparse
import base64
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pushload import Device, b64url, compact_json, content_hash  # noqa: E402
from cryptography.hazmat.primitives import serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import ec  # noqa: E402

LINE = re.compile(r"^\d{4}-\d\d-\d\d [\d:.]+ \w+ \[(\d+)\] (\w+):  (.*)$")
ANSWER = re.compile(r"FROM factors|device_token_uses \(|UPDATE challenges SET status = \$|webhook_url|WITH hook|"
                    r"INSERT INTO outbox|FROM challenges WHERE id")


def psql(url: str, sql: str) -> None:
    subprocess.run(["psql", url, "-qAtc", sql], check=True, stdout=subprocess.DEVNULL,
                   env=dict(os.environ, PGOPTIONS="-c client_min_messages=warning"))


def call(base: str, method: str, path: str, token: str, payload=None):
    request = urllib.request.Request(base + path, method=method,
                                     data=json.dumps(payload).encode() if payload is not None else None,
                                     headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


def statements(log_text: str, start: str, end: str) -> list[tuple[str, str]]:
    """(pid, text) of each statement logged between the two markers."""
    found, inside = [], False
    for line in log_text.splitlines():
        match = LINE.match(line)
        if not match:
            if inside and found:  # a statement's next line
                found[-1] = (found[-1][0], found[-1][1] + " " + line.strip())
            continue
        pid, level, text = match.groups()
        if start in text:
            inside = True
            continue
        if end in text:
            break
        if inside and level == "LOG" and (text.startswith("statement:") or text.startswith("execute")):
            found.append((pid, text.split(":", 1)[1].strip()))
    return found


def answer_statements(found: list[tuple[str, str]]) -> list[str]:
    """The statements of the answer: those matching ANSWER, and whole transactions (by pid) holding one."""
    kept, open_transactions = [], {}
    for pid, text in found:
        upper = text.upper()
        if upper.startswith("BEGIN"):
            open_transactions[pid] = [text]
        elif pid in open_transactions:
            open_transactions[pid].append(text)
            if upper.startswith("COMMIT") or upper.startswith("ROLLBACK"):
                group = open_transactions.pop(pid)
                if any(ANSWER.search(statement) for statement in group):
                    kept.extend(group)
        elif ANSWER.search(text):
            kept.append(text)
    return kept


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", required=True)
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--log", default="/tmp/devpg/log")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--port", type=int, default=18931)
    parser.add_argument("--webhook", action="store_true", help="give the project a webhook (its events are never delivered)")
    args = parser.parse_args()
    database = args.database_url.split("?")[0].rsplit("/", 1)[1]

    psql(args.database_url, "DROP SCHEMA IF EXISTS public CASCADE; CREATE SCHEMA public")
    psql(args.database_url, f"ALTER DATABASE {database} SET log_statement = 'all'")
    work = tempfile.mkdtemp(prefix="verity-pgstatements.")
    env = dict(os.environ, VERITY_DATABASE_URL=args.database_url, VERITY_DATA_DIR=work, VERITY_LOG_LEVEL="warning")
    server = subprocess.Popen([args.bin, "serve", "--port", str(args.port)], env=env,
                              stdout=open(os.path.join(work, "serve.log"), "w"), stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{args.port}"
    try:
        for _ in range(300):
            try:
                urllib.request.urlopen(base + "/health", timeout=1)
                break
            except OSError:
                time.sleep(0.1)
        created = json.loads(subprocess.run([args.bin, "admin", "project", "create", "--name", "Acme", "--json"],
                                            env=env, check=True, capture_output=True, text=True).stdout)
        api_key, project = created["apiKey"], created["project"]["id"]
        if args.webhook:
            subprocess.run([args.bin, "admin", "project", "webhook", project, "--url", "https://hooks.example.com/verity"],
                           env=env, check=True, capture_output=True)
        _, minted = call(base, "POST", "/v1/enrollment-tokens", api_key, {"userId": "jane"})
        key = ec.generate_private_key(ec.SECP256R1())
        spki = key.public_key().public_bytes(serialization.Encoding.DER,
                                             serialization.PublicFormat.SubjectPublicKeyInfo)
        _, enrolled = call(base, "POST", "/v1/device/factors", minted["token"], {
            "publicKey": base64.b64encode(spki).decode(), "friendlyName": "Phone", "pushPlatform": "none"})
        device = Device(enrolled["factor"]["id"], key)
        proof = device.sign(b64url(compact_json({"alg": "ES256", "kid": device.factor_id, "typ": "JWT"})),
                            {"factorId": device.factor_id, "nonce": enrolled["nonce"]})
        call(base, "POST", f"/v1/device/factors/{device.factor_id}/verify", minted["token"], {"signature": proof})

        marks = []
        for round_ in range(args.rounds):
            status, challenge = call(base, "POST", "/v1/challenges", api_key,
                                     {"factorId": device.factor_id, "message": "Sign in?"})
            assert status == 201, challenge
            signature = device.answer(challenge["id"], content_hash("Sign in?"))
            token = device.token()
            tag = f"{os.getpid()}-{round_}"
            psql(args.database_url, f"SELECT 'verity-mark start {tag}'")
            status, answered = call(base, "POST", f"/v1/device/factors/{device.factor_id}/challenges/"
                                    f"{challenge['id']}/respond", token, {"status": "approved", "signature": signature})
            time.sleep(0.3)
            psql(args.database_url, f"SELECT 'verity-mark end {tag}'")
            assert status == 200, answered
            marks.append(tag)
        time.sleep(0.5)
    finally:
        server.terminate()
        server.wait()
        psql(args.database_url, f"ALTER DATABASE {database} RESET log_statement")

    with open(args.log, errors="replace") as log:
        text = log.read()
    rounds = [answer_statements(statements(text, f"verity-mark start {tag}", f"verity-mark end {tag}"))
              for tag in marks]
    for number, kept in enumerate(rounds, start=1):
        print(f"round {number}: {len(kept)} statements")
        # The last round, and any that differs from it.
        if number == len(rounds) or len(kept) != len(rounds[-1]):
            for statement in kept:
                print("   ", " ".join(statement.split())[:160])
    return 0


if __name__ == "__main__":
    sys.exit(main())
