#!/usr/bin/env python3
"""Writes a console-sized data set straight into a stopped server's SQLite file, for bench/console.sh:

    console_seed.py DB_PATH PROJECT_ID [--verifications 1000000] [--users 100000] [--days 30]

VERIFICATIONS verifications (70% SMS, 20% email, 5% WhatsApp, 5% voice; 60% approved, 25% expired, 5% dead of
wrong codes, 5% canceled, 5% pending) spread evenly over the last DAYS days, each with its outbox message (97% sent,
3% dead: none pending, so the worker has nothing to send), and USERS users with a phone login id each. Prints one
phone number, one email address and one user id that exist, as JSON, for the searches.
"""

import argparse
import json
import os
import random
import sqlite3
import time


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("db_path")
    parser.add_argument("project_id")
    parser.add_argument("--verifications", type=int, default=1_000_000)
    parser.add_argument("--users", type=int, default=100_000)
    parser.add_argument("--days", type=int, default=30)
    args = parser.parse_args()

    rng = random.Random(7)
    db = sqlite3.connect(args.db_path)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA synchronous = OFF")
    now = time.time()
    span = args.days * 86_400
    started = time.time()
    verifications, messages = [], []
    channels = ["sms"] * 14 + ["email"] * 4 + ["whatsapp", "voice"]
    statuses = ["approved"] * 12 + ["expired"] * 5 + ["max_attempts_reached", "canceled", "pending"]
    found = {}

    def flush():
        db.executemany(
            "INSERT INTO verifications (id, project_id, channel, destination, destination_key, locale, status,"
            " code_salt, code_length, send_attempts, check_attempts, created_at, updated_at, expires_at, purpose)"
            " VALUES (?, ?, ?, ?, ?, 'en', ?, ?, 6, 1, 1, ?, ?, ?, 'api')", verifications)
        db.executemany(
            "INSERT INTO outbox (id, project_id, channel, destination, verification_id, locale, status, attempts,"
            " next_attempt_at, last_error, sender, created_at, sent_at)"
            " VALUES (?, ?, ?, ?, ?, 'en', ?, 1, ?, ?, 'console', ?, ?)", messages)
        verifications.clear()
        messages.clear()

    for index in range(args.verifications):
        created = now - span + span * index / args.verifications
        channel = channels[index % len(channels)]
        status = statuses[rng.randrange(len(statuses))]
        if channel == "email":
            destination = f"user{index}@example.com"
        else:
            # +1 AAA 2XX XXXX and some +44 7XXX, +49 15XX numbers, so the per-country table has several rows.
            region = index % 10
            if region < 7:
                destination = "+1%d%07d" % (201 + index % 700, 2_000_000 + index % 8_000_000)
            elif region < 9:
                destination = "+447%09d" % (400_000_000 + index % 500_000_000)
            else:
                destination = "+4915%09d" % (100_000_000 + index % 800_000_000)
        found.setdefault(channel, destination)
        vid = "ver_%026x" % index
        verifications.append((vid, args.project_id, channel, destination, destination.lower(), status,
                              os.urandom(10).hex(), created, created + 30, created + 600))
        dead = index % 33 == 0
        messages.append(("msg_%026x" % index, args.project_id, channel, destination, vid,
                         "dead" if dead else "sent", created + 1, "webhook 400" if dead else None, created,
                         None if dead else created + 0.2 + (index % 7) * 0.05))
        if len(verifications) == 50_000:
            flush()
    flush()
    users, logins = [], []
    for index in range(args.users):
        phone = "+1650%07d" % (2_000_000 + index)
        uid = "usr_%026x" % index
        users.append((uid, args.project_id, phone, now - args.users + index))
        logins.append((args.project_id, phone, uid))
        found["user"] = uid
        found["login"] = phone
    db.executemany(
        "INSERT INTO users (id, project_id, email, phone, display_name, custom_claims, disabled, created_at)"
        " VALUES (?, ?, NULL, ?, NULL, '{}', 0, ?)", users)
    db.executemany("INSERT INTO user_login_ids (project_id, login_key, user_id) VALUES (?, ?, ?)", logins)
    db.commit()
    db.execute("ANALYZE")
    db.close()
    print(json.dumps({"phone": found["sms"], "email": found["email"], "user": found["user"], "login": found["login"],
                      "seconds": round(time.time() - started, 1)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
