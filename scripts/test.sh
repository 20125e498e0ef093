#!/usr/bin/env bash
# The test command: set up a fresh machine, build, run every test (unit, then integration against
# a real Kafka broker that ctest starts and stops). Extra arguments go to ctest (e.g. -L unit).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
cd "${EXACTLY_BUILD_DIR:-build}"
ctest --output-on-failure --timeout 1800 "$@"
