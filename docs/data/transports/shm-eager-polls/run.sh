#!/usr/bin/env bash
# base: /tmp/xb-base, a release build of f629b37; eager: /tmp/xb-eager, a release build of 7024ede with eager-polls.patch (the transports of the two commits are the same).
# A/B: shm's spin with a pause after every poll (base) against 64 eager polls first.
set -euo pipefail
out=$1; rounds=$2
mkdir -p "$out"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)" > "$out/context.txt"
for i in $(seq 1 "$rounds"); do
  for v in base eager; do
    /tmp/xb-$v run pingpong -t shm -s 64,4KiB -p wait=spin -p zero_copy=false,true --pin --interleave -r 3 --no-history -q --export-json "$out/pp-$v-$i.json" >/dev/null 2>&1
    /tmp/xb-$v run stream -t shm -s 64,4KiB -p wait=spin --pin --interleave -r 3 --no-history -q --export-json "$out/st-$v-$i.json" >/dev/null 2>&1
  done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$out/context.txt"
