#!/usr/bin/env bash
# How a wake-up round trip spreads on this machine: times every round trip of the C
# reference's futex (across CPUs 0 and 1, and on CPU 0 alone) and pipe probes
# (scripts/limits-ref.c, `trips` mode), alternated ROUNDS times, and records what
# decides a cross-CPU wake-up's cost on a VM: the cpuidle driver and governor, the
# guest's halt-polling limit and the boot parameters that set them.
#
#   scripts/limits-wakeups.sh [ROUNDS] [TRIPS]
#
# Each probe prints its idle entries per round trip (about two when each side's CPU
# goes idle while it waits), the median of every block of 100 round trips in order
# (how the cost moves within a fraction of a second), and a histogram. Needs gcc.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-2}
n=${2:-3000}
ref=$(mktemp -d)/limits-ref
trap 'rm -rf "$(dirname "$ref")"' EXIT
gcc -O2 -pthread -o "$ref" scripts/limits-ref.c
show() { [ -r "$1" ] && echo "$2: $(cat "$1")" || true; }
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) CPUs, kernel $(uname -r), $(date -u +%FT%TZ)"
show /sys/devices/system/cpu/cpuidle/current_driver "cpuidle driver"
show /sys/devices/system/cpu/cpuidle/current_governor_ro "cpuidle governor"
show /sys/module/haltpoll/parameters/guest_halt_poll_ns "guest halt-polling limit, ns (haltpoll.guest_halt_poll_ns)"
for s in /sys/devices/system/cpu/cpu0/cpuidle/state*; do
    if [ -d "$s" ]; then echo "idle state $(basename "$s"): $(cat "$s/name"), disabled $(cat "$s/disable")"; fi
done
echo "boot parameters on idle: $(tr ' ' '\n' </proc/cmdline | grep -Ei 'idle|halt|poll' | paste -sd' ' || true)"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for i in $(seq "$rounds"); do
    for kind in futex-across pipe futex-one; do
        echo
        echo "round $i, $(date -u +%T)"
        "$ref" trips "$kind" "$n"
    done
done
echo
echo "load average after:  $(cut -d' ' -f1-3 /proc/loadavg)"
