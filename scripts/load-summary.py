#!/usr/bin/env python3
"""The tables of docs/load.md from the result files of scripts/load-data.sh.

    scripts/load-summary.py [DIR]      (DIR defaults to docs/data/load)

Writes DIR/summary.md: the knees, each curve at 10/50/90 % of its knee (alone and
beside a memory neighbour), one way against ping-pong, and the search against the
dense sweep. Every figure is a median over a point's runs, read from the JSON files.
"""
import glob
import json
import os
import re
import statistics
import sys

d = sys.argv[1] if len(sys.argv) > 1 else "docs/data/load"


def load(name):
    with open(os.path.join(d, name)) as f:
        return json.load(f)


def med(p, fig):
    s = p["summary"].get(fig)
    return None if s is None else s["median"]


def ns(v):
    if v is None:
        return "-"
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if v >= scale:
            x = v / scale
            return f"{x:.3g} {unit}" if x < 100 else f"{x:.0f} {unit}"
    return f"{v:.0f} ns"


def rate(v):
    if v is None:
        return "-"
    for unit, scale in (("M/s", 1e6), ("k/s", 1e3)):
        if v >= scale:
            x = v / scale
            return f"{x:.3g} {unit}" if x < 100 else f"{x:.0f} {unit}"
    return f"{v:.0f} /s"


def size(b):
    b = int(b)
    return f"{b // 1024} KiB" if b >= 1024 else f"{b} B"


def stall_p99(doc):
    """The CPUs' own p99 wait for the CPU (the `stalls` of the run's limits): per CPU
    the better of the start and the end, then the longest of the CPUs, as the lab
    holds a sender to it. None in results without the probe."""
    limits = doc["context"].get("limits") or {}
    best = {}
    for side in ("start", "end"):
        for st in (limits.get(side) or {}).get("stalls", []):
            v = st["wait_p99_ns"]["median"]
            best[st["cpu"]] = min(v, best.get(st["cpu"], v))
    return max(best.values()) if best else None


def own_stall(p):
    """The sender's own CPU's p99 wait while it waited for its messages' times
    (`sender_stall_p99_ns`), None where the point does not record it."""
    return med(p, "sender_stall_p99_ns")


def pacing(p, stall):
    """The pacing target: achieved within 1 % of offered, and the sender's lag p99
    under 10 % of the gap between its messages (✓). Where the lag is over it, whether
    the longer of the CPUs' stall p99 and the sender's own CPU's reaches 10 % of the gap
    too and the lag is at most twice it
    (`machine`: no sender keeps closer here) or not (`sender`: the sends themselves
    fall behind), as the lab's `behind schedule:` warning says."""
    offered, achieved = med(p, "offered_per_s"), med(p, "messages_per_s")
    lag = med(p, "behind_p99_ns")
    gap_ns = 1e9 * int(p["channels"]) / offered
    kept = abs(achieved / offered - 1) <= 0.01
    on_time = lag < 0.1 * gap_ns
    own = own_stall(p)
    if own is not None:
        stall = own if stall is None else max(stall, own)
    if on_time:
        mark = " ✓" if kept else ""
    elif stall is not None:
        # The lab's rule (`behind schedule:`): the CPUs' stalls reach the allowance and
        # the lag is at most twice them.
        mark = " machine" if stall >= 0.1 * gap_ns and lag <= 2 * stall else " sender"
    else:
        mark = ""
    share = lag / gap_ns
    share = f"{share:.0f}× the gap" if share >= 10 else f"{share * 100:.0f} % of gap"
    return f"{achieved / offered * 100:.1f} %, lag {share}{mark}"


def transport(t):
    return t.split(":")[-1] if t.startswith("plugin:") else t


def context_line(doc, name):
    c = doc["context"]
    b = c.get("build") or {}
    contended = sum(1 for p in doc["points"] if (p.get("contention") or {}).get("contended"))
    load = c.get("load") or {}
    start = load.get("load_1m_start")
    start = f", load average {start} at the start" if start is not None else ""
    return (
        f"`{name}`: {c['cpu_model']}, {c['cores']} CPUs, kernel {c['kernel']}, "
        f"{b.get('profile', '?')} build{start}; {contended} of {len(doc['points'])} points "
        f"contended (each point's own record)"
    )


