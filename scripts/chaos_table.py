#!/usr/bin/env python3
"""Writes the fault suite's results table (markdown) from the per-run rows of a results CSV.

Each row is one finished run, appended by tests/chaos/ when EXACTLY_CHAOS_RESULTS names the file:
  date, case, inputs, outputs, dlq, missing, duplicated, aborted_reads, order_violations,
  no_lineage, recoveries in milliseconds (space-separated), build (the commit; absent in older rows)
Counts are summed per case; recovery p50/max is over every recovery of every run of the case.
"""
import csv
import sys

COLUMNS = ["date", "case", "inputs", "outputs", "dlq", "missing", "duplicated", "aborted_reads",
           "order_violations", "no_lineage", "recoveries_ms", "build"]
COUNTS = COLUMNS[2:10]


def seconds(ms):
    return f"{ms / 1000:.1f}s"


def table(rows):
    cases = {}
    builds = []
    for number, row in enumerate(rows, start=1):
        if len(row) == len(COLUMNS) - 1:
            row = row + ["-"]  # a row from before the build column
        if len(row) != len(COLUMNS):
            sys.exit(f"chaos_table: row {number} has {len(row)} fields, expected {len(COLUMNS)}: {row}")
        record = dict(zip(COLUMNS, row))
        case = cases.setdefault(record["case"], {"runs": 0, "recoveries": [], "first": record["date"],
                                                 "last": record["date"], **{c: 0 for c in COUNTS}})
        case["runs"] += 1
        if record["build"] not in builds:
            builds.append(record["build"])
        for c in COUNTS:
            try:
                case[c] += int(record[c])
            except ValueError:
                sys.exit(f"chaos_table: row {number}: {c} is not a number: {record[c]!r}")
        case["recoveries"] += [int(r) for r in record["recoveries_ms"].split()]
        case["first"] = min(case["first"], record["date"])
        case["last"] = max(case["last"], record["date"])
    lines = ["| case | runs | inputs | outputs | dlq | missing | duplicated | aborted reads "
             "| order violations | recovery p50/max |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for name, c in cases.items():
        r = sorted(c["recoveries"])
        recovery = f"{seconds(r[len(r) // 2])}/{seconds(r[-1])}" if r else "-"
        lines.append(f"| {name} | {c['runs']} | {c['inputs']} | {c['outputs']} | {c['dlq']} "
                     f"| {c['missing']} | {c['duplicated']} | {c['aborted_reads']} "
                     f"| {c['order_violations']} | {recovery} |")
    dates = [c["first"] for c in cases.values()] + [c["last"] for c in cases.values()]
    return lines, (min(dates)[:10], max(dates)[:10]) if dates else ("", ""), builds


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: chaos_table.py RESULTS.csv")
    with open(sys.argv[1], newline="") as f:
        rows = [row for row in csv.reader(f) if row and not row[0].startswith("#")]
    lines, (first, last), builds = table(rows)
    print("\n".join(lines))
    print()
    print(f"Runs from {first} to {last}, on build{'s' if len(builds) > 1 else ''} "
          f"{', '.join(builds)}.")


if __name__ == "__main__":
    main()
