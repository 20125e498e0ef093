#!/usr/bin/env bash
# The fault suite alone: every case of tests/chaos/ on a 3-broker cluster that ctest starts and
# stops, each case run RUNS times (default 20), and the table of the results written to
# results/chaos.md (one row per case: runs, inputs, outputs, dead letters, missing, duplicated,
# aborted reads, order violations, recovery p50/max).
#   scripts/chaos.sh            20 runs per case
#   scripts/chaos.sh --runs 1   once, as CI does
set -euo pipefail
cd "$(dirname "$0")/.."
runs=20
if [ "${1:-}" = "--runs" ]; then runs=$2; shift 2; fi
scripts/setup.sh
scripts/build.sh
mkdir -p results
lines=$(mktemp)
trap 'rm -f "$lines"' EXIT
status=0
(cd build && EXACTLY_CHAOS_RUNS=$runs EXACTLY_CHAOS_RESULTS=$lines \
   ctest --output-on-failure --timeout $((900 * runs)) -L chaos "$@") || status=$?
{
  echo "# Fault suite results"
  echo
  echo "\`scripts/chaos.sh --runs $runs\` on $(date -u +%Y-%m-%d), $(nproc) cores: 3 brokers"
  echo "(replication factor 3, min.insync.replicas 2), 6 input partitions, at least 100,000 records"
  echo "per run. Counts are summed over the runs; recovery is the time from a fault (its end, for a"
  echo "pause) to the next commit of the instance it hit (any instance, for broker faults)."
  echo
  echo "| case | runs | inputs | outputs | dlq | missing | duplicated | aborted reads | order violations | recovery p50/max |"
  echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
  sed 's/, / | /g; s/^/| /; s/$/ |/' "$lines"
} > results/chaos.md
cat results/chaos.md
exit $status
