#!/usr/bin/env python3
"""What SQLite itself costs per push round trip: replays the statements of one round trip on a copy of a bench
database, with Python's sqlite3 (no network, no Swift, no thread hops), and times each locked section.

    sqlcost.py DATA_DIR_OR_DB_FILE [--iterations 3000]

Run it on the data dir a `KEEP_DATA=1 bench/run.sh` left behind (the server must be stopped; the database is
copied first, so the original is never touched). It needs one project with an API key and one verified push
factor, which the push scenario leaves there.

The statements and their grouping mirror the server (Sources/VerityServer/Store/*.swift). Each group is one
acquisition of SQLiteBackend's AsyncLock, i.e. one `database.read { … }` or `database.transaction { … }`:

    POST /v1/challenges       key -> project; factor by id; BEGIN IMMEDIATE, INSERT challenge, INSERT outbox, COMMIT
    POST …/respond            factor by id (device JWT); INSERT device_token_uses … RETURNING (replay log);
                              challenge by id; BEGIN IMMEDIATE, UPDATE challenge … RETURNING, SELECT webhook, COMMIT
    outbox worker (per push)  claim (BEGIN IMMEDIATE, UPDATE … RETURNING, COMMIT); project + factor; mark sent;
                              pending count

Compare the total with the time one round trip holds the server's single SQLite connection in a real run
(1 / round trips per second, when the lock is the bottleneck): the difference is the request path around SQLite
(executor hops to SQLiteNIO's thread, the actor lock hand-offs, HTTP, JSON, crypto that runs under no lock).
"""

import argparse
import glob
import os
import shutil
import sqlite3
import sys
import tempfile
import time
import uuid

CHALLENGE_COLUMNS = ("id, project_id, user_id, factor_id, type, status, message, details, hidden_details, "
                     "content_hash, user_verification, created_at, expires_at, responded_at, responded_factor_id")
FACTOR_COLUMNS = ("id, project_id, user_id, type, status, friendly_name, public_key, push_platform, push_token, "
                  "app_id, sdk_version, nonce, enrollment_token_hash, totp_secret, totp_algorithm, totp_digits, "
                  "totp_period, totp_last_counter, created_at, verified_at")
OUTBOX_COLUMNS = ("id, project_id, channel, destination, verification_id, locale, payload, status, attempts, "
                  "next_attempt_at, last_error, sender, created_at, sent_at")


