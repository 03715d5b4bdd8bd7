"""The runner the compatibility scripts share: one `ok - …` / `not ok - …` line per case (TAP-like), the traceback of
each failure, a summary, and an exit status that fails the run when any case failed."""

import traceback


def run_cases(cases, name):
    """Runs `(description, function)` pairs in order, every one even after a failure; returns the exit status."""
    failed = 0
    for description, function in cases:
        try:
            function()
            print(f"ok - {description}")
        except Exception:  # noqa: BLE001 - every failure is reported, then the run fails
            failed += 1
            print(f"not ok - {description}")
            traceback.print_exc()
    print(f"{len(cases) - failed} of {len(cases)} {name} compatibility cases passed")
    return 1 if failed else 0
