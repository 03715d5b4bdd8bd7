"""What the Twilio compatibility scripts share: the verity CLI, projects with their Twilio credentials, a twilio-python
client pointed at Verity, reading the codes a number was sent, expecting Twilio errors, and a tiny case runner.

The scripts are run by Tests/twilio/compat.sh, which starts `verity serve` on a fresh data directory and sets:
  VERITY_BIN       the verity executable (for `admin` and `outbox list`)
  VERITY_DATA_DIR  the server's data directory
  VERITY_BASE      the server's base URL, e.g. http://127.0.0.1:8080
  VERITY_SECRETS_FILE  where the API keys and other secrets they handle are listed, so the log can be checked for them
"""

import os
import re
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from compat_cases import run_cases  # noqa: E402
from verity_cli import remember_secret, verity  # noqa: E402,F401  (the suites import them from here)
from twilio.base.exceptions import TwilioRestException  # noqa: E402
from twilio.rest import Client  # noqa: E402

BASE = os.environ["VERITY_BASE"]
SID = re.compile(r"^(?P<prefix>[A-Z]{2})[0-9a-f]{32}$")


def make_project(name):
    created = verity("admin", "project", "create", "--name", name)
    project = created["project"]["id"]
    remember_secret(created["apiKey"])
    sids = verity("admin", "twilio", "--project", project)
    return {
        "project": project,
        "key": created["apiKey"],
        "account_sid": sids["accountSid"],
        "api_key_sid": sids["apiKeys"][0]["apiKeySid"],
    }


def client(username, password, account_sid=None):
    twilio = Client(username, password, account_sid)
    twilio.verify.base_url = BASE + "/twilio"
    return twilio


def codes_sent(to, count):
    """The codes in the first `count` messages sent to `to`, oldest first (read like a person reads their phone, or
    hears a call: its first line says the code digit by digit)."""
    deadline = time.time() + 10
    while time.time() < deadline:
        messages = [m for m in verity("outbox", "list", "--to", to) if m["status"] == "sent"]
        if len(messages) >= count:
            return [heard_code(m) for m in reversed(messages)][:count]
        time.sleep(0.1)
    raise AssertionError(f"expected {count} message(s) to {to}")


def heard_code(message):
    if message["channel"] == "voice":
        first, again = message["body"].split("\n")[:2]
        code = "".join(re.findall(r"\d", first))
        assert "".join(re.findall(r"\d", again)) == code, message["body"]
        return code
    return re.search(r"\d{4,10}", message["body"]).group()


def code_sent(to, count=1):
    return codes_sent(to, count)[-1]


def wrong(code):
    return "".join(str((int(digit) + 1) % 10) for digit in code)


def expect_error(call, status, code, message=None):
    try:
        call()
    except TwilioRestException as error:
        assert error.status == status, f"status {error.status}, wanted {status}: {error}"
        assert error.code == code, f"code {error.code}, wanted {code}: {error}"
        if message is not None:
            assert message in error.msg, f"message {error.msg!r} lacks {message!r}"
        return error
    raise AssertionError(f"expected HTTP {status} / {code}, the call succeeded")


def expect_sid(value, prefix):
    match = SID.match(value or "")
    assert match and match["prefix"] == prefix, f"{value!r} is not a {prefix} SID"



CASES = []


def case(description):
    def register(function):
        CASES.append((description, function))
        return function

    return register


def main():
    return run_cases(CASES, "Twilio")
