#!/usr/bin/env bash
# xferbench's iceoryx2 ping-pong beside iceoryx2's own publish-subscribe benchmark,
# in adjacent pairs, one or more builds of each.
#
#   scripts/iceoryx2-pairs.sh PAIRS OUT LABEL=BENCHMARK:XFERBENCH[:ARGS]...
#   scripts/iceoryx2-pairs.sh --summary OUT      (the summary of an existing OUT)
#
# BENCHMARK is a build of iceoryx2's benchmarks/publish-subscribe (from the iceoryx2
# repository, against the iceoryx2 release this workspace uses; not part of this
# repository), XFERBENCH a build of xferbench; LABEL names the pair's build (e.g.
# `lto=/path/bench-lto:target/release-lto/xferbench`); ARGS, if given, are more
# arguments for that label's xferbench run, split at spaces (e.g.
# `static=/path/bench:target/release/xferbench:-p max_message=64 -p pause=false`, the
# transport configured as the benchmark configures iceoryx2: a static data segment of
# 64-byte slices, receivers polling back to back). Each round runs every label's
# pair, the two programs in turn (benchmark first in odd rounds, xferbench first in
# even ones), both pinned to CPUs 0 and 1, both the same quantity:
#
#   benchmark: --bench-ipc -p 64 -i ITERATIONS; a round trip is its Time / ITERATIONS
#              (the Latency it prints is half a round trip)
#   xferbench: run pingpong -t iceoryx2 -s 64 -p wait=spin --zero-copy -p touch=none
#              -p buffer=1 -p overflow=safe --peer thread --pin -r 1 -w 1 -d 1; the
#              mean of its round-trip histogram
#
# and the pair's ratio, xferbench's mean over the benchmark's round trip. OUT gets
# the machine, the commands, the load before and after every pair, each pair's
# figures and, per label, the median and range of its pairs' ratios and both
# programs' medians and first quartiles. Run it on a
# quiet machine (tools that pause other work, or nothing else running). The
# benchmark leaves iox2_* files in /dev/shm and /tmp/iceoryx2; they are removed
# after each of its runs. ITERATIONS (environment) defaults to 2000000, about 1.5 s
# on a fast machine; a benchmark run longer than BENCH_TIMEOUT (default 20) seconds
# is stopped and its pair recorded without a figure. NOTE (environment), if set, is
# written into OUT's header: say there how each label's two programs were built.
set -euo pipefail
# Per label of a result file: the median and range of its pairs' ratios, each
# program's median, and each program's first quartile with their ratio (on this
# bimodal machine a run lands in the fast or the slow mode as a whole, and a pair
# whose two runs landed in different modes gives a ratio of either mode's gap; the
# first quartiles compare the two programs' fast modes).
summarise() {
    echo "# summary per label (pairs with both figures): ratios (xferbench mean / benchmark round trip): median, range;"
    echo "# medians of the benchmark's round trip and of xferbench's mean; their first quartiles and the quartiles' ratio"
    for label in $(awk -F'\t' '!/^#/ && NF >= 8 { print $2 }' "$1" | awk '!seen[$0]++'); do
        awk -F'\t' -v l="$label" '
            function sort(a, n,   i, j, t) {
                for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] > a[j]; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
            }
            function median(a, n) { sort(a, n); return n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2 }
            # the median of the lower half (the lower half includes the median when n is odd)
            function quartile(a, n,   h, i, lower) { sort(a, n); h = int((n + 1) / 2); for (i = 1; i <= h; i++) lower[i] = a[i]; return median(lower, h) }
            !/^#/ && $2 == l && $8 != "-" { n++; r[n] = $8; b[n] = $4; x[n] = $5; lo = (n == 1 || $8 < lo) ? $8 : lo; hi = (n == 1 || $8 > hi) ? $8 : hi }
            END {
                if (n == 0) { printf "# %s: no pair with both figures\n", l; exit }
                printf "# %s: %d pairs, ratio median %.3f (%.3f to %.3f); medians: benchmark %.0f ns, xferbench %.0f ns; first quartiles: benchmark %.0f ns, xferbench %.0f ns, ratio %.3f\n", l, n, median(r, n), lo, hi, median(b, n), median(x, n), quartile(b, n), quartile(x, n), quartile(x, n) / quartile(b, n)
            }' "$1"
    done
}

