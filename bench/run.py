#!/usr/bin/env python3
"""The side-by-side benchmark: exactly against a plain copy loop, Kafka Streams and the seed's
Python loop, on one local broker, in one run. See bench/README.md.

Every trial gets fresh topics, preloads its input before the clock starts, runs one peer, and
counts only what the peer committed (its group's committed input offsets, read every 100 ms by
`exactly-bench watch`; the ceiling, which commits nothing, counts its delivered records). The
throughput is taken between 10 % and 90 % of the input, so start-up (a JVM's, a group join) is
outside it; CPU seconds (/proc/PID/stat) and peak RSS (VmHWM) cover the whole process. Peers
alternate within each run (A B C A B C ...), and each figure is the median of the runs.

Writes into --out (default results/bench): bench.md (the tables and the goals), raw.json (every
trial), throughput-vs-commit-interval.png and latency-cdf.png (when matplotlib is importable).
"""
import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / "build"
TOOL = BUILD / "bench" / "exactly-bench"
EXACTLY = BUILD / "app" / "exactly"
CLUSTER = ROOT / "tests" / "kafka" / "cluster.sh"
STREAMS_CP = f"{ROOT}/bench/streams/target/*:{ROOT}/bench/streams/target/libs/*"
VENV_PYTHON = BUILD / "bench-venv" / "bin" / "python"

PORT = 29200  # its controller on 29300; below the ephemeral ports; the tests use 29500 and up
BOOTSTRAP = f"127.0.0.1:{PORT}"

PEERS = ["ceiling", "exactly-alo", "exactly-eos", "streams", "seed"]
LABELS = {
    "ceiling": "ceiling (librdkafka copy, no transactions)",
    "exactly-alo": "exactly, at-least-once",
    "exactly-eos": "exactly, exactly-once",
    "streams": "Kafka Streams 4.1 EOS-v2",
    "seed": "seed loop (Python confluent-kafka)",
}
TRANSFORMS = {"identity": "identity", "enricher": "payment-enricher"}


def log(message):
    print(f"[bench {time.strftime('%H:%M:%S')}] {message}", flush=True)


def run(cmd, **kw):
    return subprocess.run([str(c) for c in cmd], check=True, text=True, capture_output=True, **kw)


class Broker:
    def __init__(self, directory):
        self.dir = directory

    def __enter__(self):
        subprocess.run([str(CLUSTER), "stop", "--dir", str(self.dir)], check=False,
                       capture_output=True)
        run([CLUSTER, "start", "--port", PORT, "--dir", self.dir])
        return self

    def __exit__(self, *exc):
        subprocess.run([str(CLUSTER), "stop", "--dir", str(self.dir)], check=False,
                       capture_output=True)


def proc_usage(pid):
    """CPU seconds (user + system) and peak RSS in MiB of a live process."""
    ticks = os.sysconf("SC_CLK_TCK")
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    cpu = (int(fields[11]) + int(fields[12])) / ticks  # utime, stime (fields 14 and 15)
    rss = 0.0
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                rss = int(line.split()[1]) / 1024
    return cpu, rss


def stop(process, timeout=60):
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def histogram_quantiles(metrics_text, name, quantiles):
    """Quantiles of a Prometheus histogram from its cumulative buckets (the bucket's upper bound)."""
    buckets = []
    for line in metrics_text.splitlines():
        m = re.match(rf'{name}_bucket\{{le="([^"]+)"\}} (\S+)', line)
        if m:
            le = float("inf") if m.group(1) == "+Inf" else float(m.group(1))
            buckets.append((le, float(m.group(2))))
    buckets.sort()
    if not buckets or buckets[-1][1] == 0:
        return [None] * len(quantiles)
    total = buckets[-1][1]
    return [next(le for le, count in buckets if count >= q * total) for q in quantiles]


