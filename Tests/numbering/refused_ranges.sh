#!/usr/bin/env bash
# Re-generates the premium-rate and shared-cost table (Sources/VerityServer/Domain/RefusedNumberTypes.swift) from the
# pinned libphonenumber metadata (the `phonenumbers` package) and fails when the committed table differs from it.
set -euo pipefail
cd "$(dirname "$0")/../.."
python3 scripts/generate_number_types.py --check
