#!/usr/bin/env python3
"""Starts N SMS verifications on a running Verity server and writes their ids, one per line.

    seed.py BASE_URL API_KEY COUNT OUT_FILE [--workers 16] [--offset 0]

Each worker thread keeps one HTTP/1.1 keep-alive connection. Destinations are distinct valid NANP numbers
(+1 AAA 555 XXXX with AAA from 201 up), so no start turns into a resend of an earlier one. `--offset` shifts the
numbers so two seedings against the same project never collide. The server's start rate limits must be lifted
(VERITY_RATE_LIMIT_PROJECT / VERITY_RATE_LIMIT_DESTINATION); any non-201 answer aborts with its body.
"""

import argparse
import http.client
import json
import sys
import threading
import time
import urllib.parse
from concurrent.futures import ThreadPoolExecutor


def phone(index: int) -> str:
    area = 201 + index // 10_000
    if area > 999:
        raise ValueError("too many numbers")
    return f"+1{area}555{index % 10_000:04d}"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("base_url")
    parser.add_argument("api_key")
    parser.add_argument("count", type=int)
    parser.add_argument("out_file")
    parser.add_argument("--workers", type=int, default=16)
    parser.add_argument("--offset", type=int, default=0)
    args = parser.parse_args()

    url = urllib.parse.urlsplit(args.base_url)
    headers = {"Authorization": f"Bearer {args.api_key}", "Content-Type": "application/json"}
    ids: list[str | None] = [None] * args.count
    local = threading.local()

    def connection() -> http.client.HTTPConnection:
        if getattr(local, "conn", None) is None:
            local.conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
        return local.conn

    def start(index: int) -> None:
        body = json.dumps({"to": phone(args.offset + index), "channel": "sms"})
        for attempt in range(3):
            conn = connection()
            try:
                conn.request("POST", "/v1/verifications", body=body, headers=headers)
                response = conn.getresponse()
                payload = response.read()
            except (http.client.HTTPException, OSError):
                conn.close()
                local.conn = None
                if attempt == 2:
                    raise
                continue
            if response.status != 201:
                raise RuntimeError(f"start #{index} answered {response.status}: {payload[:300]!r}")
            ids[index] = json.loads(payload)["id"]
            return

    failed = threading.Event()

    def run_chunk(chunk: range) -> None:
        try:
            for index in chunk:
                if failed.is_set():
                    return
                start(index)
        except BaseException:
            failed.set()
            raise

    began = time.monotonic()
    step = (args.count + args.workers - 1) // args.workers
    chunks = [range(i, min(i + step, args.count)) for i in range(0, args.count, step)]
    with ThreadPoolExecutor(max_workers=len(chunks)) as pool:
        for future in [pool.submit(run_chunk, chunk) for chunk in chunks]:
            future.result()
    elapsed = time.monotonic() - began

    with open(args.out_file, "w") as out:
        for verification_id in ids:
            out.write(f"{verification_id}\n")
    print(f"seeded {args.count} verifications in {elapsed:.1f} s ({args.count / elapsed:.0f}/s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
