#!/bin/bash
# shm's copying stream before and after copying out by vector loads: A = memcpy out of
# the ring (the build before), N = vector loads from 2 to 64 KiB (this version's
# copy::copy_out). Alternated, N first in even rounds, ROUNDS times; each line: build,
# the cache-line round trip just before (ns), then per size the three runs' GB/s and
# the point's fraction of its paired floor.
rounds=$1; a=$2; n=$3; fx=$4
echo "# machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) CPUs, kernel $(uname -r), $(date -u +%FT%TZ)"
echo "# load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# command: xferbench run stream -t shm -s 4KiB,16KiB,64KiB -p zero_copy=false --pin -r 3"
one() {
  local name=$1 bin=$2
  cl=$($fx 4096 1 | sed -E 's/.*cl= *([0-9]+)ns.*/\1/')
  "$bin" run stream -t shm -s 4KiB,16KiB,64KiB -p zero_copy=false --pin -r 3 --no-history --json 2>/dev/null | python3 -c "
import json,sys; d=json.load(sys.stdin)
out=[]
for p in d['points']:
    out.append('%s: %s (%.2f of %s)' % (p['params']['size'], ' '.join('%.1f' % (r['figures']['throughput_bytes_per_s']/1e9) for r in p['runs']), p['limit']['fraction'], p['limit']['limit']))
print('$name cl=$cl', ' | '.join(out))"
}
for r in $(seq 1 "$rounds"); do
  if [ $((r % 2)) = 1 ]; then one A "$a"; one N "$n"; else one N "$n"; one A "$a"; fi
done
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
