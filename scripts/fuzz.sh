#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz with clang into build-fuzz/ (AddressSanitizer and
# UndefinedBehaviorSanitizer on) and runs each for a bounded time through ctest (label fuzz).
#   scripts/fuzz.sh                 60 s per target
#   scripts/fuzz.sh --seconds N     N s per target
# A finding fails the run; libFuzzer writes the input that triggered it (crash-*, leak-*,
# timeout-*) into build-fuzz/tests/fuzz/, and `build-fuzz/tests/fuzz/<target> <that file>` replays it.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=60
if [ "${1:-}" = "--seconds" ]; then seconds=$2; shift 2; fi
command -v clang++-16 >/dev/null || { echo "fuzz.sh: clang++-16 is missing (scripts/setup.sh installs it)" >&2; exit 2; }
cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++-16 \
  -DEXACTLY_FUZZ=ON -DEXACTLY_BUILD_TESTS=OFF -DEXACTLY_SANITIZE=address,undefined \
  -DEXACTLY_FUZZ_SECONDS="$seconds" >/dev/null
cmake --build build-fuzz -j"$(nproc)" --target fuzz_config fuzz_transforms
(cd build-fuzz/tests/fuzz && ctest --output-on-failure -L fuzz "$@")
