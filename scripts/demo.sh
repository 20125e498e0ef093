#!/usr/bin/env bash
# The sample pipeline on a fresh machine: set up, build, start a local Kafka broker, write sample
# payment events, run the enricher, kill -9 it mid-way, restart it, and print the exactly-once
# audit (inputs = outputs, none missing, none twice, order kept). Stops the broker at the end.
#   COUNT=200000 scripts/demo.sh
set -euo pipefail
cd "$(dirname "$0")/.."
count=${COUNT:-100000}
config=config/local.toml

scripts/setup.sh
scripts/build.sh
exactly=build/app/exactly

state=$(mktemp -d "${TMPDIR:-/tmp}/exactly-demo.XXXXXX")
service=""
cleanup() {
  [ -n "$service" ] && kill -9 "$service" 2>/dev/null || true
  tests/kafka/cluster.sh stop --dir "$state/kafka" || true
}
trap cleanup EXIT

echo "== starting a local Kafka broker (KRaft) on 127.0.0.1:39092"
tests/kafka/cluster.sh start --nodes 1 --port 39092 --dir "$state/kafka"
$exactly create-topics --config $config --partitions 4
echo "== writing $count sample payment events"
$exactly produce-sample --config $config --count "$count"

echo "== running the payment enricher (log: $state/service.log)"
$exactly run --config $config >>"$state/service.log" 2>&1 &
service=$!
# Kill it as soon as part of the output is committed.
outputs=0
for _ in $(seq 1 300); do
  outputs=$({ $exactly verify --config $config 2>/dev/null || true; } |
            sed -n 's/.* outputs=\([0-9]*\).*/\1/p' | head -n 1)
  [ "${outputs:-0}" -gt 0 ] && break
  sleep 0.2
done
kill -9 "$service"; wait "$service" 2>/dev/null || true
echo "== kill -9 of the running service (pid $service) with ${outputs:-0} of $count outputs committed"
$exactly run --config $config >>"$state/service.log" 2>&1 &
service=$!
echo "== restarted (pid $service); waiting for it to catch up"
for _ in $(seq 1 180); do
  if $exactly verify --config $config >/dev/null 2>&1; then break; fi
  sleep 1
done
kill -TERM "$service"
wait "$service" && echo "== service stopped cleanly (SIGTERM, exit 0)"
service=""

echo "== exactly-once audit of $count events, read back with read_committed"
$exactly verify --config $config
