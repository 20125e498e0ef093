#!/usr/bin/env python3
"""Settings against each other: the exactly-once peer of bench/run.py under several settings (and
builds), on one local broker, alternating within each run, the median of the runs.

    python3 bench/tune.py [--records N] [--runs R] [--variant NAME:KEY=VALUE,KEY=VALUE ...]
                          [--baseline PATH] [--workload identity-100] [--out results/bench]
                          [--warmup SECONDS]

Without --variant it runs the comparisons behind the framework's defaults (see README, "Tuning"):
the prefetch queue depth (queued.min.messages), the producer's linger.ms and glibc's malloc arenas.
A variant's KEY=VALUE pairs are config overrides (`--set`); ENV:NAME=VALUE sets an environment
variable of the service; BIN:PATH runs another exactly binary. --baseline PATH adds a variant
"baseline" running that binary with its defaults (e.g. a build of an earlier commit). Trials with
the defaults warm the broker up first (60 s) and are not counted. Writes tuning.md and tuning.json
into --out.
"""
import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run as bench  # noqa: E402  (bench/run.py: Broker, Trial)

DEFAULT_VARIANTS = [
    "defaults:",
    # librdkafka's own prefetch queue, and the framework's smaller ones around its 10,000.
    "queue-100k:librdkafka.consumer.queued.min.messages=100000",
    "queue-5k:librdkafka.consumer.queued.min.messages=5000",
    "queue-20k:librdkafka.consumer.queued.min.messages=20000",
    # glibc's own arena limit (8 per core) instead of the framework's 2.
    "arenas-16:ENV:MALLOC_ARENA_MAX=16",
    "linger-20:librdkafka.producer.linger.ms=20",
]


def parse_variant(text):
    name, _, spec = text.partition(":")
    variant = {"name": name, "sets": [], "env": {}, "binary": bench.EXACTLY}
    for item in [x for x in spec.split(",") if x]:
        if item.startswith("ENV:"):
            key, _, value = item[4:].partition("=")
            variant["env"][key] = value
        elif item.startswith("BIN:"):
            variant["binary"] = Path(item[4:]).resolve()
        else:
            variant["sets"].append(item)
    return variant


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--workload", default="identity-100", choices=bench.WORKLOADS)
    parser.add_argument("--partitions", type=int, default=6)
    parser.add_argument("--commit-ms", type=int, default=100)
    parser.add_argument("--variant", action="append", default=[])
    parser.add_argument("--baseline", type=Path)
    parser.add_argument("--out", type=Path, default=bench.ROOT / "results" / "bench")
    parser.add_argument("--warmup", type=float, default=60, metavar="SECONDS",
                        help="trials with the defaults that are not counted, first, until this "
                        "many seconds have passed (default 60; 0: none)")
    args = parser.parse_args()
    variants = [parse_variant(v) for v in (args.variant or DEFAULT_VARIANTS)]
    if args.baseline:
        variants.insert(0, parse_variant(f"baseline:BIN:{args.baseline}"))
    missing = [str(p) for p in {bench.TOOL, *[v["binary"] for v in variants]} if not p.exists()]
    if missing:
        sys.exit(f"tune: missing {', '.join(missing)}: run scripts/build.sh")
    transform, size = args.workload.rsplit("-", 1)
    args.out.mkdir(parents=True, exist_ok=True)
    workdir = Path(tempfile.mkdtemp(prefix="exactly-tune-"))
    trials = []
    with bench.Broker(workdir / "cluster"):
        warmups = bench.warm_up(workdir, args.warmup, args.records, transform, int(size),
                                args.commit_ms, args.partitions)
        for run_index in range(args.runs):
            for v in variants:
                t = bench.Trial(workdir, "exactly-eos", transform, int(size), args.records,
                                args.commit_ms, args.partitions)
                t.exactly, t.exactly_sets, t.env = v["binary"], v["sets"], v["env"]
                bench.log(f"run {run_index + 1}: {v['name']}")
                result = t.run(timeout=max(120, args.records / 2000))
                result["variant"] = v["name"]
                if result.get("transactions"):
                    result["records_per_transaction"] = args.records / result["transactions"]
                bench.log(f"  {bench.fmt(result['records_per_s'])} records/s, "
                          f"cpu {bench.fmt(result['cpu_s'], 1)} s, broker cpu "
                          f"{bench.fmt(result['broker_cpu_s_per_million'], 1)} s per million, "
                          f"rss {bench.fmt(result['rss_mib'], 1)} MiB, "
                          f"commit p99 {bench.fmt(result['commit_p99_ms'], 1)} ms")
                trials.append(result)
    (args.out / "tuning.json").write_text(json.dumps(trials, indent=1))

    def med(name, key):
        values = [t[key] for t in trials if t["variant"] == name and t.get(key) is not None]
        return statistics.median(values) if values else None

    lines = ["# Tuning", "",
             f"`bench/tune.py --records {args.records} --runs {args.runs} --workload "
             f"{args.workload}` on {time.strftime('%Y-%m-%d')}, {os.cpu_count()} cores, one local "
             f"broker: exactly, exactly-once, {args.partitions} partitions, commit interval "
             f"{args.commit_ms} ms. Medians of {args.runs} run(s); the variants alternate within a "
             "run" + (f", after {warmups} warm-up trial(s) ({args.warmup:g} s) that are not "
                      "counted." if warmups else "; no warm-up."), "",
             "| variant | settings | records/s | CPU s per million | broker CPU s per million "
             "| peak RSS MiB | commit p50 ms "
             "| commit p99 ms | delivery p99 ms | loop waiting for commits s | fetch wake-ups "
             "| records per transaction |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for v in variants:
        settings = [*v["sets"], *[f"{k}={val} (env)" for k, val in v["env"].items()]]
        if v["binary"] != bench.EXACTLY:
            settings.insert(0, f"binary {v['binary']}")
        lines.append(
            f"| {v['name']} | {'<br>'.join(settings) or 'the defaults'} "
            f"| {bench.fmt(med(v['name'], 'records_per_s'))} "
            f"| {bench.fmt(med(v['name'], 'cpu_s_per_million'), 1)} "
            f"| {bench.fmt(med(v['name'], 'broker_cpu_s_per_million'), 1)} "
            f"| {bench.fmt(med(v['name'], 'rss_mib'), 1)} "
            f"| {bench.fmt(med(v['name'], 'commit_p50_ms'), 1)} "
            f"| {bench.fmt(med(v['name'], 'commit_p99_ms'), 1)} "
            f"| {bench.fmt(med(v['name'], 'flush_p99_ms'), 1)} "
            f"| {bench.fmt(med(v['name'], 'commit_wait_s'), 1)} "
            f"| {bench.fmt(med(v['name'], 'fetch_wakeups'))} "
            f"| {bench.fmt(med(v['name'], 'records_per_transaction'))} |")
    (args.out / "tuning.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