class Trial:
    """One peer on fresh topics: preload, run until every input record is committed, measure."""

    def __init__(self, workdir, peer, transform, size, records, commit_ms, partitions):
        self.workdir = workdir
        self.peer = peer
        self.transform = transform
        self.size = size
        self.records = records
        self.commit_ms = commit_ms
        self.partitions = partitions
        tag = uuid.uuid4().hex[:8]
        self.input, self.output, self.group = f"in-{tag}", f"out-{tag}", f"group-{tag}"
        self.log_path = workdir / f"{peer}-{tag}.log"

    def command(self):
        if self.peer == "ceiling":
            return [TOOL, "copy", "--bootstrap", BOOTSTRAP, "--input", self.input, "--output",
                    self.output, "--count", self.records, "--group", self.group]
        if self.peer.startswith("exactly"):
            config = self.workdir / f"{self.group}.toml"
            delivery = 'delivery = "at-least-once"\n' if self.peer == "exactly-alo" else ""
            config.write_text(f"""[kafka]
bootstrap_servers = "{BOOTSTRAP}"
[pipeline]
input_topic = "{self.input}"
output_topic = "{self.output}"
group_id = "{self.group}"
{delivery}[transactions]
commit_interval_ms = {self.commit_ms}
[transform]
name = "{TRANSFORMS[self.transform]}"
[metrics]
listen = "127.0.0.1:0"
[log]
level = "warn"
""")
            return [EXACTLY, "run", "--config", config]
        if self.peer == "streams":
            return ["java", "-cp", STREAMS_CP, "dev.exactly.bench.StreamsPeer", "--bootstrap",
                    BOOTSTRAP, "--input", self.input, "--output", self.output, "--group",
                    self.group, "--transform", TRANSFORMS[self.transform],
                    "--commit-interval-ms", self.commit_ms]
        if self.peer == "seed":
            return [VENV_PYTHON, ROOT / "bench" / "python" / "seed_loop.py", "--bootstrap",
                    BOOTSTRAP, "--input", self.input, "--output", self.output, "--group",
                    self.group, "--transform", TRANSFORMS[self.transform], "--batch", 500,
                    "--commit-interval-ms", self.commit_ms]
        raise ValueError(self.peer)

    def run(self, timeout):
        run([TOOL, "create", "--bootstrap", BOOTSTRAP, "--topics", f"{self.input},{self.output}",
             "--partitions", self.partitions])
        kind = "payments" if self.transform == "enricher" else "bytes"
        run([TOOL, "fill", "--bootstrap", BOOTSTRAP, "--topic", self.input, "--count",
             self.records, "--size", self.size, "--kind", kind])
        with open(self.log_path, "w") as peer_log:
            peer = subprocess.Popen([str(c) for c in self.command()], stdout=peer_log,
                                    stderr=subprocess.STDOUT, text=True)
        watcher = None
        try:
            if self.peer == "ceiling":
                progress_source = self.log_path
                peer.wait(timeout)
            else:
                watcher = subprocess.run(
                    [str(TOOL), "watch", "--bootstrap", BOOTSTRAP, "--group", self.group,
                     "--topic", self.input, "--count", str(self.records), "--timeout",
                     str(timeout)], text=True, capture_output=True, check=False)
                if watcher.returncode != 0:
                    raise RuntimeError(f"{self.peer} did not commit its input: "
                                       f"{watcher.stderr.strip()} (log: {self.log_path})")
                progress_source = None
            if peer.poll() is not None and self.peer != "ceiling":
                raise RuntimeError(f"{self.peer} exited with {peer.returncode} "
                                   f"(log: {self.log_path})")
            cpu, rss = proc_usage(peer.pid) if peer.poll() is None else (None, None)
            commit = [None, None]
            if self.peer.startswith("exactly"):
                commit = self.commit_latency()
        finally:
            if self.peer == "ceiling" and peer.poll() is None:
                stop(peer)
            elif self.peer != "ceiling":
                stop(peer)
        if self.peer == "ceiling":
            if peer.returncode != 0:
                raise RuntimeError(f"ceiling exited with {peer.returncode} (log: {self.log_path})")
            text = self.log_path.read_text()
            cpu, rss = self.ceiling_usage(text)
        else:
            text = watcher.stdout if watcher else progress_source.read_text()
        series = [(int(ms), int(n)) for ms, n in re.findall(r"^progress (\d+) (\d+)$", text, re.M)]
        rate = self.rate(series)
        return {
            "peer": self.peer, "transform": self.transform, "size": self.size,
            "records": self.records, "commit_ms": self.commit_ms, "partitions": self.partitions,
            "records_per_s": rate, "mb_per_s": rate * self.size / 1e6 if rate else None,
            "cpu_s": cpu, "cpu_s_per_million": cpu / self.records * 1e6 if cpu else None,
            "rss_mib": rss, "commit_p50_ms": commit[0], "commit_p99_ms": commit[1],
        }

    def ceiling_usage(self, text):
        m = re.search(r"^usage cpu_s=(\S+) rss_mib=(\S+)$", text, re.M)
        return (float(m.group(1)), float(m.group(2))) if m else (None, None)

    def rate(self, series):
        low, high = 0.1 * self.records, 0.9 * self.records
        t_low = next((ms for ms, n in series if n >= low), None)
        t_high = next((ms for ms, n in series if n >= high), None)
        n_low = next((n for ms, n in series if n >= low), None)
        n_high = next((n for ms, n in series if n >= high), None)
        if t_low is None or t_high is None or t_high <= t_low:
            # All of it between two samples: the whole run, from the first sample on.
            t_first = series[0][0] if series else 0
            t_last = next((ms for ms, n in series if n >= self.records), None)
            if t_last is None or t_last <= t_first:
                return None
            return self.records / ((t_last - t_first) / 1000)
        return (n_high - n_low) / ((t_high - t_low) / 1000)

    def commit_latency(self):
        m = re.search(r"\(port (\d+)\)", self.log_path.read_text())
        if not m:
            return [None, None]
        import urllib.request
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{m.group(1)}/metrics", timeout=5) as r:
                text = r.read().decode()
        except OSError:
            return [None, None]
        q = histogram_quantiles(text, "exactly_commit_latency_seconds", [0.5, 0.99])
        return [v * 1000 if v is not None else None for v in q]


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def fmt(value, digits=0):
    if value is None:
        return "-"
    return f"{value:,.{digits}f}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--peers", default=",".join(PEERS))
    parser.add_argument("--out", type=Path, default=ROOT / "results" / "bench")
    parser.add_argument("--smoke", action="store_true",
                        help="a tiny run of every part (what CI does): 20,000 records, 1 run, "
                             "the 100 ms interval only")
    args = parser.parse_args()
    peers = [p for p in args.peers.split(",") if p]
    unknown = set(peers) - set(PEERS)
    if unknown:
        sys.exit(f"bench: unknown peers {sorted(unknown)}; known: {PEERS}")
    if args.smoke:
        args.records, args.runs = 20_000, 1
    intervals = [100] if args.smoke else [10, 25, 50, 100, 250, 1000]
    args.out.mkdir(parents=True, exist_ok=True)
    workdir = Path(tempfile.mkdtemp(prefix="exactly-bench-"))
    trials = []

    def attempt(peer, transform, size, commit_ms=100, partitions=6, section="workload"):
        t = Trial(workdir, peer, transform, size, args.records, commit_ms, partitions)
        log(f"{section}: {peer} {transform} {size} B, commit {commit_ms} ms, {partitions} partitions")
        result = t.run(timeout=max(120, args.records / 2000))
        result["section"] = section
        log(f"  {fmt(result['records_per_s'])} records/s, cpu {fmt(result['cpu_s'], 1)} s, "
            f"rss {fmt(result['rss_mib'], 1)} MiB")
        trials.append(result)

    with Broker(workdir / "cluster"):
        for run_index in range(args.runs):
            for transform, size in [("identity", 100), ("identity", 1024), ("enricher", 100),
                                    ("enricher", 1024)]:
                for peer in peers:
                    attempt(peer, transform, size)
        sweep_peers = [p for p in ["exactly-eos", "exactly-alo", "streams"] if p in peers]
        for run_index in range(args.runs):
            for ms in intervals:
                if ms == 100:
                    continue  # the workload section measured it
                for peer in sweep_peers:
                    attempt(peer, "identity", 100, commit_ms=ms, section="sweep")
        for run_index in range(args.runs):
            for peer in [p for p in ["exactly-eos", "streams"] if p in peers]:
                attempt(peer, "identity", 100, partitions=32, section="partitions")
    (args.out / "raw.json").write_text(json.dumps(trials, indent=1))
    write_report(args, peers, intervals, trials)
    log(f"wrote {args.out / 'bench.md'}")


