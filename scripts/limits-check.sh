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
# 2048 mod 4096), and hand a 4 KiB and a 64 KiB buffer over and back through the same
# pools of page-aligned slots. Needs gcc and python3.
#
# The hand-over has a slow mode of its own on a VM: a round's 64 KiB hand-over is now
# and then 3-4x its usual time (~25 µs against ~6 µs on an AMD EPYC VM), in either
# program, and the two programs' hand-overs run seconds apart, so a round's pair often
# straddles a change. Its rows therefore compare the two programs' medians over the
# rounds (a slow round moves neither while slow rounds are a minority), not the
# median of the rounds' ratios, and every round is listed below the table with each
# program's cache-line round trip of that round. The system call has two modes on a VM
# too, switching within seconds (see docs/limits.md): its per-round values are listed
# as well, so a ratio outside 15 % can be told apart from
# a probe that measures the wrong thing.
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
for i in $(seq "$rounds"); do
    "$xb" limits --json >"$out/xb.$i.json"
    "$ref" >"$out/c.$i.tsv"
done
echo "load average after:  $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$out" "$rounds" <<'PY'
import json, statistics, sys
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
}
for size in (4096, 65536, 2 << 20):
    for offset in (16, 64, 2048):
        base = next(n for n, v in names.items() if v[1] == size)
        names[f"{base} at {offset}"] = ("placement", (size, offset), 1e9)
def xb_value(doc, key, size, scale):
    if key == "memcpy":
        return next(c["bytes_per_s"]["median"] for c in doc["memcpy"] if c["size_bytes"] == size) / scale
    if key == "placement":
        return next(p["bytes_per_s"]["median"] for p in doc["placements"]
                    if (p["size_bytes"], p["offset"]) == size) / scale
    if key == "handover":
        return next((h["rtt_ns"]["median"] for h in doc.get("handover_rtt_ns", [])
                     if h["size_bytes"] == size), float("nan"))
    return doc[key]["median"] if doc.get(key) else float("nan")
rows = {n: ([], []) for n in names}
for i in range(1, rounds + 1):
    doc = json.load(open(f"{out}/xb.{i}.json"))
    for line in open(f"{out}/c.{i}.tsv"):
        name, value, unit = line.rstrip("\n").split("\t")
        key, size, scale = names[name]
        rows[name][0].append(xb_value(doc, key, size, scale))
        rows[name][1].append(float(value))
b = json.load(open(f"{out}/xb.1.json")).get("build") or {}
print(f"xferbench build: profile {b.get('profile', '?')}, opt-level {b.get('opt_level', '?')}")
print(f"{'probe':42} {'xferbench':>12} {'C reference':>12} {'ratio':>7}")
bad = 0
for name, (x, c) in rows.items():
    mx, mc = statistics.median(x), statistics.median(c)
    r = statistics.median(a / b for a, b in zip(x, c))
    label = name
    if name.startswith("hand-over"):
        r = mx / mc
        label = f"{name} (medians)"
    unit = "GB/s" if name.startswith("memcpy") else "ns"
    flag = "" if 0.85 <= r <= 1.15 else "  <-- outside 15 %"
    bad += bool(flag)
    print(f"{label:42} {mx:10.1f} {unit:4} {mc:8.1f} {unit:4} {r:6.2f}{flag}")
print(f"{rounds} alternated rounds; {bad} probe(s) outside 15 %")
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
print("system call (getppid) per round, ns: xferbench, C (each program's cache-line round trip that round)")
sc = rows["system call (getppid)"]
for i in range(rounds):
    print(f"{i + 1:>5} {sc[0][i]:8.0f} {sc[1][i]:8.0f}   ({line[0][i]:5.0f} {line[1][i]:5.0f})")
sys.exit(1 if bad else 0)
PY
