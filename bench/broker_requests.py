#!/usr/bin/env python3
"""The broker's own timing of transaction requests, from its request log.

With EXACTLY_BROKER_REQUEST_LOG=FILE, tests/kafka/cluster.sh has each node log every transaction
request it completes (AddPartitionsToTxn, AddOffsetsToTxn, TxnOffsetCommit, EndTxn,
WriteTxnMarkers, InitProducerId) to FILE.nodeI, one line each: the wall-clock milliseconds, then
Kafka's request-log JSON with the request's time in the broker split into its parts:

- queue: waiting for an I/O thread (request queue);
- local: handled on the I/O thread;
- remote: parked until something else completes (a replication, the group coordinator's write,
  a verification round trip to the transaction coordinator);
- response: waiting for a network thread, then writing the answer (response queue + send).

`bench/run.py --request-log` summarises each trial's window; this prints the same for a file:

    python3 bench/broker_requests.py FILE [--from MS --to MS]
"""
import argparse
import collections
import json
import re
import sys

PARTS = [("queue", ["requestQueueTimeMs"]), ("local", ["localTimeMs"]),
         ("remote", ["remoteTimeMs"]), ("response", ["responseQueueTimeMs", "sendTimeMs"])]
# Kafka's error codes a transaction request is answered with most (the rest print as numbers).
ERRORS = {14: "COORDINATOR_LOAD_IN_PROGRESS", 15: "COORDINATOR_NOT_AVAILABLE", 16: "NOT_COORDINATOR",
          47: "INVALID_PRODUCER_EPOCH", 48: "INVALID_TXN_STATE", 51: "CONCURRENT_TRANSACTIONS",
          90: "PRODUCER_FENCED"}
NAMES = {
    "ADD_PARTITIONS_TO_TXN": "AddPartitionsToTxn",
    "ADD_OFFSETS_TO_TXN": "AddOffsetsToTxn",
    "TXN_OFFSET_COMMIT": "TxnOffsetCommit",
    "END_TXN": "EndTxn",
    "WRITE_TXN_MARKERS": "WriteTxnMarkers",
    "INIT_PRODUCER_ID": "InitProducerId",
}


def read(path, windows=None):
    """[(wall ms, request-log dict)] of the lines in any of windows ([from_ms, to_ms) pairs;
    None: all)."""
    rows = []
    with open(path, errors="replace") as f:
        for line in f:
            stamp, _, rest = line.partition(" Completed request:")
            if not rest:
                continue
            try:
                ms = int(stamp)
                entry = json.loads(rest)
            except ValueError:
                continue  # a line cut short by a broker that was stopped mid-write
            if windows is None or any(a <= ms < b for a, b in windows):
                rows.append((ms, entry))
    return rows


def answer_errors(entry):
    """The error codes (other than none) in a request log entry's response."""
    text = json.dumps(entry.get("response"))
    return {int(code) for code in re.findall(r'"(?:errorCode|partitionErrorCode)": (-?\d+)', text)} - {0}


def quantile(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))] if values else None


def summarize(rows, windows=None):
    """Per request kind: count, per second, total p50/p99/max, each part's p99, of read()'s rows
    in windows ([from_ms, to_ms) pairs; None: all of them). The broker's own verification
    requests (KIP-890: a partition leader asks the transaction coordinator whether a
    transactional write belongs to an ongoing transaction) are a kind of their own."""
    if windows is not None:
        rows = [(ms, entry) for ms, entry in rows if any(a <= ms < b for a, b in windows)]
    if not rows:
        return {}
    if windows is None:
        windows = [(rows[0][0], rows[-1][0] + 1)]
    span_s = max(sum(b - a for a, b in windows) / 1000, 1e-3)
    groups = {}
    for _, entry in rows:
        header = entry.get("requestHeader", {})
        name = NAMES.get(header.get("requestApiKeyName"), header.get("requestApiKeyName"))
        request = entry.get("request") or {}
        verify = any(t.get("verifyOnly") for t in request.get("transactions", []) or [])
        key = f"{name} (broker's verification)" if verify else name
        groups.setdefault(key, []).append(entry)
    out = {}
    for key, entries in sorted(groups.items()):
        totals = [e.get("totalTimeMs", 0.0) for e in entries]
        errors = collections.Counter(code for e in entries for code in answer_errors(e))
        out[key] = {
            "count": len(entries), "per_s": len(entries) / span_s,
            "p50_ms": quantile(totals, 0.5), "p99_ms": quantile(totals, 0.99), "max_ms": max(totals),
            **{f"{part}_p99_ms": quantile([sum(e.get(f, 0.0) for f in fields) for e in entries], 0.99)
               for part, fields in PARTS},
            "errors": {ERRORS.get(code, f"error {code}"): n for code, n in errors.most_common()},
        }
    return out


HEADER = ("| request | per s | p50 ms | p99 ms | max ms | p99 ms: queue | local | remote | response "
          "| answered with an error |\n"
          "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")


def table_rows(summary, prefix=""):
    return [f"| {prefix}{key} | {s['per_s']:,.0f} | {s['p50_ms']:.1f} | {s['p99_ms']:.1f} "
            f"| {s['max_ms']:.1f} | {s['queue_p99_ms']:.1f} | {s['local_p99_ms']:.1f} "
            f"| {s['remote_p99_ms']:.1f} | {s['response_p99_ms']:.1f} "
            f"| {errors_text(s)} |"
            for key, s in summary.items()]


def errors_text(s):
    """'CONCURRENT_TRANSACTIONS 12 % (24)', per error, of the requests of that kind."""
    return ", ".join(f"{name} {n / s['count']:.0%} ({n})" for name, n in s.get("errors", {}).items()) or "-"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("log", help="a node's request log (EXACTLY_BROKER_REQUEST_LOG's FILE.nodeI)")
    parser.add_argument("--from", dest="from_ms", type=int, help="wall-clock ms, inclusive")
    parser.add_argument("--to", dest="to_ms", type=int, help="wall-clock ms, exclusive")
    args = parser.parse_args()
    try:
        window = None
        if args.from_ms is not None or args.to_ms is not None:
            window = [(args.from_ms if args.from_ms is not None else 0,
                       args.to_ms if args.to_ms is not None else 2**63)]
        summary = summarize(read(args.log, window), window)
    except OSError as e:
        sys.exit(f"broker_requests: cannot read {args.log}: {e.strerror}")
    if not summary:
        sys.exit(f"broker_requests: no transaction request in {args.log} in that window")
    print(HEADER)
    print("\n".join(table_rows(summary)))


if __name__ == "__main__":
    main()
