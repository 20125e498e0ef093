#!/usr/bin/env bash
# Installs everything `exactly` needs on a fresh Debian 12 machine: the compiler and libraries
# (Debian packages), Java and Maven, and the Kafka broker jars (Maven Central). Idempotent.
#   scripts/setup.sh              what the build, the tests and the demo need
#   scripts/setup.sh --build-only the compiler and libraries only: what docker/Dockerfile's build
#                                 stage needs to build with -DEXACTLY_BUILD_TESTS=OFF
set -euo pipefail
cd "$(dirname "$0")/.."

build_only=0
for arg in "$@"; do
  case "$arg" in
    --build-only) build_only=1 ;;
    *) echo "setup: unknown argument '$arg' (usage: scripts/setup.sh [--build-only])" >&2; exit 2 ;;
  esac
done

packages=(
  build-essential cmake pkg-config
  librdkafka-dev libboost-program-options-dev libfmt-dev libspdlog-dev prometheus-cpp-dev
  libtomlplusplus-dev nlohmann-json3-dev libjemalloc-dev
)
if [ $build_only = 0 ]; then
  packages+=(
    doctest-dev                       # the unit and integration tests
    openjdk-17-jre-headless maven     # the Kafka broker of the integration tests
    prometheus                        # promtool: the alert rules' tests; a real scrape
    python3 python3-yaml              # tests/deploy: the Dockerfile, compose file and chart checks
    python3-venv                      # bench/setup.sh: the benchmark's Python peer and plots
    clang-16 libclang-rt-16-dev       # scripts/fuzz.sh: libFuzzer
  )
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

if [ $build_only = 0 ]; then
  tests/kafka/cluster.sh jars
  tests/kafka/cluster.sh jars --kafka-version 3.9.1   # the security test's broker (see cluster.sh)
  bench/setup.sh                                      # the benchmark's peers (bench/README.md)
  # The chart's test builds helm from source (scripts/helm.sh), which needs a Go toolchain at least
  # as new as helm's go.mod asks. Debian 12 has none: its golang-go is 1.19, too old both for helm
  # and for fetching a newer toolchain through GOTOOLCHAIN (Go 1.21 on). The machine image's Go
  # (/usr/local/go) is the one used; without it every other test still runs.
  scripts/helm.sh --check-go || echo "setup: warning: the Helm chart test (helm_chart) will fail" >&2
fi
echo "setup: done"
