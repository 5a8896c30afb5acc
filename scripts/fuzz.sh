#!/usr/bin/env bash
# Runs the cargo-fuzz targets of fuzz/ for a while each: scripts/fuzz.sh [SECONDS] [TARGET...]
#
#   SECONDS  time per target (default 30, the CI smoke)
#   TARGET   targets to run (default: every target `cargo fuzz list` names)
#
# Needs a nightly toolchain (installed with rustup when missing and possible) and
# cargo-fuzz (installed with `cargo install cargo-fuzz --locked` when missing). When
# either cannot be had, prints the reason and exits 0: fuzzing is skipped, not failed.
#
# Each target starts from a copy of its committed seed corpus (fuzz/corpus/<target>)
# in a temporary directory, which also receives the corpus growth and any crash
# artifacts: the repository is not written to. FUZZ_WORK=<dir> uses (and keeps) that
# directory instead; a crash's input is always kept and its path printed. Targets run
# side by side, one per CPU; FUZZ_JOBS=<n> runs n at once.
#
# Prints one summary line per target (executions, exec/s, cov, ft, corpus size) and
# exits 1 if any target crashed, timed out or leaked.
set -euo pipefail
cd "$(dirname "$0")/.."

secs=30
if [ $# -gt 0 ] && [[ "$1" =~ ^[0-9]+$ ]]; then
    secs=$1
    shift
fi
if [ "$secs" -le 0 ]; then
    echo "error: SECONDS must be a positive whole number of seconds" >&2
    exit 2
fi

if ! command -v cargo >/dev/null 2>&1 && [ -x "$HOME/.cargo/bin/cargo" ]; then
    export PATH="$HOME/.cargo/bin:$PATH"
fi
if ! command -v rustup >/dev/null 2>&1; then
    echo "fuzzing skipped: rustup is not installed, so no nightly toolchain can be used"
    exit 0
fi
if ! rustup run nightly rustc --version >/dev/null 2>&1; then
    echo "== installing a nightly toolchain for cargo-fuzz"
    if ! timeout 900 rustup toolchain install nightly --profile minimal >/dev/null 2>&1; then
        echo "fuzzing skipped: no nightly toolchain, and rustup could not install one (offline?)"
        exit 0
    fi
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "== installing cargo-fuzz"
    if ! timeout 900 cargo install cargo-fuzz --locked >/dev/null 2>&1; then
        echo "fuzzing skipped: cargo-fuzz is missing and could not be installed (offline?)"
        exit 0
    fi
fi

if [ $# -gt 0 ]; then
    targets=("$@")
else
    mapfile -t targets < <(cargo +nightly fuzz list)
fi

if [ -n "${FUZZ_WORK:-}" ]; then
    work=$FUZZ_WORK
    mkdir -p "$work"
else
    work=$(mktemp -d -t xferbench-fuzz.XXXXXX)
fi

# The committed seeds must be what fuzz/src/seed.rs builds from today's layouts.
echo "== fuzz seeds (fuzz/tests/seeds.rs)"
cargo +nightly test --manifest-path fuzz/Cargo.toml --locked --test seeds -q

# One cargo invocation builds every target (its links run in parallel); with a
# list of targets, only those.
echo "== cargo fuzz build (${#targets[@]} targets)"
if [ $# -gt 0 ]; then
    for t in "${targets[@]}"; do
        cargo +nightly fuzz build "$t"
    done
else
    cargo +nightly fuzz build
fi

# Targets run side by side, one per CPU (FUZZ_JOBS overrides): each still fuzzes for
# its full SECONDS on a CPU of its own.
jobs_max=${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 1)}
if ! [[ "$jobs_max" =~ ^[1-9][0-9]*$ ]]; then
    echo "error: FUZZ_JOBS must be a positive whole number" >&2
    exit 2
fi
fuzz_one() {
    local t=$1
    local corpus="$work/corpus/$t" artifacts="$work/artifacts/$t"
    if cargo +nightly fuzz run "$t" "$corpus" -- \
        -max_total_time="$secs" -artifact_prefix="$artifacts/" -print_final_stats=1 \
        >"$work/$t.log" 2>&1; then
        echo ok >"$work/$t.status"
    else
        echo FAILED >"$work/$t.status"
    fi
}
for t in "${targets[@]}"; do
    corpus="$work/corpus/$t"
    mkdir -p "$corpus" "$work/artifacts/$t"
    rm -f "$work/$t.status"
    if [ -d "fuzz/corpus/$t" ]; then
        cp -r "fuzz/corpus/$t/." "$corpus/"
    fi
    seeds=$(find "$corpus" -type f | wc -l)
    while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do
        wait -n || true
    done
    echo "== fuzz $t for ${secs} s ($seeds seeds)"
    fuzz_one "$t" &
done
wait

failed=()
summary=()
for t in "${targets[@]}"; do
    artifacts="$work/artifacts/$t"
    log="$work/$t.log"
    status=$(cat "$work/$t.status" 2>/dev/null || echo FAILED)
    if [ "$status" != ok ]; then
        failed+=("$t")
        echo "== fuzz $t FAILED:"
        tail -n 40 "$log"
        echo "crash input(s) kept in $artifacts:"
        ls -l "$artifacts"
    fi
    # libFuzzer's last status line ("#N DONE cov: C ft: F corp: K/..") and final stats.
    line=$(grep -E '^#[0-9]+[[:space:]]+(DONE|pulse|NEW|REDUCE|INITED)' "$log" | tail -n 1 || true)
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
    cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$line")
    ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$line")
    corp=$(sed -n 's/.* corp: \([0-9]*\/[0-9A-Za-z]*\).*/\1/p' <<<"$line")
    summary+=("$(printf '%-18s %-6s execs %-10s exec/s %-7s cov %-5s ft %-6s corpus %s' \
        "$t" "$status" "${runs:-?}" "${rate:-?}" "${cov:-?}" "${ft:-?}" "${corp:-?}")")
done

echo "== fuzz summary (${secs} s per target, work dir $work)"
printf '%s\n' "${summary[@]}"
if [ -z "${FUZZ_WORK:-}" ] && [ ${#failed[@]} -eq 0 ]; then
    rm -rf "$work"
fi
if [ ${#failed[@]} -gt 0 ]; then
    echo "fuzzing found problems in: ${failed[*]} (inputs kept in $work/artifacts)" >&2
    exit 1
fi
