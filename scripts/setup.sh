#!/usr/bin/env bash
# Installs everything `exactly` needs on a fresh Debian 12 machine: the compiler and libraries
# (Debian packages), Java and Maven, and the Kafka broker jars (Maven Central). Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  build-essential cmake pkg-config
  librdkafka-dev libboost-program-options-dev libfmt-dev libspdlog-dev prometheus-cpp-dev
  libtomlplusplus-dev doctest-dev nlohmann-json3-dev
  openjdk-17-jre-headless maven
  prometheus
)
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

tests/kafka/cluster.sh jars
echo "setup: done"
