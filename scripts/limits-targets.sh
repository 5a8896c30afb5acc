#!/usr/bin/env bash
# What the machine limits cost a run, and how far points reach of them.
#
#   scripts/limits-targets.sh [ROUNDS] [XFERBENCH] [OUT]
#
# Each round times a 4-point ping-pong (shm and pipe at 64 B and 64 KiB) with the
# limits and with --no-limits, back to back, then runs the same stream sweep with the
# limits. Writes each run's result to OUT (docs/data/limits by default) and prints the
# machine, the load before and after, the wall times with their ratio, and every
# point's fraction of its limit (suspect ones marked). Run it on a quiet machine
# (tools that pause other work, or nothing else running).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
xb=${2:-target/release/xferbench}
out=${3:-docs/data/limits}
[ -x "$xb" ] || cargo build --release -q
mkdir -p "$out"
export XFERBENCH_HISTORY=${XFERBENCH_HISTORY:-$(mktemp -d)/history.sqlite}
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) CPUs, kernel $(uname -r), $(date -u +%FT%TZ)"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
times=$(mktemp)
trap 'rm -f "$times"' EXIT
for i in $(seq "$rounds"); do
    for mode in limits no-limits; do
        extra=(--export-json "$out/pingpong.$i.json")
        [ "$mode" = no-limits ] && extra=(--no-limits)
        s=$(date +%s.%N)
        "$xb" run pingpong -t shm,pipe -s 64,64KiB -q --no-history "${extra[@]}" >/dev/null
        e=$(date +%s.%N)
        echo "$i $mode $s $e" >>"$times"
    done
    "$xb" run stream -t shm,pipe -s 64,64KiB -q --no-history --export-json "$out/stream.$i.json" >/dev/null
done
echo "load average after:  $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$out" "$rounds" "$times" <<'PY'
import json, sys
out, rounds, times = sys.argv[1], int(sys.argv[2]), sys.argv[3]
t = {}
for line in open(times):
    i, mode, s, e = line.split()
    t[(int(i), mode)] = float(e) - float(s)
print("\n4-point ping-pong, wall time (s):")
print(f"{'round':>5} {'limits':>8} {'no-limits':>10} {'added':>7} {'ratio':>6}")
for i in range(1, rounds + 1):
    a, b = t[(i, "limits")], t[(i, "no-limits")]
    print(f"{i:>5} {a:8.2f} {b:10.2f} {a - b:7.2f} {a / b:6.2f}")
print("\nfraction of limit per point (suspect above 110 %: *):")
worst = 0.0
for kind in ("pingpong", "stream"):
    for i in range(1, rounds + 1):
        d = json.load(open(f"{out}/{kind}.{i}.json"))
        b, load = d["context"].get("build") or {}, d["context"].get("load") or {}
        cells = []
        for p in d["points"]:
            l = p.get("limit")
            if not l:
                continue
            worst = max(worst, l["fraction"])
            c = "contended" if (p.get("contention") or {}).get("contended") else ""
            cells.append(f"{p['params']['transport']} {p['size_bytes']} B: {l['fraction']:.3f}"
                         f"{'*' if l.get('suspect') else ''} of {l['limit']}{' ' + c if c else ''}")
        print(f"{kind} round {i} ({b.get('profile')}, load {load.get('load_1m_start')}, "
              f"steal {load.get('steal', 0):.3f}, others {load.get('others_cpus', 0):.2f} CPUs):")
        for c in cells:
            print("   ", c)
print(f"\nhighest fraction: {worst:.3f}")
PY