out = []
# A directory of one step's files (`STEPS=4 scripts/load-data.sh DIR`) has no knees.
if os.path.exists(os.path.join(d, "knees.json")):
    knees = load("knees.json")
    out.append("## Knees (`--rate auto`)\n")
    out.append(context_line(knees, "knees.json") + "\n")
    out.append("| transport | size | knee | first rate not sustained | reference p99 at 1 k/s | probes | search time |")
    out.append("|---|--:|--:|--:|--:|--:|--:|")
    for k in knees["knees"]:
        p = k["params"]
        out.append(
            f"| {transport(p['transport'])} | {size(p['size'])} | {rate(k['knee_per_s'])} | "
            f"{rate(k['above_per_s'])} | {ns(k['low_p99_ns'])} | {k['points']} | {k.get('seconds', 0):.1f} s |"
        )

for kind, title in (("fractions", "alone"), ("neighbours", "beside one `memory:1` neighbour")):
    files = sorted(glob.glob(os.path.join(d, f"{kind}-*.json")))
    if not files:
        continue
    out.append(f"\n## At 10, 50 and 90 % of each knee, {title}\n")
    out.append("Medians of 5 interleaved runs per point.\n")
    cols = "| transport | size | offered | achieved | p50 | p99 | p99.9 | max | behind p99 | CPU stall p99 | sender's CPU stall p99 | pacing | contended |"
    if kind == "neighbours":
        cols = cols + " neighbour CPUs |"
    out.append(cols)
    out.append("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--|--:|" + ("--:|" if kind == "neighbours" else ""))
    for f in files:
        doc = load(os.path.basename(f))
        stall = stall_p99(doc)
        for p in doc["points"]:
            row = (
                f"| {transport(p['params']['transport'])} | {size(p['size_bytes'])} | "
                f"{rate(med(p, 'offered_per_s'))} | {rate(med(p, 'messages_per_s'))} | "
                f"{ns(med(p, 'latency_p50_ns'))} | {ns(med(p, 'latency_p99_ns'))} | "
                f"{ns(med(p, 'latency_p999_ns'))} | {ns(med(p, 'latency_max_ns'))} | "
                f"{ns(med(p, 'behind_p99_ns'))} | {ns(stall)} | {ns(own_stall(p))} | {pacing(p, stall)} | "
                f"{'yes' if (p.get('contention') or {}).get('contended') else 'no'} |"
            )
            if kind == "neighbours":
                row += f" {med(p, 'neighbours_cpus') or 0:.2f} |"
            out.append(row)
    out.append("")
    out.append(context_line(load(os.path.basename(files[0])), os.path.basename(files[0])))

pairs = []
for i in range(1, 10):
    try:
        pp = load(f"physics-pingpong-{i}.json")["points"][0]
        ld = load(f"physics-load-{i}.json")["points"][0]
    except FileNotFoundError:
        break
    pairs.append((med(pp, "latency_p50_ns"), med(ld, "latency_p50_ns"), med(ld, "behind_p99_ns")))
if pairs:
    out.append("\n## One way against a round trip (shm, 64 B, `wait=spin`, `--pin`)\n")
    out.append("Each pair: `run pingpong -n 20000`, then `run load --rate 10k -n 20000`, in turn.\n")
    out.append("| pair | ping-pong p50 | load one-way p50 | ratio | load behind p99 |")
    out.append("|--:|--:|--:|--:|--:|")
    for i, (a, b, lag) in enumerate(pairs, 1):
        out.append(f"| {i} | {ns(a)} | {ns(b)} | {b / a:.2f} | {ns(lag)} |")
    ratios = [b / a for a, b, _ in pairs]
    out.append(f"\nMedian ratio {statistics.median(ratios):.2f}, range {min(ratios):.2f}–{max(ratios):.2f}.")

searches = []
times = open(os.path.join(d, "load.txt")).read()
for i in range(1, 10):
    try:
        auto = load(f"search-auto-{i}.json")
        dense = load(f"search-dense-{i}.json")
    except FileNotFoundError:
        break
    m = re.search(rf"search {i}: auto ([\d.]+) s, dense ([\d.]+) s", times)
    ta, td = (float(m.group(1)), float(m.group(2))) if m else (None, None)
    searches.append((auto["knees"][0], dense["knees"][0], ta, td))
    grid = sorted(med(p, "offered_per_s") for p in dense["points"])
