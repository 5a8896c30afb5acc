#!/usr/bin/env bash
# Checks `xferbench limits` against the C reference (scripts/limits-ref.c), measured
# back to back and alternated ROUNDS times so both see the same machine:
#
#   scripts/limits-check.sh [ROUNDS] [XFERBENCH]
#
# Prints each probe's median over the rounds from both and their ratio, the median of
# the rounds' ratios (each round runs both back to back, so a machine that switches
# between a fast and a slow mode between rounds touches both alike); a ratio outside
# 0.85–1.15 (15 %) is marked, and the exit status is 1 when any is. Both copy
# between page-aligned buffers and at the same other placements (dst − src ≡ 16, 64,
# 2048 mod 4096), hand a 4 KiB and a 64 KiB buffer over and back through the same
# pools of page-aligned slots, and stream 4, 16 and 64 KiB messages one way through
# the same 4 MiB ring (the stream floor, copied and in place). Each round also runs the C reference a second time, a
# control: the "C vs C" column is the same program against itself, what the ratio
# reads when the probes measure the same thing and only the machine moves (it
# does not count towards the exit status). Odd rounds run xferbench, C, C; even
# rounds C, C, xferbench, so neither always finds the machine as the other left it
# and the control's two runs are as far apart as xferbench's and C's. Needs gcc and
# python3.
#
# The hand-over has a slow mode of its own on a VM: a round's 64 KiB hand-over is now
# and then 3-4x its usual time (~25 µs against ~6 µs on an AMD EPYC VM), in either
# program, and the two programs' hand-overs run seconds apart, so a round's pair often
# straddles a change. Its rows therefore compare the two programs' medians over the
# rounds (a slow round moves neither while slow rounds are a minority), not the
# median of the rounds' ratios, and every round is listed below the table with each
# program's cache-line round trip of that round. The system call and the wake-up
# round trips (futex, pipe) have modes on a VM too, switching within seconds (see
# docs/limits.md): they are listed per round as well, each with its smallest and
# largest sample, and every program run with the hypervisor's steal time and the
# two CPUs' idle entries during it, so a ratio outside 15 % can be told apart from a
# probe that measures the wrong thing.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-7}
xb=${2:-target/release/xferbench}
[ -x "$xb" ] || cargo build --release -q
ref=$(mktemp -d)/limits-ref
trap 'rm -rf "$(dirname "$ref")"' EXIT
gcc -O2 -pthread -o "$ref" scripts/limits-ref.c
out=$(dirname "$ref")
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) CPUs, kernel $(uname -r), $(date -u +%FT%TZ)"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
# The steal time and idle entries of the two probe CPUs (0 and 1), and the clock.
snap() {
    { date +%s.%N; grep -E '^cpu[01] ' /proc/stat
      { cat /sys/devices/system/cpu/cpu[01]/cpuidle/state*/usage 2>/dev/null || true; } | paste -sd' '; } >"$1"
}
xb_run() { snap "$out/xb.$1.pre"; "$xb" limits --json >"$out/xb.$1.json"; snap "$out/xb.$1.post"; }
c_run() { snap "$out/$2.$1.pre"; "$ref" >"$out/$2.$1.tsv"; snap "$out/$2.$1.post"; }
for i in $(seq "$rounds"); do
    if (( i % 2 )); then xb_run "$i"; c_run "$i" c; c_run "$i" c2
    else c_run "$i" c2; c_run "$i" c; xb_run "$i"; fi
