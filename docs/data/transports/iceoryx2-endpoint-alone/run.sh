#!/usr/bin/env bash
# The iceoryx2 endpoint's own 64-byte round trip beside iceoryx2's benchmark loop, in
# alternating rounds, with no lab around either.
#
#   run.sh ROUNDS VARIANT LABEL=BINARY...
#
# VARIANT is a build of iceoryx2's benchmarks/publish-subscribe with
# benchmark-variants.patch applied (built against crates.io iceoryx2 =0.10.0 in this
# workspace's release profile); it runs first in every round as `bench` (the
# benchmark's own configuration) and `bench+bp` (its publishers given the
# RetryUntilDelivered strategy and a backpressure handler, as xferbench's data
# publishers had them; V_BP=1). Each BINARY is a build of this repository's
# examples/iox2_pingpong (`cargo build --release -p xferbench-transports --example
# iox2_pingpong`) at some commit, run with `pause=false` so that every program polls
# back to back. Every figure is a mean round trip in ns over N (environment, default
# 500000) round trips, all pinned to CPUs 0 and 1. The VM changes modes within
# seconds, so compare the programs within a round.
set -euo pipefail
[ $# -ge 3 ] || { sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }
rounds=$1
variant=$2
shift 2
n=${N:-500000}
bench() {
    env V_ONLYIPC=1 "$@" taskset -c 0,1 "$variant" --bench-ipc -p 64 -i "$n" 2>&1 |
        sed -n 's/^iceoryx2::service::ipc::Service ::: .*Time: \([0-9.]*\) s.*/\1/p' |
        awk -v n="$n" '{ printf "%.0f", $1 / n * 1e9 }'
    rm -f /dev/shm/iox2_*
}
echo "# $(date -u +%FT%TZ); load $(cut -d' ' -f1-3 /proc/loadavg); N=$n; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs, kernel $(uname -r)"
for r in $(seq 1 "$rounds"); do
    line="$r bench=$(bench) bench+bp=$(bench V_BP=1)"
    for v in "$@"; do
        label=${v%%=*}
        bin=${v#*=}
        line="$line $label=$(taskset -c 0,1 "$bin" "$n" pause=false | sed 's/.*, \([0-9.]*\) ns each/\1/')"
    done
    echo "$line"
done
echo "# end $(date -u +%FT%TZ); load $(cut -d' ' -f1-3 /proc/loadavg)"
