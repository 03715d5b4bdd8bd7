#!/usr/bin/env python3
"""A stand-in SMS gateway for the console's browser check: takes Verity's webhook SMS (VERITY_SMS_SENDER=webhook),
appends {to, body, status} to a JSON-lines log, and refuses every message (400, a permanent failure, so Verity gives
it up as dead) while the --fail file exists.

Usage: sms_gateway.py PORT LOG_PATH --fail FAIL_PATH
"""

import argparse
import json
import os
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("port", type=int)
    parser.add_argument("log")
    parser.add_argument("--fail", required=True)
    args = parser.parse_args()

    class Gateway(BaseHTTPRequestHandler):
        def do_POST(self):
            length = int(self.headers.get("Content-Length") or 0)
            message = json.loads(self.rfile.read(length) or b"{}")
            status = 400 if os.path.exists(args.fail) else 200
            with open(args.log, "a") as log:
                log.write(json.dumps({"to": message.get("to"), "body": message.get("body"), "status": status}) + "\n")
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(b"{}")

        def log_message(self, *_):
            pass

    ThreadingHTTPServer(("127.0.0.1", args.port), Gateway).serve_forever()


if __name__ == "__main__":
    main()