done
echo "load average after:  $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$out" "$rounds" <<'PY'
import json, os, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
names = {
    "memcpy 4 KiB": ("memcpy", 4096, 1e9), "memcpy 64 KiB": ("memcpy", 65536, 1e9),
    "memcpy 2 MiB": ("memcpy", 2 << 20, 1e9), "memcpy 64 MiB": ("memcpy", 64 << 20, 1e9),
    "cache-line round trip": ("cache_line_rtt_ns", None, 1),
    "futex wake round trip, across": ("futex_rtt_cross_ns", None, 1),
    "futex wake round trip, one CPU": ("futex_rtt_same_ns", None, 1),
    "system call (getppid)": ("syscall_ns", None, 1),
    "pipe round trip": ("pipe_rtt_ns", None, 1),
    "hand-over round trip 4 KiB": ("handover", 4096, 1),
    "hand-over round trip 64 KiB": ("handover", 65536, 1),
    "stream floor 4 KiB": ("stream", (4096, False), 1e9),
    "stream floor 4 KiB in place": ("stream", (4096, True), 1e9),
    "stream floor 16 KiB": ("stream", (16384, False), 1e9),
    "stream floor 16 KiB in place": ("stream", (16384, True), 1e9),
    "stream floor 64 KiB": ("stream", (65536, False), 1e9),
    "stream floor 64 KiB in place": ("stream", (65536, True), 1e9),
}
for size in (4096, 65536, 2 << 20):
    for offset in (16, 64, 2048):
        base = next(n for n, v in names.items() if v[1] == size)
        names[f"{base} at {offset}"] = ("placement", (size, offset), 1e9)
def xb_estimate(doc, key, size):
    """The xferbench estimate behind a row (median, min, max), or None."""
    if key == "memcpy":
        return next(c["bytes_per_s"] for c in doc["memcpy"] if c["size_bytes"] == size)
    if key == "placement":
        return next(p["bytes_per_s"] for p in doc["placements"]
                    if (p["size_bytes"], p["offset"]) == size)
    if key == "handover":
        return next((h["rtt_ns"] for h in doc.get("handover_rtt_ns", [])
                     if h["size_bytes"] == size), None)
    if key == "stream":
        return next((f["bytes_per_s"] for f in doc.get("stream_floor", [])
                     if (f["size_bytes"], f["in_place"]) == size), None)
    return doc.get(key)
def xb_value(doc, key, size, scale):
    if key == "memcpy":
        return next(c["bytes_per_s"]["median"] for c in doc["memcpy"] if c["size_bytes"] == size) / scale
    if key == "placement":
        return next(p["bytes_per_s"]["median"] for p in doc["placements"]
                    if (p["size_bytes"], p["offset"]) == size) / scale
    if key == "handover":
        return next((h["rtt_ns"]["median"] for h in doc.get("handover_rtt_ns", [])
                     if h["size_bytes"] == size), float("nan"))
    if key == "stream":
        return next((f["bytes_per_s"]["median"] for f in doc.get("stream_floor", [])
                     if (f["size_bytes"], f["in_place"]) == size), float("nan")) / scale
    return doc[key]["median"] if doc.get(key) else float("nan")
rows = {n: ([], []) for n in names}
# The control: the C reference's second run of each round.
control = {n: [] for n in names}
# Each round's smallest and largest sample, per program: (xferbench, C) lists of pairs.
ranges = {n: ([], []) for n in names}
nan = float("nan")
for i in range(1, rounds + 1):
    doc = json.load(open(f"{out}/xb.{i}.json"))
    for line in open(f"{out}/c.{i}.tsv"):
        name, value, unit, *lohi = line.rstrip("\n").split("\t")
        key, size, scale = names[name]
        rows[name][0].append(xb_value(doc, key, size, scale))
        rows[name][1].append(float(value))
        e = xb_estimate(doc, key, size)
        ranges[name][0].append((e["min"] / scale, e["max"] / scale) if e else (nan, nan))
        ranges[name][1].append(tuple(map(float, lohi)) if len(lohi) == 2 else (nan, nan))
    for line in open(f"{out}/c2.{i}.tsv"):
        name, value, *_ = line.rstrip("\n").split("\t")
        control[name].append(float(value))
def run_state(prog, i):
    """Seconds, the two CPUs' steal as a share of their time, and their idle entries."""
    def read(f):
        t, *lines = open(f).read().splitlines()
        steal = sum(int(l.split()[8]) for l in lines if l.startswith("cpu"))
        idle = [l for l in lines if not l.startswith("cpu")]
        return float(t), steal, sum(map(int, idle[0].split())) if idle and idle[0] else 0
    (t0, s0, e0), (t1, s1, e1) = read(f"{out}/{prog}.{i}.pre"), read(f"{out}/{prog}.{i}.post")
    hz = os.sysconf("SC_CLK_TCK")
    return t1 - t0, (s1 - s0) / hz / (2 * max(t1 - t0, 1e-9)), e1 - e0
