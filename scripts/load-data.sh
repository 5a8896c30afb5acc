#!/usr/bin/env bash
# The data of docs/load.md, from a release build: every transport's knee at 64 B and
# 4 KiB (`--rate auto`), its percentiles at 10, 50 and 90 % of each knee, the same at
# 64 B beside one memory neighbour, the one-way time against ping-pong (shm, spin,
# 64 B, alternating invocations), `--rate auto` against a dense sweep of 16 rates, and
# iceoryx2's subscriber buffer beside a neighbour, and each transport's pacing by rate.
#
#   scripts/load-data.sh [OUT]        (OUT defaults to docs/data/load)
#   STEPS="4" scripts/load-data.sh OUT  (only the steps named; step 2 reads step 1's knees)
#
# Run it on a quiet machine: every file records the machine's load, and `load.txt`
# the load average before each step. Needs cc and libzmq's headers for the ZeroMQ
# example plugin (`apt-get install gcc libzmq3-dev`) and python3 to read the results.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-docs/data/load}
mkdir -p "$out"
cargo build --release -q -p xferbench
xb=target/release/xferbench
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -shared -fPIC -O2 -I include -o "$tmp/libxb_zeromq.so" examples/plugins/zeromq/zeromq.c -lzmq
zmq="plugin:$tmp/libxb_zeromq.so"
transports="shm,iceoryx2,unix,tcp,pipe,$zmq"
common=(--pin --no-history -q)
note() { echo "$(date -u +%FT%TZ) $1: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$out/load.txt"; }
: > "$out/load.txt"
echo "build: $("$xb" --version) ($(git rev-parse --short HEAD))" >> "$out/load.txt"
steps=" ${STEPS:-1 2 3 4 5 6} "
step() { [[ $steps == *" $1 "* ]]; }

# 1. The knees.
if step 1; then
note knees
"$xb" run load -t "$transports" -s 64,4KiB --rate auto "${common[@]}" \
    --export-json "$out/knees.json" --export-md "$out/knees.md"
fi

# 2. Each curve at 10, 50 and 90 % of its knee (five interleaved runs), and at 64 B
#    with a memory neighbour at the same rates.
if step 2; then
python3 - "$out/knees.json" > "$tmp/fractions" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
for k in doc["knees"]:
    if not k["knee_per_s"]:
        continue
    rates = ",".join(str(max(1, round(k["knee_per_s"] * f))) for f in (0.1, 0.5, 0.9))
    print(k["params"]["transport"], k["params"]["size"], rates)
EOF
while read -r transport size rates; do
    # A plugin's points name it by its own name (`zeromq`).
    case $transport in
        shm | iceoryx2 | unix | tcp | pipe) t=$transport ;;
        *) t=$zmq ;;
    esac
    name=$transport-$size
    note "fractions $name"
    "$xb" run load -t "$t" -s "$size" --rate "$rates" -r 5 --interleave "${common[@]}" \
        --export-json "$out/fractions-$name.json"
    if [ "$size" = 64 ]; then
        note "neighbours $name"
        "$xb" run load -t "$t" -s "$size" --rate "$rates" -r 5 --interleave \
            --neighbours memory:1 "${common[@]}" \
            --export-json "$out/neighbours-$name.json"
    fi
done < "$tmp/fractions"
fi

# 3. One way against a round trip: shm, 64 B, spin, 10,000 messages/s, five pairs of
#    invocations taken in turn.
if step 3; then
for i in 1 2 3 4 5; do
    note "physics $i"
    "$xb" run pingpong -t shm -s 64 -p wait=spin -n 20000 "${common[@]}" \
        --export-json "$out/physics-pingpong-$i.json"
    "$xb" run load -t shm -s 64 -p wait=spin --rate 10k -n 20000 "${common[@]}" \
        --export-json "$out/physics-load-$i.json"
done
fi

# 4. `--rate auto` against a dense sweep of 16 rates spaced ×1.2 (unix, 64 B), each
#    timed whole, SEARCHES times in turn (default 3). The sweep's rates do not depend
#    on the search (a search cut short would otherwise take its sweep down with it):
#    from DENSE_FROM messages/s (default 150,000) to 15× that, a range that holds
#    every unix knee at 64 B docs/load.md records, after the search's reference rate, 1,000
#    messages/s, so that both hold their rates against the same reference p99.
if step 4; then
rates=$(python3 -c "import sys; f = float(sys.argv[1]); print(','.join(['1000'] + [str(round(f * 1.2 ** i)) for i in range(16)]))" "${DENSE_FROM:-150000}")
for i in $(seq 1 "${SEARCHES:-3}"); do
    note "search $i"
    start=$(date +%s.%N)
    "$xb" run load -t unix -s 64 --rate auto "${common[@]}" --export-json "$out/search-auto-$i.json"
    auto_s=$(echo "$(date +%s.%N) - $start" | bc)
    note "dense $i"
    start=$(date +%s.%N)
    "$xb" run load -t unix -s 64 --rate "$rates" "${common[@]}" --export-json "$out/search-dense-$i.json"
    dense_s=$(echo "$(date +%s.%N) - $start" | bc)
    echo "search $i: auto ${auto_s} s, dense ${dense_s} s" >> "$out/load.txt"
done
fi

# 5. iceoryx2 beside a memory neighbour: its default subscriber buffer (two samples)
#    against a buffer of 64, at 50,000 messages/s, interleaved.
if step 5; then
note "iceoryx2 buffer"
"$xb" run load -t iceoryx2 -s 64 --rate 50k -p buffer=2,64 --neighbours memory:1 -r 5 \
    --interleave "${common[@]}" --export-json "$out/iceoryx2-buffer.json"
fi
# 6. Pacing by rate: each transport at 64 B and 4 KiB from 1,000 to 200,000
#    messages/s (five interleaved runs per point), for the highest rate at which its
#    sender keeps to its schedule (lag p99 under a tenth of the gap).
if step 6; then
for t in shm iceoryx2 unix tcp pipe "$zmq"; do
    name=${t##*libxb_}
    name=${name%.so}
    note "pacing $name"
    "$xb" run load -t "$t" -s 64,4KiB --rate 1k,2k,5k,10k,20k,50k,100k,200k -r 5 --interleave \
        "${common[@]}" --export-json "$out/pacing-$name.json"
done
fi
note done
# The tables of docs/load.md need every step.
if [ -z "${STEPS:-}" ]; then
    python3 scripts/load-summary.py "$out"
fi