def write_report(args, peers, intervals, trials):
    def pick(section_names, **match):
        return [t for t in trials if t["section"] in section_names
                and all(t[k] == v for k, v in match.items())]

    lines = [f"# Benchmark", "",
             f"`bench/run.py --records {args.records} --runs {args.runs}` on "
             f"{time.strftime('%Y-%m-%d')}, {os.cpu_count()} cores, one local Kafka broker. "
             f"Medians of {args.runs} run(s).", ""]
    for transform, size in [("identity", 100), ("identity", 1024), ("enricher", 100),
                            ("enricher", 1024)]:
        lines += [f"## {transform}, {size} B values, 6 partitions, commit interval 100 ms", "",
                  "| peer | records/s | MB/s | CPU s per million | peak RSS MiB | commit p50 ms | commit p99 ms |",
                  "| --- | --- | --- | --- | --- | --- | --- |"]
        for peer in peers:
            ts = pick({"workload"}, peer=peer, transform=transform, size=size)
            lines.append(
                f"| {LABELS[peer]} | {fmt(median(t['records_per_s'] for t in ts))} "
                f"| {fmt(median(t['mb_per_s'] for t in ts), 1)} "
                f"| {fmt(median(t['cpu_s_per_million'] for t in ts), 1)} "
                f"| {fmt(median(t['rss_mib'] for t in ts), 1)} "
                f"| {fmt(median(t['commit_p50_ms'] for t in ts), 1)} "
                f"| {fmt(median(t['commit_p99_ms'] for t in ts), 1)} |")
        lines.append("")
    (args.out / "bench.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
