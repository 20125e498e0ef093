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
import collections
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

import broker_requests

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / "build"
TOOL = BUILD / "bench" / "exactly-bench"
EXACTLY = BUILD / "app" / "exactly"
CLUSTER = ROOT / "tests" / "kafka" / "cluster.sh"
STREAMS_CP = f"{ROOT}/bench/streams/target/*:{ROOT}/bench/streams/target/libs/*"
VENV_PYTHON = BUILD / "bench-venv" / "bin" / "python"

PORT = 29200  # its controller on 29300; below the ephemeral ports; the tests use 29500 and up
BOOTSTRAP = f"127.0.0.1:{PORT}"

PEERS = ["ceiling", "exactly-alo", "exactly-eos", "exactly-eos-instance", "streams", "seed"]
LABELS = {
    "ceiling": "ceiling (librdkafka copy, no transactions)",
    "exactly-alo": "exactly, at-least-once",
    "exactly-eos": "exactly, exactly-once",
    "exactly-eos-instance": "exactly, exactly-once, instance-scoped",
    "streams": "Kafka Streams 4.1 EOS-v2",
    "seed": "seed loop (Python confluent-kafka)",
}
TRANSFORMS = {"identity": "identity", "enricher": "payment-enricher"}
# The peers of the commit-interval sweep (and, with the ceiling, of the 32-partition section).
COMPARED = ["exactly-eos", "exactly-eos-instance", "exactly-alo", "streams"]
# The 32-partition section runs the ceiling too: what the broker and librdkafka keep at 32
# partitions without a transform, a transaction or an offset commit.
AT_32 = ["ceiling", *COMPARED]
SECTIONS = ["workload", "sweep", "partitions", "latency"]
WORKLOADS = ["identity-100", "identity-1024", "enricher-100", "enricher-1024"]


def log(message):
    print(f"[bench {time.strftime('%H:%M:%S')}] {message}", flush=True)


def run(cmd, **kw):
    done = subprocess.run([str(c) for c in cmd], text=True, capture_output=True, **kw)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(str(c) for c in cmd)} exited with {done.returncode}: "
                           f"{done.stderr.strip() or done.stdout.strip()}")
    return done


class Broker:
    def __init__(self, directory, request_log=None):
        self.dir = directory
        self.request_log = request_log

    def __enter__(self):
        subprocess.run([str(CLUSTER), "stop", "--dir", str(self.dir)], check=False,
                       capture_output=True)
        # A fixed 1 GiB heap, as Kafka's own start script gives it: with the tests' 256-768 MiB
        # the broker ran a concurrent mark cycle every 2 s under load, on the cores it shares
        # with the peers. EXACTLY_BROKER_HEAP in the environment wins.
        env = {**os.environ}
        env.setdefault("EXACTLY_BROKER_HEAP", "-Xms1g -Xmx1g")
        if self.request_log:
            env["EXACTLY_BROKER_REQUEST_LOG"] = str(self.request_log)
        run([CLUSTER, "start", "--port", PORT, "--dir", self.dir], env=env)
        global BROKER_PID
        pids = sorted(Path(self.dir).glob("node*/pid"))
        BROKER_PID = int(pids[0].read_text()) if pids else None
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


BROKER_PID = None  # the broker's java process, set by Broker


