#!/usr/bin/env bash
# Type-checks, on Linux, what only an Apple device runs: every Apple-only file of VerityKit (Keychain, Secure Enclave,
# LocalAuthentication, UserNotifications), a sample app, a notification service and content extension, and every code
# listing of the DocC catalog and README.md, against stand-ins transcribed from Apple's declarations (StandIns/), in
# Swift 6 language mode with complete concurrency checking and warnings as errors. Nothing here runs; a compile error
# anywhere fails the step.
set -euo pipefail
cd "$(dirname "$0")"
python3 extract_listings.py
swift build -j 1 --scratch-path .build-apple --build-tests
# The listings are generated: remove them after a good run, so the linter never sees them.
rm -f Listings/*.swift
echo "ok - VerityKit's Apple-only code, the sample app and extensions, and the documentation's listings type-check"
