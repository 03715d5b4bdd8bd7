"""What the Python test scripts share about the server under test (started by Tests/lib/serve.sh): its command-line
tool, and the list of secrets its log must never hold."""

import json
import os
import subprocess


def verity(*args):
    """Runs the verity CLI (VERITY_BIN) on the server's data directory and returns its JSON output."""
    command = [os.environ["VERITY_BIN"], *args, "--json"]
    return json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout)


def remember_secret(secret):
    """Lists a secret the server must never log; serve.sh's check_verity_log greps the server log for each."""
    with open(os.environ["VERITY_SECRETS_FILE"], "a", encoding="utf-8") as secrets:
        secrets.write(secret + "\n")
