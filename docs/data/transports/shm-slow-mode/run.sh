#!/usr/bin/env bash
# Rounds of a 64 KiB shm ping-pong in five variants, each round bracketed by the quick
# limits (cache-line and hand-over round trips), so that every round can be put in the
# VM's fast or slow mode and held against the floor measured in the same mode.
#   run.sh ROUNDS OUT_DIR [XFERBENCH]
set -euo pipefail
rounds=$1
out=$2
xb=${3:-target/release/xferbench}
mkdir -p "$out"
{
    echo "build: $("$xb" --version) ($xb)"
    echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) CPUs, kernel $(uname -r)"
    echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "started: $(date -u +%FT%TZ)"
} > "$out/context.txt"
for i in $(seq 1 "$rounds"); do
    "$xb" limits --quick --json > "$out/limits-$i-a.json"
    "$xb" run pingpong -t shm -s 64KiB -p wait=spin --pin --interleave -r 1 -w 0 --no-history \
        -p capacity=auto,128KiB -p zero_copy=false,true \
        --export-json "$out/pingpong-$i.json" > /dev/null 2>&1
    "$xb" run pingpong -t shm -s 64KiB -p wait=spin --pin -r 1 -w 0 --no-history \
        -p batch=64KiB --export-json "$out/batch-$i.json" > /dev/null 2>&1
    "$xb" limits --quick --json > "$out/limits-$i-b.json"
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$out/context.txt"
echo "ended: $(date -u +%FT%TZ)" >> "$out/context.txt"
