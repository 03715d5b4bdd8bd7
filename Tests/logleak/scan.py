#!/usr/bin/env python3
"""Checks the logs of a whole test run for leaked secrets.

`VERITY_TEST_LEAK_DIR=DIR swift test` makes every server under test append its log lines (every level, metadata
included) to DIR/logs-<pid>.txt, and every secret the tests handled (API keys, codes, instant-link tokens, session
and refresh tokens, TOTP secrets) to DIR/secrets-<pid>.txt. This script fails if any log line holds:

- one of those secrets;
- anything shaped like a credential, whoever made it: a session JWT (`eyJ….eyJ…`), a refresh (`vrt_`), possession
  (`vpt_`), enrollment (`vet_`) or API key (`vk_`) secret;
- a full phone number in E.164 form (destinations are logged masked, `+1********00`).

    python3 Tests/logleak/scan.py DIR
"""
import glob
import os
import re
import sys

TOKEN = re.compile(r"[A-Za-z0-9_\-+.~]+")
# Numbers of PostgreSQL's own in PostgresNIO's trace: the server's cancel key (a process id and a key), the process
# id of the backend that sent a notification, and a row description's table OID. They are never a test's secret,
# though a process id can equal a 4- or 6-digit code a test handled (a CI run's process ids pass 350000), and the OID
# counter of a long run passes 6-digit codes such as 123456.
NOT_OURS = re.compile(r"backendKeyData\(processID: \d+, secretKey: -?\d+\)|backendPID: \d+|tableOID: \d+")
SHAPES = {
    "session JWT": re.compile(r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}"),
    "refresh token": re.compile(r"\bvrt_[A-Za-z0-9]{8,}"),
    "possession token": re.compile(r"\bvpt_[A-Za-z0-9_]{8,}\.[A-Za-z0-9_-]{8,}"),
    "enrollment token": re.compile(r"\bvet_[A-Za-z0-9]{16,}"),
    "API key": re.compile(r"\bvk_[a-z0-9]{40,}"),
    "full phone number": re.compile(r"\+[1-9]\d{7,14}\b"),
}


def mask(text, secret):
    return text.replace(secret, secret[:2] + "…" + f"({len(secret)} chars)")


def main(directory):
    secrets = set()
    for path in glob.glob(os.path.join(directory, "secrets-*.txt")):
        with open(path, encoding="utf-8", errors="replace") as handle:
            secrets.update(line.rstrip("\n") for line in handle if len(line.strip()) >= 4)
    # Secrets are matched as whole tokens (a code is not found inside an id or a port), and also by the last part
    # of a dotted token: a JWT's signature or an instant link's secret alone is still a leak, while the part before
    # the dot (a JWT header, a verification id) is not secret.
    whole = set(secrets)
    parts = {secret.rsplit(".", 1)[1] for secret in secrets if "." in secret}
    parts = {part for part in parts if len(part) >= 16}
    lines = 0
    leaks = []
    for path in sorted(glob.glob(os.path.join(directory, "logs-*.txt"))):
        with open(path, encoding="utf-8", errors="replace") as handle:
            for line in handle:
                lines += 1
                line = line.rstrip("\n")
                for token in TOKEN.findall(NOT_OURS.sub("", line)):
                    candidates = {token, token.strip(".,;:"), *token.split(".")}
                    found = candidates & whole or candidates & parts
                    for secret in found:
                        leaks.append(("a secret a test handled", mask(line, secret)))
                for name, shape in SHAPES.items():
                    for match in shape.finditer(line):
                        leaks.append((name, mask(line, match.group(0))))
    if lines == 0:
        print(f"logleak: FAILED: no log lines in {directory}; run the suite with VERITY_TEST_LEAK_DIR={directory}")
        return 1
    if leaks:
        for kind, line in leaks[:40]:
            print(f"logleak: {kind} in: {line[:400]}")
        print(f"logleak: FAILED: {len(leaks)} leak(s) in {lines} log lines")
        return 1
    print(f"logleak: {lines} log lines of the whole suite, {len(secrets)} secrets: none leaked, no full phone number")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "/tmp/verity-leak"))