if [ "${1:-}" = --summary ] && [ $# -eq 2 ]; then
    summarise "$2"
    exit
fi
[ $# -ge 3 ] || {
    sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
    exit 2
}
pairs=$1
out=$2
shift 2
iterations=${ITERATIONS:-2000000}
bench_timeout=${BENCH_TIMEOUT:-20}
export XFERBENCH_HISTORY=${XFERBENCH_HISTORY:-$(mktemp -d)/history.sqlite}
tmp=$(mktemp -d)
clean_iox2() {
    rm -f /dev/shm/iox2_*
    find /tmp/iceoryx2 -name 'iox2_*' -exec rm -rf {} + 2>/dev/null || true
}
trap 'rm -rf "$tmp"; clean_iox2' EXIT

labels=()
benches=()
xbs=()
extras=()
for spec in "$@"; do
    label=${spec%%=*}
    progs=${spec#*=}
    bench=${progs%%:*}
    rest=${progs#*:}
    xb=${rest%%:*}
    extra=
    [ "$rest" = "$xb" ] || extra=${rest#*:}
    [ -x "$bench" ] && [ -x "$xb" ] || {
        echo "$spec: not LABEL=BENCHMARK:XFERBENCH[:ARGS] with both executable" >&2
        exit 2
    }
    labels+=("$label")
    benches+=("$bench")
    xbs+=("$xb")
    extras+=("$extra")
done

xb_args=(run pingpong -t iceoryx2 -s 64 -p wait=spin --zero-copy -p touch=none
    -p buffer=1 -p overflow=safe --peer thread --pin -r 1 -w 1 -d 1
    -q --no-limits --no-history)
bench_args=(--bench-ipc -p 64 -i "$iterations")
load() { cut -d' ' -f1-3 /proc/loadavg; }

# Prints the benchmark's round trip in ns, or "-" (too slow, or failed).
run_bench() {
    local line
    line=$(timeout "$bench_timeout" "$1" "${bench_args[@]}" 2>/dev/null |
        grep 'ipc::Service :::' || true)
    clean_iox2
    echo "$line" >>"$tmp/bench.log"
    if [ -z "$line" ]; then
        echo -
    else
        echo "$line" | sed -n 's/.*Time: \([0-9.e-]*\) s.*/\1/p' |
            awk -v n="$iterations" '{ printf "%.1f\n", $1 * 1e9 / n }'
    fi
}

# Prints xferbench's mean, p50 and wall time per round trip in ns, or "- - -".
# $2: the label's extra arguments, split at spaces.
run_xb() {
    # shellcheck disable=SC2086
    if "$1" "${xb_args[@]}" $2 --export-json "$tmp/xb.json" >/dev/null 2>"$tmp/xb.err"; then
        jq -r '.points[0].runs[0] | [.latency.mean_ns, .latency.p50_ns,
            1e9 / .figures.messages_per_s] | map(. * 10 | round / 10) | @tsv' "$tmp/xb.json"
    else
        sed 's/^/# xferbench: /' "$tmp/xb.err" >>"$tmp/notes"
        echo "- - -"
    fi
}

{
    echo "# iceoryx2's publish-subscribe benchmark and xferbench's iceoryx2 ping-pong in adjacent pairs"
    echo "# machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) CPUs, kernel $(uname -r)"
    echo "# start: $(date -u +%FT%TZ); load $(load)"
    echo "# benchmark: BENCHMARK ${bench_args[*]}   (round trip = Time / iterations)"
    echo "# xferbench: XFERBENCH ${xb_args[*]}   (mean of the round-trip histogram)"
    [ -n "${NOTE:-}" ] && printf '%s\n' "$NOTE" | sed 's/^/# /'
    for i in "${!labels[@]}"; do
        echo "# ${labels[$i]}: BENCHMARK ${benches[$i]}, XFERBENCH ${xbs[$i]}${extras[$i]:+ (with ${extras[$i]})}"
    done
    echo "# columns: round, label, order, benchmark round trip ns, xferbench mean ns, p50 ns, wall per trip ns, ratio (mean / benchmark), load before, load after"
} >"$out"

for round in $(seq "$pairs"); do
    for i in "${!labels[@]}"; do
        before=$(load)
        if [ $((round % 2)) -eq 1 ]; then
            order=bench-first
            b=$(run_bench "${benches[$i]}")
            x=$(run_xb "${xbs[$i]}" "${extras[$i]}")
        else
            order=xferbench-first
            x=$(run_xb "${xbs[$i]}" "${extras[$i]}")
            b=$(run_bench "${benches[$i]}")
        fi
        read -r mean p50 wall <<<"$x"
        ratio=-
        if [ "$b" != - ] && [ "$mean" != - ]; then
            ratio=$(awk -v m="$mean" -v b="$b" 'BEGIN { printf "%.3f", m / b }')
        fi
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$round" "${labels[$i]}" "$order" \
            "$b" "$mean" "$p50" "$wall" "$ratio" "$before" "$(load)" >>"$out"
    done
done

{
    echo "# end: $(date -u +%FT%TZ); load $(load)"
    [ -f "$tmp/notes" ] && cat "$tmp/notes"
    echo "# the benchmark's lines, in order:"
    sed 's/^/#   /' "$tmp/bench.log"
} >>"$out"
summarise "$out" | tee -a "$out"
