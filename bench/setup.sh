#!/usr/bin/env bash
# What bench/run.py needs besides the build: the Kafka Streams peer (bench/streams, a Maven
# project) and a Python venv (build/bench-venv) with confluent-kafka for the seed loop and
# matplotlib for the plots. Idempotent; scripts/setup.sh runs it.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! compgen -G "bench/streams/target/exactly-streams-peer-*.jar" >/dev/null ||
   [ bench/streams/pom.xml -nt bench/streams/target/libs ]; then
  mvn -q -B -f bench/streams/pom.xml package dependency:copy-dependencies >&2 \
    || { echo "bench/setup.sh: Maven could not build bench/streams" >&2; exit 1; }
fi
if [ ! -x build/bench-venv/bin/python ]; then
  mkdir -p build
  python3 -m venv build/bench-venv
fi
if ! build/bench-venv/bin/python -c "import confluent_kafka, matplotlib" 2>/dev/null; then
  build/bench-venv/bin/pip install -q -r bench/python/requirements.txt "matplotlib==3.11.2" >&2 \
    || { echo "bench/setup.sh: pip could not install bench/python/requirements.txt" >&2; exit 1; }
fi
