#!/usr/bin/env python3
"""A tiny SMTP server for the SMTPEmailSender tests, built on aiosmtpd.

It listens on 127.0.0.1, accepts every message and appends it to --output as one JSON line:
  {"mail_from", "rcpt_tos", "data", "subject", "body", "message_id", "authenticated_as", "tls"}
where data is the raw message as received (after SMTP dot-unstuffing), and subject/body are what
Python's email package decodes from it, an independent check of the MIME encoding.

Options:
  --port N                 port to listen on; 0 picks a free one
  --auth-user U --auth-password P
                           require AUTH (PLAIN/LOGIN) with exactly these credentials
  --tls-cert F --tls-key F offer STARTTLS with this certificate; with --auth-user, AUTH then needs TLS
  --implicit-tls           with --tls-cert/--tls-key: speak TLS from the first byte (SMTPS) instead
Recipients at reject.invalid get "550 5.1.1", at busy.invalid "451 4.3.0".

Prints "READY <port>" once listening, and serves until killed.
"""

import argparse
import asyncio
import email
import email.policy
import json
import signal
import ssl
import sys
import warnings

from aiosmtpd.smtp import SMTP, AuthResult, LoginPassword


class Sink:
    def __init__(self, output):
        self.output = output

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        if address.endswith("@reject.invalid"):
            return "550 5.1.1 Mailbox unavailable"
        if address.endswith("@busy.invalid"):
            return "451 4.3.0 Try again later"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        raw = envelope.content if isinstance(envelope.content, bytes) else envelope.content.encode()
        parsed = email.message_from_bytes(raw, policy=email.policy.default)
        record = {
            "mail_from": envelope.mail_from,
            "rcpt_tos": envelope.rcpt_tos,
            "data": raw.decode("utf-8", errors="replace"),
            "subject": str(parsed["subject"]) if parsed["subject"] is not None else None,
            "body": parsed.get_content(),
            "message_id": str(parsed["message-id"]),
            "authenticated_as": session.auth_data if session.authenticated else None,
            # Set for STARTTLS and for implicit TLS alike: the transport in use is the encrypted one.
            "tls": server.transport.get_extra_info("ssl_object") is not None,
        }
        # Written and closed before answering 250, so the client never sees success before the file has it.
        with open(self.output, "a", encoding="utf-8") as file:
            file.write(json.dumps(record) + "\n")
        return "250 OK"


def make_authenticator(user, password):
    def authenticator(server, session, envelope, mechanism, auth_data):
        ok = (
            isinstance(auth_data, LoginPassword)
            and auth_data.login.decode() == user
            and auth_data.password.decode() == password
        )
        if not ok:
            # handled=False makes aiosmtpd answer "535 5.7.8"; its default (True) would send nothing at all.
            return AuthResult(success=False, handled=False)
        # auth_data is what the session remembers; handle_DATA reports it as authenticated_as.
        return AuthResult(success=True, auth_data=user)

    return authenticator


async def main():
    # The test runner may start us with signals blocked (inherited from its thread); unblock them so the
    # SIGTERM it sends at the end of a test really stops the server.
    signal.pthread_sigmask(signal.SIG_SETMASK, [])
    # aiosmtpd warns about AUTH without TLS, which the plain-text AUTH test wants on purpose.
    warnings.filterwarnings("ignore")
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--output", required=True)
    parser.add_argument("--auth-user")
    parser.add_argument("--auth-password")
    parser.add_argument("--tls-cert")
    parser.add_argument("--tls-key")
    parser.add_argument("--implicit-tls", action="store_true")
    args = parser.parse_args()

    options = {}
    context = None
    if args.tls_cert:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(args.tls_cert, args.tls_key)
        if not args.implicit_tls:
            options["tls_context"] = context
    if args.auth_user is not None:
        options["authenticator"] = make_authenticator(args.auth_user, args.auth_password or "")
        options["auth_required"] = True
        # Without TLS the plain-text AUTH test needs this; with TLS, demand it so the test proves the upgrade.
        # (aiosmtpd only counts STARTTLS as TLS here, so implicit TLS must not demand it.)
        options["auth_require_tls"] = bool(args.tls_cert) and not args.implicit_tls

    handler = Sink(args.output)
    loop = asyncio.get_running_loop()
    server = await loop.create_server(
        lambda: SMTP(handler, hostname="sink.test", **options),
        host="127.0.0.1",
        port=args.port,
        ssl=context if args.implicit_tls else None,
    )
    port = server.sockets[0].getsockname()[1]
    print(f"READY {port}", flush=True)
    await server.serve_forever()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        sys.exit(0)
