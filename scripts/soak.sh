#!/usr/bin/env bash
# Integrity soak: `--verify` over COUNT messages per transport (default 10^8): `shm` in
# each wait mode, pipe, unix and tcp streamed, and `rpmsg` round trips (its remote
# echoes, so it runs ping-pong). Every message carries a sequence number and a checksum
# over every byte; the receiver counts lost, duplicated, reordered and corrupt ones.
# A benchmark-style run, not a test: about half an hour on a 2-vCPU machine.
#
# usage: scripts/soak.sh [COUNT] [XFERBENCH] [OUT_DIR]
set -euo pipefail
count=${1:-100000000}
bin=${2:-target/release/xferbench}
out=${3:-soak-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$out"
common=(-s 64 -n "$count" -r 1 -w 0 --verify --no-limits --no-history)
run() {
    local name=$1; shift
    echo "== $name: $*"
    local start=$SECONDS
    "$bin" run "$@" "${common[@]}" --export-json "$out/$name.json" | tee "$out/$name.txt"
    echo "$name: $((SECONDS - start)) s" | tee -a "$out/times.txt"
}
run shm-spin stream -t shm -p wait=spin
run shm-block stream -t shm -p wait=block
run shm-hybrid stream -t shm -p wait=hybrid
run pipe stream -t pipe
run unix stream -t unix
run tcp stream -t tcp
run rpmsg pingpong -t rpmsg
echo "soak: every transport verified $count messages; results in $out"
