#!/usr/bin/env bash
# Whether a function return right after the futex system call changes the futex round
# trip: builds the C reference (scripts/limits-ref.c) three ways, with the system call
# inline as rustix makes it (the reference), through glibc's syscall(), and through a
# function of its own that is never inlined, and alternates their two futex probes
# (`limits-ref futex`) ROUNDS times in a rotating order.
#
#   scripts/limits-futex-call.sh [ROUNDS]
#
# Prints each round's medians, then per probe each build's median over the rounds and
# the median of the rounds' ratios to the inline build, with how many rounds the inline
# build read shorter. Needs gcc on x86-64.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-21}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for v in 0 1 2; do gcc -O2 -pthread -DFUTEX_CALL=$v -o "$dir/ref$v" scripts/limits-ref.c; done
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) CPUs, kernel $(uname -r), $(date -u +%FT%TZ)"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for i in $(seq "$rounds"); do
    case $((i % 3)) in 1) order="0 1 2" ;; 2) order="1 2 0" ;; *) order="2 0 1" ;; esac
    for v in $order; do "$dir/ref$v" futex >"$dir/r$i.$v"; done
done
echo "load average after:  $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$dir" "$rounds" <<'PY'
import statistics, sys
d, rounds = sys.argv[1], int(sys.argv[2])
names = ["inline (reference)", "glibc syscall()", "own function"]
def read(i, v):
    return {l.split("\t")[0]: float(l.split("\t")[1]) for l in open(f"{d}/r{i}.{v}")}
runs = [[read(i, v) for v in range(3)] for i in range(1, rounds + 1)]
probes = list(runs[0][0])
print(f"{'round':>5} " + " ".join(f"{p[len('futex wake round trip, '):] + ': ' + n:>32}" for p in probes for n in names))
for i, r in enumerate(runs, 1):
    print(f"{i:>5} " + " ".join(f"{r[v][p]:>32.0f}" for p in probes for v in range(3)))
for p in probes:
    print(p)
    for v in range(3):
        xs = [r[v][p] for r in runs]
        line = f"  {names[v]:20} median {statistics.median(xs):8.0f} ns, range {min(xs):.0f}-{max(xs):.0f}"
        if v:
            ratios = [r[v][p] / r[0][p] for r in runs]
            shorter = sum(x > 1 for x in ratios)
            line += f"; vs inline {statistics.median(ratios):.2f}, inline shorter in {shorter} of {rounds} rounds"
        print(line)
PY
