#!/usr/bin/env bash
# The test command: set up a fresh machine, build, run every test (unit, then integration against
# a real Kafka broker that ctest starts and stops); then the same again built with AddressSanitizer
# and UndefinedBehaviorSanitizer (build-asan/), where any report fails the run; then the fuzz
# targets (scripts/fuzz.sh), 60 s each.
#   scripts/test.sh            everything
#   scripts/test.sh --quick    without the sanitizer pass
#   scripts/test.sh -L unit    extra arguments go to ctest
set -euo pipefail
cd "$(dirname "$0")/.."
quick=0
if [ "${1:-}" = "--quick" ]; then quick=1; shift; fi
scripts/setup.sh

scripts/build.sh
(cd build && ctest --output-on-failure --timeout 1800 "$@")

if [ $quick = 0 ]; then
  echo "== the same tests, built with -fsanitize=address,undefined"
  EXACTLY_BUILD_DIR=build-asan EXACTLY_BUILD_TYPE=Debug scripts/build.sh -DEXACTLY_SANITIZE=address,undefined
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
  # The fault suite runs once, in the plain build: under ASan it would take most of CI's time.
  (cd build-asan && ctest --output-on-failure --timeout 1800 -LE "chaos|bench" "$@")
  echo "== the fuzz targets"
  scripts/fuzz.sh --seconds 60
fi