if searches:
    out.append("\n## `--rate auto` against a dense sweep (unix, 64 B)\n")
    # The sweeps before the knee's rule named the rates below it that failed drew
    # their rates around the search's knee; later ones from a fixed range.
    fixed = any("unsustained_below_per_s" in kd for _, kd, _, _ in searches)
    if fixed:
        out.append(
            f"Each pair: the search, then a sweep of {rate(grid[0])} and {len(grid) - 1} rates ×1.2 "
            f"from {rate(grid[1])} to {rate(grid[-1])}, in turn.\n"
        )
        out.append("| pair | search: knee | first not sustained | probes | time | sweep: knee | first not sustained | not sustained below the knee | time | knee ratio | time ratio |")
        out.append("|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
    else:
        out.append("Each pair: the search, then a sweep of 1 k/s and 16 rates ×1.2 around its knee, in turn.\n")
        out.append("| pair | search: knee | first not sustained | probes | time | sweep: knee | first not sustained | time | knee ratio | time ratio |")
        out.append("|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
    for i, (ka, kd, ta, td) in enumerate(searches, 1):
        ratio = ka["knee_per_s"] / kd["knee_per_s"] if ka["knee_per_s"] and kd["knee_per_s"] else None
        below = ", ".join(rate(r) for r in kd.get("unsustained_below_per_s", [])) or "none"
        out.append(
            f"| {i} | {rate(ka['knee_per_s'])} | {rate(ka['above_per_s'])} | {ka['points']} | "
            f"{ta:.1f} s | {rate(kd['knee_per_s'])} | {rate(kd['above_per_s'])} | "
            + (f"{below} | " if fixed else "")
            + f"{td:.1f} s | {'-' if ratio is None else f'{ratio:.2f}×'} | {ta / td * 100:.0f} % |"
        )
    out.append("")
    out.append(context_line(auto, f"search-auto-{len(searches)}.json") + ".")

try:
    doc = load("iceoryx2-buffer.json")
    out.append("\n## iceoryx2 beside a memory neighbour: its subscriber buffer (64 B, 50 k/s)\n")
    out.append("Medians of 5 interleaved runs per point.\n")
    out.append("| buffer | offered | achieved | p50 | p99 | behind p99 | CPU main | CPU peers | contended |")
    out.append("|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
    for p in doc["points"]:
        out.append(
            f"| {p['params'].get('buffer', '-')} | {rate(med(p, 'offered_per_s'))} | "
            f"{rate(med(p, 'messages_per_s'))} | {ns(med(p, 'latency_p50_ns'))} | "
            f"{ns(med(p, 'latency_p99_ns'))} | {ns(med(p, 'behind_p99_ns'))} | "
            f"{med(p, 'cpu_main_cpus') or 0:.2f} | {med(p, 'cpu_peers_cpus') or 0:.2f} | "
            f"{'yes' if (p.get('contention') or {}).get('contended') else 'no'} |"
        )
    out.append("")
    out.append(context_line(doc, "iceoryx2-buffer.json"))
except FileNotFoundError:
    pass

pacing = sorted(glob.glob(os.path.join(d, "pacing-*.json")))
if pacing:
    out.append("\n## Pacing by rate: the sender's lag p99 as a share of the gap\n")
    out.append(
        "Medians of 5 interleaved runs per point; ✓ where the lag p99 is under a tenth of the "
        "gap between messages (on schedule), and the achieved share of the offered rate where "
        "it is under 99 %.\n"
    )
    rows = []
    rates = None
    for f in pacing:
        doc = load(os.path.basename(f))
        curves = {}
        for p in doc["points"]:
            key = (transport(p["params"]["transport"]), p["size_bytes"])
            curves.setdefault(key, []).append(p)
        for (t, b), ps in curves.items():
            ps.sort(key=lambda p: med(p, "offered_per_s"))
            rates = rates or [med(p, "offered_per_s") for p in ps]
            cells = []
            for p in ps:
                gap = 1e9 / med(p, "offered_per_s")
                share = med(p, "behind_p99_ns") / gap
                cell = "✓" if share < 0.1 else f"{share * 100:.0f} %" if share < 10 else f"{share:.0f}×"
                delivered = med(p, "messages_per_s") / med(p, "offered_per_s")
                if delivered < 0.99:
                    cell += f" ({delivered * 100:.0f} % delivered)"
                cells.append(cell)
            rows.append(f"| {t} | {size(b)} | " + " | ".join(cells) + " |")
    out.append("| transport | size | " + " | ".join(rate(r) for r in rates) + " |")
    out.append("|---|--:|" + "--:|" * len(rates))
    out.extend(rows)
    out.append("")
    out.append(context_line(load(os.path.basename(pacing[0])), os.path.basename(pacing[0])) + ".")

with open(os.path.join(d, "summary.md"), "w") as f:
    f.write("\n".join(out) + "\n")
print("\n".join(out))