b = json.load(open(f"{out}/xb.1.json")).get("build") or {}
print(f"xferbench build: profile {b.get('profile', '?')}, opt-level {b.get('opt_level', '?')}")
print(f"{'probe':42} {'xferbench':>12} {'C reference':>12} {'ratio':>7} {'C vs C':>7}")
bad = 0
for name, (x, c) in rows.items():
    mx, mc = statistics.median(x), statistics.median(c)
    r = statistics.median(a / b for a, b in zip(x, c))
    aa = statistics.median(a / b for a, b in zip(c, control[name]))
    label = name
    if name.startswith("hand-over"):
        r = mx / mc
        aa = mc / statistics.median(control[name])
        label = f"{name} (medians)"
    unit = "GB/s" if name.startswith(("memcpy", "stream")) else "ns"
    flag = "" if 0.85 <= r <= 1.15 else "  <-- outside 15 %"
    bad += bool(flag)
    print(f"{label:42} {mx:10.1f} {unit:4} {mc:8.1f} {unit:4} {r:6.2f} {aa:7.2f}{flag}")
print(f"{rounds} alternated rounds; {bad} probe(s) outside 15 % (the C vs C control: "
      f"{sum(not 0.85 <= statistics.median(a / b for a, b in zip(c, control[n])) <= 1.15 for n, (x, c) in rows.items() if not n.startswith('hand-over'))}"
      " of the others outside)")
print()
print("hand-over round trips per round, ns (in brackets: the same program's cache-line round trip that round)")
line = rows["cache-line round trip"]
names_ho = [n for n in rows if n.startswith("hand-over")]
print(f"{'round':>5} " + " ".join(f"{n[len('hand-over round trip '):] + ' xferbench':>24} {'C':>20}" for n in names_ho))
for i in range(rounds):
    cells = []
    for n in names_ho:
        x, c = rows[n]
        cells.append(f"{x[i]:12.0f} ({line[0][i]:5.0f}) {c[i]:12.0f} ({line[1][i]:5.0f})")
    print(f"{i + 1:>5} " + "    ".join(cells))
print()
print("wake-up round trips and the system call per round, ns: each program's median [smallest-largest")
print("sample], the round's ratio, the C reference's second run (the control) and its ratio to the")
print("first, then each program's cache-line round trip that round")
for n in ("futex wake round trip, across", "futex wake round trip, one CPU", "pipe round trip",
          "system call (getppid)"):
    print(f"  {n}")
    print(f"{'round':>7} {'xferbench':>26} {'C':>26} {'ratio':>6}   {'C again':>9} {'C/C':>5}  {'cache line':>12}")
    x, c = rows[n]
    for i in range(rounds):
        (xl, xh), (cl, ch) = ranges[n][0][i], ranges[n][1][i]
        mark = "" if 0.85 <= x[i] / c[i] <= 1.15 else " *"
        c2 = control[n][i]
        mark2 = "" if 0.85 <= c[i] / c2 <= 1.15 else " *"
        print(f"{i + 1:>7} {x[i]:9.0f} [{xl:6.0f}-{xh:7.0f}] {c[i]:9.0f} [{cl:6.0f}-{ch:7.0f}] "
              f"{x[i] / c[i]:6.2f}{mark:2} {c2:9.0f} {c[i] / c2:5.2f}{mark2:2} {line[0][i]:5.0f} {line[1][i]:5.0f}")
print()
print("each program run: seconds, steal time of CPUs 0-1 (share of their time), their idle entries")
print(f"{'round':>5} {'first':>10} {'xferbench':>26} {'C':>26} {'C again':>26}")
for i in range(1, rounds + 1):
    cells = []
    for prog in ("xb", "c", "c2"):
        t, st, idle = run_state(prog, i)
        cells.append(f"{t:5.2f} s {100 * st:5.1f} % {idle:8d}")
    print(f"{i:>5} {'xferbench' if i % 2 else 'C again':>10} {cells[0]:>26} {cells[1]:>26} {cells[2]:>26}")
sys.exit(1 if bad else 0)
PY