def broker_cpu():
    """The broker's CPU seconds so far (every thread of its JVM), or None."""
    try:
        return proc_usage(BROKER_PID)[0] if BROKER_PID else None
    except OSError:
        return None


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

    # Set by main() (or per trial, by tune.py): the exactly binary, its extra `--set KEY=VALUE`
    # overrides, and extra environment variables of the peer.
    exactly = EXACTLY
    exactly_sets = []
    env = {}

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
            # One producer for the instance (KIP-447); the crash-loop quarantine needs
            # partition-scoped ids.
            scope = ('producer_scope = "instance"\n' if self.peer == "exactly-eos-instance"
                     else "")
            quarantine = ("[quarantine]\nenabled = false\n" if self.peer == "exactly-eos-instance"
                          else "")
            config.write_text(f"""[kafka]
bootstrap_servers = "{BOOTSTRAP}"
[pipeline]
input_topic = "{self.input}"
output_topic = "{self.output}"
group_id = "{self.group}"
{delivery}{scope}{quarantine}[transactions]
commit_interval_ms = {self.commit_ms}
[transform]
name = "{TRANSFORMS[self.transform]}"
[metrics]
listen = "127.0.0.1:0"
""")
            sets = [arg for kv in self.exactly_sets for arg in ("--set", kv)]
            return [self.exactly, "run", "--config", config, *sets]
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
        try:
            return self.measure(timeout)
        finally:
            self.drop()

    def drop(self):
        """Deletes the trial's topics: a full run writes tens of GB otherwise."""
        deleted = subprocess.run([str(TOOL), "delete", "--bootstrap", BOOTSTRAP, "--topics",
                                  f"{self.input},{self.output}"], text=True, capture_output=True)
        if deleted.returncode != 0:
            log(f"  could not delete {self.input}, {self.output}: {deleted.stderr.strip()}")

    def measure(self, timeout):
        run([TOOL, "create", "--bootstrap", BOOTSTRAP, "--topics", f"{self.input},{self.output}",
             "--partitions", self.partitions])
        kind = "payments" if self.transform == "enricher" else "bytes"
        filled = run([TOOL, "fill", "--bootstrap", BOOTSTRAP, "--topic", self.input, "--count",
                      self.records, "--size", self.size, "--kind", kind]).stdout
        m = re.search(r"\((\d+) value bytes\)", filled)
        self.value_bytes = int(m.group(1)) / self.records if m else float(self.size)
        started_ms = int(time.time() * 1000)
        broker_before = broker_cpu()
        with open(self.log_path, "w") as peer_log:
            peer = subprocess.Popen([str(c) for c in self.command()], stdout=peer_log,
                                    env={**os.environ, **self.env},
                                    stderr=subprocess.STDOUT, text=True)
        watcher = None
        try:
            if self.peer == "ceiling":
                progress_source = self.log_path
                peer.wait(timeout)
            else:
                watcher = self.watch(peer, timeout)
                if watcher.returncode != 0:
                    raise RuntimeError(f"{self.peer} did not commit its input: "
                                       f"{watcher.stderr.strip()} (log: {self.log_path})")
                progress_source = None
            if peer.poll() is not None and self.peer != "ceiling":
                raise RuntimeError(f"{self.peer} exited with {peer.returncode} "
                                   f"(log: {self.log_path})")
            cpu, rss = proc_usage(peer.pid) if peer.poll() is None else (None, None)
            broker_after = broker_cpu()
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
            "value_bytes": self.value_bytes,
            "records_per_s": rate, "mb_per_s": rate * self.value_bytes / 1e6 if rate else None,
            "cpu_s": cpu, "cpu_s_per_million": cpu / self.records * 1e6 if cpu else None,
            "broker_cpu_s_per_million": ((broker_after - broker_before) / self.records * 1e6
                                         if broker_before is not None and broker_after is not None
                                         else None),
            "rss_mib": rss, "commit_p50_ms": commit[0], "commit_p99_ms": commit[1],
            "fetch_wakeups": getattr(self, "fetch_wakeups", None),
            "commit_wait_s": getattr(self, "commit_wait_s", None),
            "flush_p99_ms": getattr(self, "flush_p99_ms", None),
            "transactions": getattr(self, "transactions", None),
            "window_ms": [started_ms, int(time.time() * 1000)],
        }

    def watch(self, peer, timeout):
        """Runs the tool's watch of the peer's committed input offsets; a peer that exits first
        (a bad setting, a crash) ends the trial at once instead of after the watch's timeout."""
        with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
            watcher = subprocess.Popen(
                [str(TOOL), "watch", "--bootstrap", BOOTSTRAP, "--group", self.group,
                 "--topic", self.input, "--count", str(self.records), "--timeout", str(timeout)],
                text=True, stdout=out, stderr=err)
            while watcher.poll() is None:
                if peer.poll() is not None:
                    stop(watcher, 5)
                    raise RuntimeError(f"{self.peer} exited with {peer.returncode} before it "
                                       f"committed its input (log: {self.log_path})")
                time.sleep(0.2)
            out.seek(0)
            err.seek(0)
            return subprocess.CompletedProcess(watcher.args, watcher.returncode, out.read(),
                                               err.read())

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

    def metrics(self):
        """The exactly peer's /metrics text at the end of its run, or ""."""
        m = re.search(r"\(port (\d+)\)", self.log_path.read_text())
        if not m:
            return ""
        import urllib.request
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{m.group(1)}/metrics", timeout=5) as r:
                return r.read().decode()
        except OSError:
            return ""

    def commit_latency(self):
        text = self.metrics()
        q = histogram_quantiles(text, "exactly_commit_latency_seconds", [0.5, 0.99])
        wakeups = re.search(r"^exactly_fetch_wakeups_total (\S+)$", text, re.M)
        self.fetch_wakeups = float(wakeups.group(1)) if wakeups else None
        committed = re.search(r"^exactly_transactions_committed_total (\S+)$", text, re.M)
        self.transactions = float(committed.group(1)) if committed else None
        waited = re.search(r"^exactly_commit_wait_seconds_total (\S+)$", text, re.M)
        self.commit_wait_s = float(waited.group(1)) if waited else None
        flush = histogram_quantiles(text, "exactly_commit_flush_seconds", [0.99])
        self.flush_p99_ms = flush[0] * 1000 if flush[0] is not None else None
        return [v * 1000 if v is not None else None for v in q]


