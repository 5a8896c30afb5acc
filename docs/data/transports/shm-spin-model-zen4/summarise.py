#!/usr/bin/env python3
"""Per model and ring size, over every round of the given `scripts/spin-model.sh`
outputs: the round trip as a multiple of the same round's cache-line round trip
(smallest, median, largest) and in how many rounds it was at most 1.25 times it.

    summarise.py set-1.txt set-2.txt > summary.txt
"""
import collections
import statistics
import sys

MODELS = ["two-line", "seq-first", "seq-last", "one-line", "shm-copy", "shm-in-place"]
by = collections.defaultdict(dict)
for f in sys.argv[1:]:
    for line in open(f):
        if line.startswith("#"):
            continue
        rnd, ring, model, ns = line.split("\t")[:4]
        by[(f, rnd, int(ring))][model] = float(ns)
print(f"# {len(by) // 2} rounds from {', '.join(sys.argv[1:])}: round trip ÷ the round's cache-line round trip")
for ring in sorted({k[2] for k in by}, reverse=True):
    rounds = [v for k, v in by.items() if k[2] == ring]
    cl = [r["cache-line"] for r in rounds]
    print(f"ring {ring} B: cache-line round trip {min(cl):.1f}-{max(cl):.1f} ns (median {statistics.median(cl):.1f})")
    for m in MODELS:
        x = [r[m] / r["cache-line"] for r in rounds]
        ok = sum(v <= 1.25 for v in x)
        print(f"  {m:13s} {min(x):.2f} median {statistics.median(x):.2f} max {max(x):.2f}; <= 1.25 in {ok} of {len(x)}")
