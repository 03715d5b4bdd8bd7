"""Prints the tests a `swift test` log shows as started and never finished: after a hung or killed run, the tests
that were still running. Usage: python3 Tests/lib/unfinished_tests.py LOG"""

import re
import sys

STARTED = re.compile(r'^◇ Test (".*") started\.$')
FINISHED = re.compile(r'^[✔✘] Test (".*?")( with \d+ test cases?)? (passed|failed)')


def unfinished(lines):
    started, finished = [], set()
    for line in lines:
        line = line.rstrip("\n")
        if match := STARTED.match(line):
            started.append(match.group(1))
        elif match := FINISHED.match(line):
            finished.add(match.group(1))
    return [name for name in started if name not in finished]


if __name__ == "__main__":
    with open(sys.argv[1], encoding="utf-8", errors="replace") as log:
        for name in unfinished(log):
            print(name)
