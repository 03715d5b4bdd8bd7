#!/usr/bin/env python3
"""Writes COUNT pending SMS verifications straight into a stopped server's SQLite file, and a sample of their ids.

    bulk_seed.py DB_PATH PROJECT_ID COUNT IDS_FILE [--sample 20000] [--code-length 10]

For the scale curve (bench/scale.sh): seeding millions of rows through the API would take hours; SQL takes a minute.
The rows look like the API's (status pending, purpose api, a random salt, unique destinations, a lifetime of a day);
the code of each is whatever the master key derives from its salt, so a wrong guess still runs the full HMAC compare.
A sample of ids spread over the whole table (not just the newest) goes to IDS_FILE for the check scenario, each used
at most 5 times by a clean run. No outbox rows: nothing is to be sent.
"""

import argparse
import os
import random
import sqlite3
import time


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("db_path")
    parser.add_argument("project_id")
    parser.add_argument("count", type=int)
    parser.add_argument("ids_file")
    parser.add_argument("--sample", type=int, default=20_000)
    parser.add_argument("--code-length", type=int, default=10)
    args = parser.parse_args()

    db = sqlite3.connect(args.db_path)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA synchronous = OFF")
    now = time.time()
    sample_every = max(1, args.count // args.sample)
    sample = []
    batch = []
    started = time.time()

    def flush():
        db.executemany(
            "INSERT INTO verifications (id, project_id, channel, destination, destination_key, locale, status, code_salt,"
            " code_length, send_attempts, check_attempts, created_at, updated_at, expires_at, purpose)"
            " VALUES (?, ?, 'sms', ?, ?, 'en', 'pending', ?, ?, 1, 0, ?, ?, ?, 'api')", batch)
        batch.clear()

    for index in range(args.count):
        # ids in the server's shape (ver_ + 26 base32 characters), unique by construction.
        vid = "ver_%026x" % index
        # +1 AAA BBB CCCC with AAA 201..999 and a 7-digit subscriber part starting at 2: 10M distinct valid numbers.
        area, rest = 201 + index // 8_000_000, index % 8_000_000
        destination = "+1%d%07d" % (area, 2_000_000 + rest)
        created = now - (args.count - index) * 0.001
        # A phone number's canonical key is the number itself (what the server's Destination.key gives).
        batch.append((vid, args.project_id, destination, destination, os.urandom(10).hex(), args.code_length, created,
                      created, now + 86_400))
        if index % sample_every == 0 and len(sample) < args.sample:
            sample.append(vid)
        if len(batch) == 50_000:
            flush()
    flush()
    db.commit()
    db.execute("ANALYZE")
    db.close()
    random.Random(7).shuffle(sample)
    with open(args.ids_file, "w") as f:
        f.write("\n".join(sample) + "\n")
    print(f"seeded {args.count} verifications in {time.time() - started:.1f} s; {len(sample)} ids sampled")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
