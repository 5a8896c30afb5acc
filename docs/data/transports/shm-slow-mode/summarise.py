#!/usr/bin/env python3
"""Puts each round of run.sh in the VM's fast or slow mode and holds its ping-pongs
against the hand-over round trip measured around it.

    summarise.py RAW_DIR > rounds.txt        (one line per round)
    summarise.py RAW_DIR --summary > summary.txt

A round's mode is read from its floor, the hand-over round trip of 64 KiB, measured
before and after it: "fast" when both read under 3.5 µs, "slow" when both read over
4.5 µs, else "mixed" (left out of the summary). The cache-line round trip switches
on its own schedule (a round can find it slow and the hand-over fast), so it is
printed but does not decide. The floor is the mean of the two hand-overs.
"""
import glob
import json
import os
import statistics
import sys

VARIANTS = [
    ("copy", "capacity=4 MiB (auto), copying"),
    ("inplace", "capacity=4 MiB (auto), in place"),
    ("copy128", "capacity=128 KiB, copying"),
    ("inplace128", "capacity=128 KiB, in place"),
    ("batch64", "capacity=4 MiB, batch=64 KiB, copying"),
]


def key(params):
    small = params.get("capacity") == "131072"
    inplace = params.get("zero_copy") == "true"
    if params.get("batch") == "65536":
        return "batch64"
    return ("inplace" if inplace else "copy") + ("128" if small else "")


def limits(path):
    d = json.load(open(path))
    cl = d["cache_line_rtt_ns"]["median"]
    ho = next(h["rtt_ns"]["median"] for h in d["handover_rtt_ns"] if h["size_bytes"] == 65536)
    return cl, ho


def rounds(raw):
    out = []
    n = len(glob.glob(os.path.join(raw, "limits-*-b.json")))
    for i in range(1, n + 1):
        try:
            cl_a, ho_a = limits(f"{raw}/limits-{i}-a.json")
            cl_b, ho_b = limits(f"{raw}/limits-{i}-b.json")
            p50, paired = {}, {}
            for f in (f"{raw}/pingpong-{i}.json", f"{raw}/batch-{i}.json"):
                for p in json.load(open(f))["points"]:
                    p50[key(p["params"])] = p["summary"]["latency_p50_ns"]["median"]
                    paired[key(p["params"])] = p["limit"]["limit_value"]
        except (OSError, ValueError, KeyError, StopIteration):
            continue
        if ho_a < 3500 and ho_b < 3500:
            mode = "fast"
        elif ho_a > 4500 and ho_b > 4500:
            mode = "slow"
        else:
            mode = "mixed"
        floor = (ho_a + ho_b) / 2
        out.append(dict(i=i, mode=mode, cl=(cl_a, cl_b), ho=(ho_a, ho_b), floor=floor, p50=p50, paired=paired))
    return out


def print_rounds(rs):
    names = [k for k, _ in VARIANTS]
    print("# round mode cache-line(before,after) hand-over-64KiB(before,after) | p50 ns: "
          + " ".join(names) + " | ÷ floor: " + " ".join(names))
    for r in rs:
        p = [r["p50"].get(k) for k in names]
        print(f"{r['i']:4d} {r['mode']:5s} {r['cl'][0]:6.0f} {r['cl'][1]:6.0f} "
              f"{r['ho'][0]:8.0f} {r['ho'][1]:8.0f} | "
              + " ".join(f"{v:8.0f}" if v else "       -" for v in p) + " | "
              + " ".join(f"{v / r['floor']:5.2f}" if v else "    -" for v in p))


def spread(xs):
    xs = sorted(xs)
    q = statistics.quantiles(xs, n=4) if len(xs) >= 4 else [xs[0], statistics.median(xs), xs[-1]]
    return f"median {statistics.median(xs):6.2f}  quartiles {q[0]:5.2f}–{q[2]:5.2f}  range {xs[0]:5.2f}–{xs[-1]:5.2f}"


def point_mode(floor):
    return "fast" if floor < 3500 else "slow" if floor > 4500 else "mixed"


def print_paired(rs):
    """Each point against its own paired floor (the hand-over samples the run took
    around its runs), its mode read from that floor."""
    print("== each point against the floor its run paired with it (mode read from that floor)")
    for mode in ("fast", "slow"):
        for k, label in VARIANTS:
            v = [r["p50"][k] / r["paired"][k] for r in rs
                 if k in r["paired"] and point_mode(r["paired"][k]) == mode]
            if v:
                print(f"{mode:4s} {label:40s} {len(v):4d} points  ÷ floor: {spread(v)}")


def print_summary(rs):
    for mode in ("fast", "slow"):
        m = [r for r in rs if r["mode"] == mode]
        print(f"== {mode} mode: {len(m)} rounds (of {len(rs)}; {sum(r['mode'] == 'mixed' for r in rs)} mixed left out)")
        if not m:
            continue
        print(f"cache-line round trip, ns:      {spread([x for r in m for x in r['cl']])}")
        print(f"hand-over 64 KiB, µs:           {spread([x / 1000 for r in m for x in r['ho']])}")
        print(f"hand-over after ÷ before:       {spread([r['ho'][1] / r['ho'][0] for r in m])}")
        for k, label in VARIANTS:
            v = [r for r in m if k in r["p50"]]
            if not v:
                continue
            print(f"{label:40s} p50 µs: {spread([r['p50'][k] / 1000 for r in v])}")
            print(f"{'':40s} ÷ floor: {spread([r['p50'][k] / r['floor'] for r in v])}")
            if k != "copy":
                print(f"{'':40s} ÷ copying 4 MiB: {spread([r['p50'][k] / r['p50']['copy'] for r in v if 'copy' in r['p50']])}")


if __name__ == "__main__":
    rs = rounds(sys.argv[1])
    if "--summary" in sys.argv:
        print_summary(rs)
        print_paired(rs)
    else:
        print_rounds(rs)
