#!/usr/bin/env bash
# The acceptance run of runs across hosts (docs/remote.md): two network namespaces
# joined by a veth pair, `xferbench serve` in one, the Warp Pipe study's
# `threads=16` points (original, per-thread, pipelined; full size, 3 runs) measured
# from the other, once through a relay with no delay and once with 1 ms one-way delay
# (netem where the kernel has it, else the relay of the test harness) and a 200 Mbit/s
# tbf rate limit. Prints transactions/s and the time each transaction gained.
#
#   sudo scripts/remote-delay.sh
#
# Needs root and iproute2; the namespaces are deleted afterwards.
set -euo pipefail
cd "$(dirname "$0")/.."
XFERBENCH_REMOTE_ACCEPTANCE=1 exec cargo test -q -p xferbench --test remote \
    a_delayed_link_slows -- --nocapture --test-threads 1
