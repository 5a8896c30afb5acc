#!/usr/bin/env python3
"""Per program of a run.sh log: its mean round trip over the benchmark's in the same
round, median and range, over the rounds where every program ran in the fast mode
(all under 600 ns) and over those where every one ran in the slow mode (all over
1000 ns); a round that switched modes between its programs is left out.

    summarise.py rounds-1.txt"""
import statistics
import sys

rows = []
for line in open(sys.argv[1]):
    if line.startswith("#") or not line.strip():
        continue
    fields = line.split()
    rows.append({k: float(v) for k, v in (f.split("=") for f in fields[1:])})
for mode, keep in (("fast", lambda v: v < 600), ("slow", lambda v: v > 1000)):
    rs = [r for r in rows if all(keep(v) for v in r.values())]
    print(f"{mode}: {len(rs)} rounds; benchmark {min(r['bench'] for r in rs):.0f}-{max(r['bench'] for r in rs):.0f} ns")
    for k in rows[0]:
        if k == "bench":
            continue
        ratio = [r[k] / r["bench"] for r in rs]
        mean = [r[k] for r in rs]
        print(f"  {k}: ratio median {statistics.median(ratio):.2f} ({min(ratio):.2f} to {max(ratio):.2f}); {min(mean):.0f}-{max(mean):.0f} ns")
