#!/bin/bash
# Times the lab's stream floor probe with each copying reader (floorexp, harness.rs
# beside this log), and shm's own 4 KiB copying stream, in turn, ROUNDS times.
# Usage: run.sh ROUNDS XFERBENCH FLOOREXP
rounds=$1; xb=$2; fx=$3
echo "# machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) CPUs, kernel $(uname -r), $(date -u +%FT%TZ)"
echo "# load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# floor lines: 'memcpy' and 'vectors' are the copying probe with each reader (three"
echo "# calls each, GB/s, 32 MiB timed after the lead), 'in-place' the in-place probe;"
echo "# shm lines: xferbench run stream -t shm -s 4KiB -p zero_copy=false --pin -r 3,"
echo "# each run's GB/s and the point's fraction of its paired stream floor"
for r in $(seq 1 "$rounds"); do
  echo "round $r $(date -u +%T)"
  echo "4KiB $($fx 4096 1)"
  echo "64KiB $($fx 65536 1)"
  "$xb" run stream -t shm -s 4KiB -p zero_copy=false --pin -r 3 --no-history --json 2>/dev/null | python3 -c "
import json,sys; d=json.load(sys.stdin); p=d['points'][0]
print('shm 4KiB copying runs', ' '.join('%.1f' % (r['figures']['throughput_bytes_per_s']/1e9) for r in p['runs']), 'GB/s; of floor %.2f' % p['limit']['fraction'], '(floor %.1f GB/s)' % (p['limit']['limit_value']/1e9))"
  sleep 5
done
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
