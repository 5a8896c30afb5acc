#!/usr/bin/env bash
# A/B of the zero-copy sender's write order, in alternating rounds:
#   base: a release build of ec83759 (fill every byte, then the stamp into the first line);
#   new:  a release build of the commit holding this directory (the stamp, then the rest,
#         each line once, front to back).
# Each round, each build: a spin ping-pong in place at 64 B to 16 KiB with copying 4 KiB
# as the control, and an in-place stream at 64 B, 4 KiB and 64 KiB with copying 4 KiB
# as the control. Every point is held against the floor its own run measured.
#
#   run.sh BASE_BIN NEW_BIN OUT_DIR ROUNDS
set -euo pipefail
base=$1 new=$2 out=$3 rounds=$4
mkdir -p "$out"
{
  echo "machine: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) CPUs, kernel $(uname -r)"
  echo "start: $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
} > "$out/context.txt"
for i in $(seq 1 "$rounds"); do
  for v in base new; do
    bin=$base; [ "$v" = new ] && bin=$new
    "$bin" run pingpong -t shm -s 64,1KiB,4KiB,16KiB -p wait=spin -p zero_copy=true --pin --interleave -r 3 \
      --no-history -q --export-json "$out/pp-$v-$i.json" >/dev/null 2>&1
    "$bin" run pingpong -t shm -s 4KiB -p wait=spin --pin --interleave -r 3 \
      --no-history -q --export-json "$out/ppc-$v-$i.json" >/dev/null 2>&1
    "$bin" run stream -t shm -s 64,4KiB,64KiB -p zero_copy=true --pin --interleave -r 3 \
      --no-history -q --export-json "$out/st-$v-$i.json" >/dev/null 2>&1
    "$bin" run stream -t shm -s 4KiB --pin --interleave -r 3 \
      --no-history -q --export-json "$out/stc-$v-$i.json" >/dev/null 2>&1
  done
  echo "round $i done: $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg)" >> "$out/context.txt"
done
echo "end: $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg)" >> "$out/context.txt"