class LatencyTrial:
    """One peer on fresh, empty topics; records paced into the input at a fixed rate, each keyed
    with its send time; a read_committed reader of the output reports now minus that time. The
    first `warmup` seconds are not counted."""

    def __init__(self, workdir, peer, rate, seconds, commit_ms, warmup=5.0):
        self.trial = Trial(workdir, peer, "identity", 100, int(rate * (seconds + warmup)),
                           commit_ms, 6)
        self.peer, self.rate, self.seconds, self.warmup = peer, rate, seconds, warmup
        tag = uuid.uuid4().hex[:8]
        self.samples_path = workdir / f"latency-{peer}-{tag}.txt"
        self.timeline_path = workdir / f"timeline-{peer}-{tag}.txt"

    def run(self):
        try:
            return self.measure()
        finally:
            self.trial.drop()

    def measure(self):
        t = self.trial
        run([TOOL, "create", "--bootstrap", BOOTSTRAP, "--topics", f"{t.input},{t.output}",
             "--partitions", 6])
        with open(t.log_path, "w") as peer_log:
            peer = subprocess.Popen([str(c) for c in t.command()], stdout=peer_log,
                                    env={**os.environ, **t.env},
                                    stderr=subprocess.STDOUT, text=True)
        try:
            time.sleep(3)  # the peer joins its group; the warm-up covers the rest
            since_us = int((time.time() + self.warmup) * 1e6)
            expected = int(self.rate * self.seconds * 0.98)
            reader = subprocess.Popen(
                [str(TOOL), "latency", "--bootstrap", BOOTSTRAP, "--topic", t.output, "--count",
                 str(expected), "--since-us", str(since_us), "--timeout",
                 str(self.seconds + self.warmup + 60), "--samples", str(self.samples_path),
                 "--timeline", str(self.timeline_path)],
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            run([TOOL, "pace", "--bootstrap", BOOTSTRAP, "--topic", t.input, "--rate", self.rate,
                 "--seconds", self.seconds + self.warmup])
            paced_ms = int(time.time() * 1000)
            out, _ = reader.communicate(timeout=self.seconds + self.warmup + 120)
            # The commits at a steady rate below the ceiling (the workload section's run flat out,
            # where every request of the broker waits behind the produce requests of all peers).
            commit = t.commit_latency() if self.peer.startswith("exactly") else [None, None]
        finally:
            stop(peer)
        m = re.search(r"latency count=(\d+) p50_ms=(\S+) p99_ms=(\S+) p999_ms=(\S+) max_ms=(\S+)",
                      out)
        if not m:
            raise RuntimeError(f"latency of {self.peer}: {out.strip()} (log: {t.log_path})")
        return {"peer": self.peer, "section": "latency", "rate": self.rate,
                "commit_ms": t.commit_ms, "count": int(m.group(1)),
                "p50_ms": float(m.group(2)), "p99_ms": float(m.group(3)),
                "p999_ms": float(m.group(4)), "max_ms": float(m.group(5)),
                "commit_p50_ms": commit[0], "commit_p99_ms": commit[1],
                "samples": str(self.samples_path), "timeline": str(self.timeline_path),
                "window_ms": [since_us // 1000, paced_ms]}


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def fmt(value, digits=0):
    if value is None:
        return "-"
    return f"{value:,.{digits}f}"


def warm_up(workdir, seconds, records, transform="identity", size=100, commit_ms=100,
            partitions=6):
    """Exactly-once trials that are not counted, until `seconds` have passed (at least one if
    `seconds` > 0): on a fresh broker (its JIT, its internal topics) the first trials ran at about
    0.7 of the same peer's later ones. Returns how many ran."""
    started, count = time.monotonic(), 0
    while seconds > 0 and (count == 0 or time.monotonic() - started < seconds):
        count += 1
        log(f"warm-up {count}, not counted: exactly-eos, {records:,} records")
        result = Trial(workdir, "exactly-eos", transform, size, records, commit_ms,
                       partitions).run(timeout=max(120, records / 2000))
        log(f"  {fmt(result['records_per_s'])} records/s")
    return count


def main():
    # The venv of bench/setup.sh has matplotlib (and the seed loop's confluent-kafka): run in it.
    venv = BUILD / "bench-venv"
    if VENV_PYTHON.exists() and Path(sys.prefix).resolve() != venv.resolve():
        os.execv(str(VENV_PYTHON), [str(VENV_PYTHON), __file__, *sys.argv[1:]])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--seed-records", type=int,
                        help="records per trial of the seed's Python loop (default: --records; "
                             "on fewer, its 10 %%-90 %% window spans a few commits and 100 ms "
                             "samples, and its rate is noise)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--peers", default=",".join(PEERS))
    parser.add_argument("--out", type=Path, default=ROOT / "results" / "bench")
    parser.add_argument("--latency-rate", type=float,
                        help="records/s of the latency section (default: half the ceiling's)")
    parser.add_argument("--latency-seconds", type=float, default=30)
    parser.add_argument("--sections", default=",".join(SECTIONS),
                        help=f"which parts to run (default: all of {','.join(SECTIONS)})")
    parser.add_argument("--workloads", default=",".join(WORKLOADS),
                        help="transform-size pairs of the workload section (default: all four)")
    parser.add_argument("--exactly", type=Path, default=EXACTLY,
                        help="the exactly binary (to compare builds)")
    parser.add_argument("--exactly-set", action="append", default=[], metavar="KEY=VALUE",
                        help="a config override for the exactly peers (repeatable), e.g. "
                             "librdkafka.consumer.queued.min.messages=20000")
    parser.add_argument("--warmup", type=float, default=60, metavar="SECONDS",
                        help="exactly-once trials that are not counted, first, until this many "
                             "seconds have passed (default 60; 0: none): on a fresh broker the "
                             "first trials ran at about 0.7 of the same peer's later ones")
    parser.add_argument("--smoke", action="store_true",
                        help="a tiny run of every part (what CI does): 20,000 records, 1 run, "
                             "the 100 ms interval only")
    parser.add_argument("--request-log", action="store_true",
                        help="the broker logs its timing of every transaction request to "
                             "--out/broker-requests.log.node1; bench.md gets a table of it per "
                             "peer (bench/broker_requests.py). The logging costs the broker CPU: "
                             "not for the throughput figures")
    parser.add_argument("--report", action="store_true",
                        help="only write bench.md and the plots again from --out's raw.json "
                             "(give the options the run had, which its first line names)")
    args = parser.parse_args()
    peers = [p for p in args.peers.split(",") if p]
    unknown = set(peers) - set(PEERS)
    if unknown:
        sys.exit(f"bench: unknown peers {sorted(unknown)}; known: {PEERS}")
    sections = [x for x in args.sections.split(",") if x]
    workloads = [x for x in args.workloads.split(",") if x]
    for name, chosen, known in [("sections", sections, SECTIONS), ("workloads", workloads, WORKLOADS)]:
        if set(chosen) - set(known):
            sys.exit(f"bench: unknown {name} {sorted(set(chosen) - set(known))}; known: {known}")
    Trial.exactly = args.exactly.resolve()
    Trial.exactly_sets = args.exactly_set
    if args.smoke:
        args.records, args.runs, args.latency_seconds, args.warmup = 20_000, 1, 3, 1
    if args.seed_records is None:
        args.seed_records = args.records
    intervals = [100] if args.smoke else [10, 25, 50, 100, 250, 1000]
    if args.report:
        raw = args.out / "raw.json"
        if not raw.exists():
            sys.exit(f"bench: --report needs {raw}")
        write_report(args, peers, intervals, json.loads(raw.read_text()))
        log(f"wrote {args.out / 'bench.md'}")
        return
    missing = [str(path) for path in [TOOL, Trial.exactly] if not path.exists()]
    if "streams" in peers and not list((ROOT / "bench" / "streams" / "target").glob("*.jar")):
        missing.append("bench/streams/target/*.jar")
    if "seed" in peers and not VENV_PYTHON.exists():
        missing.append(str(VENV_PYTHON))
    if missing:
        sys.exit(f"bench: missing {', '.join(missing)}: run scripts/build.sh and bench/setup.sh")
    args.out.mkdir(parents=True, exist_ok=True)
    workdir = Path(tempfile.mkdtemp(prefix="exactly-bench-"))
    trials = []

    def attempt(peer, transform, size, commit_ms=100, partitions=6, section="workload"):
        records = args.seed_records if peer == "seed" else args.records
        t = Trial(workdir, peer, transform, size, records, commit_ms, partitions)
        log(f"{section}: {peer} {transform} {size} B, commit {commit_ms} ms, {partitions} partitions")
        result = t.run(timeout=max(120, records / 2000))
        result["section"] = section
        log(f"  {fmt(result['records_per_s'])} records/s, cpu {fmt(result['cpu_s'], 1)} s, "
            f"broker cpu {fmt(result['broker_cpu_s_per_million'], 1)} s per million, "
            f"rss {fmt(result['rss_mib'], 1)} MiB")
        trials.append(result)

    request_log = (args.out / "broker-requests.log").resolve() if args.request_log else None
    if request_log:
        for old in args.out.glob("broker-requests.log.node*"):
            old.unlink()
    with Broker(workdir / "cluster", request_log):
        # The latency section too: cold, the first peer's p99 was 2.5 to 5 times its next.
        args.warmup_trials = warm_up(workdir, args.warmup, args.records)
        for run_index in range(args.runs if "workload" in sections else 0):
            for workload in workloads:
                transform, size = workload.rsplit("-", 1)
                for peer in peers:
                    attempt(peer, transform, int(size))
        sweep_peers = [p for p in COMPARED if p in peers]
        for run_index in range(args.runs if "sweep" in sections else 0):
            for ms in intervals:
                if ms == 100 and "identity-100" in workloads and "workload" in sections:
                    continue  # the workload section measured it
                for peer in sweep_peers:
                    attempt(peer, "identity", 100, commit_ms=ms, section="sweep")
        for run_index in range(args.runs if "partitions" in sections else 0):
            for peer in [p for p in AT_32 if p in peers]:
                attempt(peer, "identity", 100, partitions=32, section="partitions")
        ceiling = median(t["records_per_s"] for t in trials
                         if t["peer"] == "ceiling" and t["section"] == "workload"
                         and t["transform"] == "identity" and t["size"] == 100)
        rate = args.latency_rate or (ceiling / 2 if ceiling else None)
        if "latency" not in sections:
            pass
        elif rate:
            for run_index in range(args.runs):
                for peer in peers:
                    log(f"latency: {peer} at {rate:,.0f} records/s for {args.latency_seconds} s")
                    result = LatencyTrial(workdir, peer, rate, args.latency_seconds, 100).run()
                    log(f"  p50 {result['p50_ms']:.1f} ms, p99 {result['p99_ms']:.1f} ms, "
                        f"p99.9 {result['p999_ms']:.1f} ms")
                    trials.append(result)
        else:
            log("latency: skipped (no ceiling measured and no --latency-rate)")
    if request_log:
        node_log = Path(f"{request_log}.node1")
        logged = broker_requests.read(node_log) if node_log.exists() else []
        for t in trials:
            if t.get("window_ms"):
                t["broker"] = broker_requests.summarize(logged, [t["window_ms"]])
        unlogged = sorted({t["peer"] for t in trials if t["peer"] in ("exactly-eos", "exactly-eos-instance")
                           and "EndTxn" not in t.get("broker", {})})
        if unlogged:
            (args.out / "raw.json").write_text(json.dumps(trials, indent=1))
            sys.exit(f"bench: the broker's request log ({node_log}) has no EndTxn in the trials "
                     f"of {', '.join(unlogged)}")
    (args.out / "raw.json").write_text(json.dumps(trials, indent=1))
    write_report(args, peers, intervals, trials)
    log(f"wrote {args.out / 'bench.md'}")
    unmeasured = [f"{t['section']} {t['peer']} {t.get('transform', '')} {t.get('size', '')}"
                  for t in trials if t["section"] != "latency" and not t["records_per_s"]]
    if unmeasured:
        sys.exit(f"bench: no throughput measured for: {'; '.join(unmeasured)}")


def write_report(args, peers, intervals, trials):
    def pick(section_names, **match):
        return [t for t in trials if t["section"] in section_names
                and all(t.get(k) == v for k, v in match.items())]

    def med(ts, key):
        return median(t.get(key) for t in ts)

    def at_six(peer):
        # Identity, 100 B, 6 partitions, 100 ms: the workload section's trials and the sweep's.
        return (pick({"workload"}, peer=peer, transform="identity", size=100)
                + pick({"sweep"}, peer=peer, commit_ms=100))

    chosen = ""
    if args.peers != ",".join(PEERS):
        chosen += f" --peers {args.peers}"
    if args.sections != ",".join(SECTIONS):
        chosen += f" --sections {args.sections}"
    if args.workloads != ",".join(WORKLOADS):
        chosen += f" --workloads {args.workloads}"
    if args.latency_rate:
        chosen += f" --latency-rate {args.latency_rate:g}"
    chosen += f" --latency-seconds {args.latency_seconds:g}"
    lines = ["# Benchmark", "",
             f"`bench/run.py --records {args.records} --seed-records {args.seed_records} "
             f"--runs {args.runs}{chosen}` on "
             f"{time.strftime('%Y-%m-%d')}, {os.cpu_count()} cores, one local Kafka broker "
             f"(KRaft, 127.0.0.1). Medians of {args.runs} run(s); the peers alternate within a run"
             + (f", after {args.warmup_trials} warm-up trial(s) of {args.records:,} records "
                f"({args.warmup:g} s) that are not counted. "
                if getattr(args, "warmup_trials", 0) else ". ") +
             "Records/s count committed input offsets between 10 % and 90 % of the input (the "
             "ceiling, which commits nothing, its delivered records); CPU and peak RSS cover "
             "the whole process; the broker's CPU is its JVM's, from the peer's start to its "
             "end. The seed's loop runs on fewer records per trial (it is the "
             "slowest by far); its figures are rates all the same.", ""]
    if args.exactly_set or args.exactly.resolve() != EXACTLY.resolve():
        lines += [f"exactly: `{args.exactly}`" + "".join(f" `--set {kv}`" for kv in args.exactly_set),
                  ""]
    rows = {}
    for workload in [w for w in args.workloads.split(",") if w]:
        transform, size = workload.rsplit("-", 1)
        size = int(size)
        ts_all = pick({"workload"}, transform=transform, size=size)
        if not ts_all:
            continue
        mean_size = med(ts_all, "value_bytes")
        lines += [f"## {transform}, values of {fmt(mean_size)} B, 6 partitions, commit interval "
                  f"100 ms", "",
                  "| peer | records/s | MB/s | CPU s per million | broker CPU s per million "
                  "| peak RSS MiB | commit p50 ms | commit p99 ms |",
                  "| --- | --- | --- | --- | --- | --- | --- | --- |"]
        for peer in peers:
            ts = pick({"workload"}, peer=peer, transform=transform, size=size)
            rows[(peer, transform, size)] = ts
            lines.append(
                f"| {LABELS[peer]} | {fmt(med(ts, 'records_per_s'))} "
                f"| {fmt(med(ts, 'mb_per_s'), 1)} | {fmt(med(ts, 'cpu_s_per_million'), 1)} "
                f"| {fmt(med(ts, 'broker_cpu_s_per_million'), 1)} "
                f"| {fmt(med(ts, 'rss_mib'), 1)} | {fmt(med(ts, 'commit_p50_ms'), 1)} "
                f"| {fmt(med(ts, 'commit_p99_ms'), 1)} |")
        lines.append("")

    sweep_peers = [p for p in COMPARED if p in peers]
    sweep = {}
    lines += ["## Commit interval (identity, 100 B, 6 partitions): records/s", "",
              "| peer | " + " | ".join(f"{ms} ms" for ms in intervals) + " |",
              "| --- | " + " | ".join("---" for _ in intervals) + " |"]
    for peer in sweep_peers:
        values = []
        for ms in intervals:
            ts = pick({"sweep"}, peer=peer, commit_ms=ms)
            if ms == 100:
                ts += pick({"workload"}, peer=peer, transform="identity", size=100)
            values.append(med(ts, "records_per_s"))
        sweep[peer] = values
        lines.append(f"| {LABELS[peer]} | " + " | ".join(fmt(v) for v in values) + " |")
    lines.append("")

    lines += ["## 32 partitions (identity, 100 B, commit interval 100 ms)", "",
              "| peer | records/s at 32 | records/s at 6 | ratio |", "| --- | --- | --- | --- |"]
    for peer in [p for p in AT_32 if p in peers]:
        at32 = med(pick({"partitions"}, peer=peer), "records_per_s")
        at6 = med(at_six(peer), "records_per_s")
        ratio = at32 / at6 if at32 and at6 else None
        lines.append(f"| {LABELS[peer]} | {fmt(at32)} | {fmt(at6)} | {fmt(ratio, 2)} |")
    lines.append("")

    latency = {}
    lat = pick({"latency"})
    if lat:
        chosen = "" if args.latency_rate else " (half the ceiling)"
        lines += [f"## End-to-end latency at {fmt(lat[0]['rate'])} records/s{chosen}, "
                  "identity, 100 B, commit interval 100 ms", "",
                  "From the input record's send time to its arrival at a read_committed reader of "
                  "the output; commit latency from the peer's own histogram over the trial.", "",
                  "| peer | p50 ms | p99 ms | p99.9 ms | max ms | commit p50 ms | commit p99 ms |",
                  "| --- | --- | --- | --- | --- | --- | --- |"]
        for peer in peers:
            ts = pick({"latency"}, peer=peer)
            latency[peer] = {k: med(ts, k) for k in ["p50_ms", "p99_ms", "p999_ms", "max_ms",
                                                     "commit_p50_ms", "commit_p99_ms"]}
            lines.append(f"| {LABELS[peer]} | {fmt(latency[peer]['p50_ms'], 1)} "
                         f"| {fmt(latency[peer]['p99_ms'], 1)} | {fmt(latency[peer]['p999_ms'], 1)} "
                         f"| {fmt(latency[peer]['max_ms'], 1)} "
                         f"| {fmt(latency[peer]['commit_p50_ms'], 1)} "
                         f"| {fmt(latency[peer]['commit_p99_ms'], 1)} |")
        lines.append("")

    lines += broker_tables(peers, pick)
    lines += goals(rows, sweep, intervals, trials, latency, pick, med, at_six)
    plots = write_plots(args.out, sweep, intervals, lat)
    if plots:
        lines += ["", *[f"![{name}]({name})" for name in plots]]
    (args.out / "bench.md").write_text("\n".join(lines) + "\n")


def broker_tables(peers, pick):
    """With --request-log: the broker's time on each kind of transaction request, per peer, in the
    workload section's identity 100 B trials (flat out) and in the latency section's (at a fixed
    rate); each figure the median over the peer's trials."""
    lines = []
    for title, ts_of in [
            ("identity, 100 B, 6 partitions, flat out",
             lambda peer: [t for t in pick({"workload"}, peer=peer)
                           if t["transform"] == "identity" and t["size"] == 100]),
            ("the latency section's fixed rate", lambda peer: pick({"latency"}, peer=peer))]:
        body = []
        for peer in peers:
            summaries = [t["broker"] for t in ts_of(peer) if t.get("broker")]
            for kind in sorted({k for s in summaries for k in s}):
                of_kind = [s[kind] for s in summaries if kind in s]
                merged = {stat: median(k[stat] for k in of_kind)
                          for stat in of_kind[0] if stat not in ("count", "errors")}
                # Counts add up over the trials, so the errors' shares are of all requests.
                merged["count"] = sum(k["count"] for k in of_kind)
                merged["errors"] = dict(sum((collections.Counter(k.get("errors", {}))
                                             for k in of_kind), collections.Counter()))
                body += broker_requests.table_rows({kind: merged}, prefix=f"{LABELS[peer]}: ")
        if body:
            lines += [f"## The broker's time on transaction requests: {title}", "",
                      "From the broker's request log (`--request-log`, bench/broker_requests.py): "
                      "how long each request spent in the broker, and where: waiting for an I/O "
                      "thread (queue), handled (local), parked until another write or request "
                      "completed (remote), waiting for and writing the answer (response).", "",
                      broker_requests.HEADER, *body, ""]
    return lines


def goals(rows, sweep, intervals, trials, latency, pick, med, at_six):
    def rate(peer, transform="identity", size=100):
        return med(rows.get((peer, transform, size), []), "records_per_s")

    def ratio(a, b):
        return a / b if a and b else None

    checks = []

    def goal(name, value, target, higher=True, digits=2):
        ok = None if value is None else (value >= target if higher else value <= target)
        mark = "-" if ok is None else ("met" if ok else "**not met**")
        checks.append(f"| {name} | {fmt(value, digits)} | {'≥' if higher else '≤'} {target} | {mark} |")

    alo, ks, ceil, seed = "exactly-alo", "streams", "ceiling", "seed"
    # Each goal for each producer scope measured: partition-scoped (the default), instance-scoped.
    scopes = [(p, name) for p, name in [("exactly-eos", "partition-scoped"),
                                         ("exactly-eos-instance", "instance-scoped")]
              if rows.get((p, "identity", 100)) or p in sweep or p in latency
              or pick({"partitions"}, peer=p)]
    for eos, scope in scopes:
        goal(f"exactly-once / Kafka Streams, 100 B ({scope})", ratio(rate(eos), rate(ks)), 1.5)
        goal(f"exactly-once / Kafka Streams, 1 KB ({scope})",
             ratio(rate(eos, size=1024), rate(ks, size=1024)), 1.2)
        if eos in sweep and alo in sweep:
            at = dict(zip(intervals, zip(sweep[eos], sweep[alo])))
            if 100 in at:
                goal(f"exactly-once / at-least-once, 100 ms ({scope})", ratio(*at[100]), 0.95)
            if 10 in at:
                goal(f"exactly-once / at-least-once, 10 ms ({scope})", ratio(*at[10]), 0.75)
        goal(f"exactly-once / ceiling ({scope})", ratio(rate(eos), rate(ceil)), 0.8)
        goal(f"commit latency p99 (ms) ({scope})",
             med(rows.get((eos, "identity", 100), []), "commit_p99_ms"), 10, higher=False, digits=1)
        if eos in latency:
            goal(f"commit latency p99 (ms) at the latency section's rate ({scope})",
                 latency[eos]["commit_p99_ms"], 10, higher=False, digits=1)
            goal(f"end-to-end p99 (ms), at most commit interval + 25 ({scope})",
                 latency[eos]["p99_ms"], 125, higher=False, digits=1)
            if ks in latency and latency[ks]["p99_ms"]:
                goal(f"end-to-end p99 / Kafka Streams' ({scope})",
                     ratio(latency[eos]["p99_ms"], latency[ks]["p99_ms"]), 0.8, higher=False)
        goal(f"CPU per record / Kafka Streams' ({scope})",
             ratio(med(rows.get((eos, "identity", 100), []), "cpu_s_per_million"),
                   med(rows.get((ks, "identity", 100), []), "cpu_s_per_million")), 0.5,
             higher=False)
        goal(f"peak RSS at 6 partitions (MiB) ({scope})",
             med(rows.get((eos, "identity", 100), []), "rss_mib"), 64, higher=False, digits=1)
        goal(f"exactly-once / seed loop ({scope})", ratio(rate(eos), rate(seed)), 10)
        goal(f"32 partitions / 6 partitions ({scope})",
             ratio(med(pick({"partitions"}, peer=eos), "records_per_s"),
                   med(at_six(eos), "records_per_s")), 0.85)
    return ["## Goals (issue 6)", "", "| goal | measured | target | |", "| --- | --- | --- | --- |",
            *checks]


def write_plots(out, sweep, intervals, latency_trials):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log("plots: matplotlib is not importable, none written")
        return []
    names = []
    if sweep:
        fig, ax = plt.subplots(figsize=(7, 4))
        for peer, values in sweep.items():
            points = [(ms, v) for ms, v in zip(intervals, values) if v]
            if points:
                ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=LABELS[peer])
        ax.set_xscale("log")
        ax.set_xlabel("commit interval (ms)")
        ax.set_ylabel("records/s")
        ax.set_title("Throughput vs commit interval (identity, 100 B, 6 partitions)")
        ax.grid(True, alpha=0.3)
        ax.legend()
        fig.tight_layout()
        fig.savefig(out / "throughput-vs-commit-interval.png", dpi=110)
        names.append("throughput-vs-commit-interval.png")
    if latency_trials:
        fig, ax = plt.subplots(figsize=(7, 4))
        by_peer = {}
        for t in latency_trials:
            by_peer.setdefault(t["peer"], t)  # the first run of each peer
        for peer, t in by_peer.items():
            path = Path(t["samples"])
            if not path.exists():
                continue
            values = sorted(float(v) for v in path.read_text().split())
            if values:
                ax.plot(values, [(i + 1) / len(values) for i in range(len(values))],
                        label=LABELS[peer])
        ax.set_xscale("log")
        ax.set_xlabel("end-to-end latency (ms)")
        ax.set_ylabel("fraction of records")
        ax.set_title("Latency CDF (identity, 100 B, commit interval 100 ms)")
        ax.grid(True, alpha=0.3)
        ax.legend()
        fig.tight_layout()
        fig.savefig(out / "latency-cdf.png", dpi=110)
        names.append("latency-cdf.png")
    return names


if __name__ == "__main__":
    main()
