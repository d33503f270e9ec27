#!/usr/bin/env python3
"""The heaviest crates of a `cargo build --timings` report.

Usage: timings.py REPORT.html [N]

Reads the report's UNIT_DATA (one entry a unit: a crate's lib, its build
script's compile and run, a proc macro) and prints the N crates (default 15)
with the most compile time, each unit of a crate summed, as
`seconds  name version  (units)`. The time is the units' wall time on the
build's shared cores, so the sum over crates exceeds the build's wall time.
"""
import json
import re
import sys
from collections import defaultdict


def units(path):
    html = open(path, encoding="utf-8").read()
    match = re.search(r"UNIT_DATA\s*=\s*", html)
    if not match:
        sys.exit(f"{path}: no UNIT_DATA")
    data, _ = json.JSONDecoder().raw_decode(html, match.end())
    return data


def main():
    path = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 15
    total = defaultdict(float)
    kinds = defaultdict(list)
    for unit in units(path):
        key = f"{unit['name']} {unit['version']}"
        total[key] += unit["duration"]
        target = unit["target"].strip() or "lib"
        kinds[key].append(f"{target} {unit['duration']:.1f}")
    every = sum(total.values())
    print(f"{len(total)} crates, {every:.1f} s of unit time in all")
    for key, seconds in sorted(total.items(), key=lambda kv: -kv[1])[:n]:
        print(f"{seconds:7.1f}  {key:<32} ({'; '.join(kinds[key])})")


if __name__ == "__main__":
    main()