def find_db(path: str) -> str:
    if os.path.isfile(path):
        return path
    for pattern in ("*.sqlite", "*.sqlite3", "*.db"):
        found = glob.glob(os.path.join(path, pattern))
        if found:
            return found[0]
    raise SystemExit(f"no SQLite database in {path}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("data")
    parser.add_argument("--iterations", type=int, default=3000)
    args = parser.parse_args()

    source = find_db(args.data)
    work = tempfile.mkdtemp(prefix="verity-sqlcost.")
    try:
        db = os.path.join(work, "bench.sqlite")
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(source + suffix):
                shutil.copy(source + suffix, db + suffix)
        conn = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
        # The server's pragmas (SQLiteBackend.open).
        for pragma in ("journal_mode = WAL", "synchronous = NORMAL", "busy_timeout = 5000", "foreign_keys = ON"):
            conn.execute(f"PRAGMA {pragma}")
        key_hash, project_id = conn.execute(
            "SELECT secret_hash, project_id FROM api_keys WHERE revoked_at IS NULL LIMIT 1").fetchone()
        row = conn.execute(
            "SELECT id, user_id FROM factors WHERE type = 'push' AND status = 'verified' AND project_id = ? LIMIT 1",
            (project_id,)).fetchone()
        if row is None:
            raise SystemExit("no verified push factor in the database: run the push scenario with KEEP_DATA=1")
        factor_id, user_id = row
        counts = {name: conn.execute(f"SELECT COUNT(*) FROM {name}").fetchone()[0]
                  for name in ("challenges", "outbox", "device_token_uses", "factors")}
        print(f"{source}: {counts} (SQLite {sqlite3.sqlite_version} here; the server bundles its own)")

        def one(sql, params=()):
            return conn.execute(sql, params).fetchall()

        def transaction(statements):
            conn.execute("BEGIN IMMEDIATE")
            for sql, params in statements:
                conn.execute(sql, params).fetchall()
            conn.execute("COMMIT")

        sections = {}

        def timed(name, fn):
            began = time.perf_counter()
            fn()
            sections.setdefault(name, []).append(time.perf_counter() - began)

        for i in range(args.iterations):
            now = time.time()
            chl, msg, jti = f"chl_{uuid.uuid4().hex[:26]}", f"msg_{uuid.uuid4().hex[:26]}", uuid.uuid4().hex
            # POST /v1/challenges
            timed("create: API key -> project", lambda: one(
                "SELECT p.id, p.name, p.code_length, p.code_ttl_seconds, p.allowed_countries, p.created_at, "
                "p.webhook_url, p.webhook_secret FROM api_keys k JOIN projects p ON p.id = k.project_id "
                "WHERE k.secret_hash = ? AND k.revoked_at IS NULL", (key_hash,)))
            timed("create: factor by id", lambda: one(f"SELECT {FACTOR_COLUMNS} FROM factors WHERE id = ?",
                                                      (factor_id,)))
            timed("create: txn insert challenge + outbox", lambda: transaction([
                (f"INSERT INTO challenges ({CHALLENGE_COLUMNS}) VALUES (?, ?, ?, ?, 'push', 'pending', ?, '[]', "
                 "'{}', ?, 'preferred', ?, ?, NULL, NULL)",
                 (chl, project_id, user_id, factor_id, "Sign in to Verity bench?", "h" * 43, now, now + 300)),
                ("INSERT INTO outbox (id, project_id, channel, destination, locale, status, attempts, "
                 "next_attempt_at, created_at, payload) VALUES (?, ?, 'push', ?, 'en', 'pending', 0, ?, ?, ?)",
                 (msg, project_id, factor_id, now, now, '{"body":"Sign in to Verity bench?"}' + "x" * 250)),
            ]))
            # POST /v1/device/factors/{fid}/challenges/{cid}/respond
            timed("respond: factor by id (JWT kid)", lambda: one(
                f"SELECT {FACTOR_COLUMNS} FROM factors WHERE id = ?", (factor_id,)))
            timed("respond: jti insert (replay log)", lambda: one(
                "INSERT INTO device_token_uses (factor_id, jti, expires_at) VALUES (?, ?, ?) "
                "ON CONFLICT (factor_id, jti) DO NOTHING RETURNING jti", (factor_id, jti, now + 360)))
            timed("respond: challenge by id", lambda: one(
                f"SELECT {CHALLENGE_COLUMNS} FROM challenges WHERE id = ? AND project_id = ?", (chl, project_id)))
            timed("respond: txn answer + webhook lookup", lambda: transaction([
                ("UPDATE challenges SET status = 'approved', responded_at = ?, responded_factor_id = ? "
                 f"WHERE id = ? AND status = 'pending' AND expires_at > ? RETURNING {CHALLENGE_COLUMNS}",
                 (now, factor_id, chl, now)),
                ("SELECT webhook_url, webhook_secret FROM projects WHERE id = ?", (project_id,)),
            ]))
            # The outbox worker, one push per claim (the worker is woken by every create).
            timed("outbox: txn claim", lambda: transaction([
                (f"UPDATE outbox SET attempts = attempts + 1, next_attempt_at = ? WHERE id IN ("
                 "SELECT id FROM outbox WHERE status = 'pending' AND next_attempt_at <= ? "
                 f"ORDER BY next_attempt_at, id LIMIT 20) RETURNING {OUTBOX_COLUMNS}", (now + 60, now)),
            ]))
            timed("outbox: project + factor", lambda: (
                one("SELECT name, webhook_secret FROM projects WHERE id = ?", (project_id,)),
                one(f"SELECT {FACTOR_COLUMNS} FROM factors WHERE id = ?", (factor_id,))))
            timed("outbox: mark sent", lambda: one(
                "UPDATE outbox SET status = 'sent', sender = 'push', sent_at = ?, last_error = NULL WHERE id = ?",
                (now, msg)))
            timed("outbox: pending count", lambda: one("SELECT COUNT(*) AS depth FROM outbox WHERE status = 'pending'"))

        total = 0.0
        print(f"\n{'locked section (one AsyncLock acquisition)':<44} {'mean us':>9} {'p99 us':>9}")
        for name, values in sections.items():
            values.sort()
            mean = sum(values) / len(values)
            total += mean
            print(f"{name:<44} {mean * 1e6:>9.1f} {values[int(0.99 * (len(values) - 1))] * 1e6:>9.1f}")
        print(f"{'total per round trip (' + str(len(sections)) + ' sections)':<44} {total * 1e6:>9.1f}")
        print(f"\nSQLite alone could serve ~{1 / total:.0f} round trips/s on one connection "
              f"(Python's sqlite3 adds a few us per statement, so this is a lower bound of SQLite's speed).")
        conn.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
