#!/usr/bin/env python3
"""Summary of run.sh's A/B: per point and machine mode, new ÷ base over the rounds in
which both builds' points ran in that mode.

    summarise.py RAW_DIR > summary.txt

A point's mode is read from the floor its own run paired it with: the cache-line round
trip (fast under 150 ns, slow over 250 ns), the 4 KiB hand-over round trip (fast under
600 ns, slow over 900 ns), or a stream floor (fast above three quarters of the highest that floor
read in any run, slow under a third of it; a 64 B stream, held against memcpy, takes the
mode of its run's 4 KiB stream). It counts only when the cache-line round trips its run
measured before its first point and after its last say the same mode, since the machine
switches modes within seconds. The figure is the mean round trip of a ping-pong (its
p50s are listed too) and the throughput of a stream (with its fraction of the floor).
"""
import collections
import glob
import json
import statistics
import sys

raw = sys.argv[1]
FILES = {"pp": "ping-pong in place", "ppc": "ping-pong copying", "st": "stream in place", "stc": "stream copying"}


def load(kind, v, i):
    try:
        return json.load(open(f"{raw}/{kind}-{v}-{i}.json"))
    except (OSError, ValueError):
        return None


highest = collections.defaultdict(float)
docs = {}
rounds = len(glob.glob(f"{raw}/pp-base-*.json"))
for kind in FILES:
    for v in ("base", "new"):
        for i in range(1, rounds + 1):
            d = load(kind, v, i)
            docs[(kind, v, i)] = d
            for p in (d or {}).get("points", []):
                highest[p["limit"]["limit"]] = max(highest[p["limit"]["limit"]], p["limit"]["limit_value"])


def run_mode(doc):
    ends = [doc["context"]["limits"][k]["cache_line_rtt_ns"]["median"] for k in ("start", "end")]
    return "fast" if max(ends) < 150 else "slow" if min(ends) > 250 else None


def mode_of(p, doc):
    m = point_mode(p, doc)
    return m if m == run_mode(doc) else None


def point_mode(p, doc):
    lim = p["limit"]
    name, val = lim["limit"], lim["limit_value"]
    if name.startswith("cache-line"):
        return "fast" if val < 150 else "slow" if val > 250 else None
    if name.startswith("hand-over"):
        return "fast" if val < 600 else "slow" if val > 900 else None
    if name.startswith("stream floor"):
        top = highest[name]
        return "fast" if val > top * 0.75 else "slow" if val < top / 3 else None
    sizes = [q for q in doc["points"] if q["params"]["size"] == "4096"]
    return point_mode(sizes[0], doc) if sizes else None


table = collections.defaultdict(list)
for kind in FILES:
    for i in range(1, rounds + 1):
        b, n = docs[(kind, "base", i)], docs[(kind, "new", i)]
        if not b or not n:
            continue
        for pb, pn in zip(b["points"], n["points"]):
            mb, mn = mode_of(pb, b), mode_of(pn, n)
            if mb is None or mb != mn:
                continue
            sb, sn = pb["summary"], pn["summary"]
            key = (kind, int(pb["params"]["size"]), mb)
            if kind.startswith("pp"):
                table[key].append((i, sn["latency_mean_ns"]["median"] / sb["latency_mean_ns"]["median"],
                                   sb["latency_p50_ns"]["median"], sn["latency_p50_ns"]["median"]))
            else:
                table[key].append((i, sn["throughput_bytes_per_s"]["median"] / sb["throughput_bytes_per_s"]["median"],
                                   pb["limit"]["fraction"], pn["limit"]["fraction"]))

print(f"# {rounds} rounds; new ÷ base per point where both ran in one mode")
for (kind, size, mode), rows in sorted(table.items(), key=lambda kv: (kv[0][2], kv[0][0], kv[0][1])):
    r = [x[1] for x in rows]
    what = "mean round trip" if kind.startswith("pp") else "throughput"
    extra = (f"p50 base {statistics.median(x[2] for x in rows):.0f} ns, new {statistics.median(x[3] for x in rows):.0f} ns"
             if kind.startswith("pp") else
             f"of floor base {min(x[2] for x in rows):.2f}-{max(x[2] for x in rows):.2f}, "
             f"new {min(x[3] for x in rows):.2f}-{max(x[3] for x in rows):.2f}")
    print(f"{mode}\t{FILES[kind]}\t{size} B\trounds {len(rows)}\t{what} new/base median {statistics.median(r):.2f} "
          f"({min(r):.2f}-{max(r):.2f})\t{extra}")
