#!/usr/bin/env bash
# The 64-byte spin ping-pong's models in C (scripts/spin-model.c) beside the shm ring
# alone (crates/transports/examples/shm_pingpong.rs), in alternating rounds, each at
# 4 MiB rings (fresh lines for every message, shm's default) and at 4 KiB rings (the
# same lines written again). Every figure of a round shares its machine state; the
# cache-line model is the round's probe.
#
#   scripts/spin-model.sh [ROUNDS] > OUT.txt
#
# Run it with nothing else on the machine: it reports the load before every round.
set -euo pipefail
rounds=${1:-5}
cd "$(dirname "$0")/.."
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
gcc -O2 -Wall -Wextra -pthread -o "$bin/spin-model" scripts/spin-model.c
cargo build --release --quiet -p xferbench-transports --example shm_pingpong
pp=target/release/examples/shm_pingpong
trips=2000000

echo "# 64-byte spin ping-pong: C models (median of 15 samples, min, max) and the shm ring alone (mean of $trips round trips), ns per round trip"
echo "# machine: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) CPUs, kernel $(uname -r)"
echo "# commit: $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- scripts crates || echo ' (with local changes)'); C: gcc -O2 $(gcc -dumpfullversion); Rust: release profile"
echo "# start: $(date -u +%FT%TZ)"
echo "# columns: round, ring bytes, model, ns, min, max, load before"
for r in $(seq 1 "$rounds"); do
    for ring in 4194304 4096; do
        load=$(cut -d' ' -f1-3 /proc/loadavg)
        "$bin/spin-model" 1 "$ring" | while IFS=$'\t' read -r _ model med lo hi; do
            printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$r" "$ring" "$model" "$med" "$lo" "$hi" "$load"
        done
        for mode in copy in-place; do
            load=$(cut -d' ' -f1-3 /proc/loadavg)
            ns=$(taskset -c 0,1 "$pp" "$trips" "$mode" "$ring" | sed -n 's/.*, \([0-9.]*\) ns each/\1/p')
            printf '%s\t%s\tshm-%s\t%s\t-\t-\t%s\n' "$r" "$ring" "$mode" "$ns" "$load"
        done
    done
done
echo "# end: $(date -u +%FT%TZ); load $(cut -d' ' -f1-3 /proc/loadavg)"
