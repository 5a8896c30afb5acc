#!/usr/bin/env bash
# Regenerates the study data the docs quote: for each study, a release build of
# `xferbench study NAME` writes its folder, and its results.json, tables (.md, .csv),
# plots (.svg) and summary.md replace docs/studies/data/NAME/. Then the blocks of
# docs/studies/*.md generated from those files are rewritten (the `docs_data` test of
# xferbench-studies checks them, and that every committed results.json still parses).
#
#   scripts/refresh-docs-data.sh [--quick] [--no-build] [--profile] STUDY|all ... [-- STUDY-ARGS...]
#
#   --quick      the studies' --quick size (the doc must then say so; the full size is
#                the default)
#   --no-build   use the existing target/release/xferbench (build it first with
#                `cargo build --release -p xferbench`), e.g. when this script runs
#                inside a window that pauses other builds
#   --profile    also the study's profile reading, in a run of its own (perf record
#                slows what it records, so the figures above never come from it), into
#                docs/studies/data/NAME/profile/: hashtable's profile points
#                (`--quick --only group=profile`), warp-pipe's original workload
#                (`--quick --only group=original-profile`), sis8300's test-4 readouts
#                (`--quick --only group=test4 --only func=func_readout`)
#   --profile-only  only the profile reading (as --profile), keeping the committed
#                study data as it is
#   STUDY-ARGS   passed to every `xferbench study` (e.g. `--runs 5`, `--only ...`)
#
# Every result records the machine, its load and contention per point, and the build;
# run it on a machine as quiet as you can make it, and say in the doc what the summary's
# load line says. The runs go to a throw-away history, never the user's.
set -euo pipefail
cd "$(dirname "$0")/.."

quick=()
build=1
profile=0
main=1
extra=()
studies=()
all=(hashtable perf-stat rpmsg sis8300 warp-pipe)
while [ $# -gt 0 ]; do
    case "$1" in
        --quick) quick=(--quick) ;;
        --no-build) build=0 ;;
        --profile) profile=1 ;;
        --profile-only)
            profile=1
            main=0
            ;;
        --)
            shift
            extra=("$@")
            break
            ;;
        all) studies+=("${all[@]}") ;;
        -h | --help)
            sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'
            exit 0
            ;;
        *)
            if [[ " ${all[*]} " =~ " $1 " ]]; then
                studies+=("$1")
            else
                echo "error: unknown study or option '$1' (studies: ${all[*]}, or all)" >&2
                exit 2
            fi
            ;;
    esac
    shift
done
if [ ${#studies[@]} -eq 0 ]; then
    echo "usage: $0 [--quick] [--no-build] [--profile] STUDY|all ... [-- STUDY-ARGS...]" >&2
    exit 2
fi

if [ "$build" -eq 1 ]; then
    echo "== cargo build --release -p xferbench"
    cargo build --release --locked -q -p xferbench
fi
bin=target/release/xferbench
[ -x "$bin" ] || { echo "error: $bin is missing; build it (cargo build --release -p xferbench)" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export XFERBENCH_HISTORY="$work/history.sqlite"

for s in "${studies[@]}"; do
    dest=docs/studies/data/$s
    if [ "$main" -eq 1 ]; then
        echo "== xferbench study $s ${quick[*]} ${extra[*]}"
        start=$(date +%s)
        # A study that fails or is interrupted still writes its folder; keep it out of
        # the docs.
        "$bin" study "$s" "${quick[@]}" "${extra[@]}" --out "$work/$s" --no-history
        # The study's own files only: the profile run's folder (profile/) is refreshed
        # by --profile, and stays as it is otherwise.
        mkdir -p "$dest"
        find "$dest" -maxdepth 1 -type f -delete
        find "$work/$s" -maxdepth 1 -type f \
            \( -name results.json -o -name '*.md' -o -name '*.csv' -o -name '*.svg' \) \
            -exec cp {} "$dest/" \;
        echo "$s: $(($(date +%s) - start)) s; $(ls "$dest" | wc -l) files in $dest"
    fi
    if [ "$profile" -eq 1 ]; then
        case "$s" in
            hashtable) only=(--quick --only group=profile) ;;
            warp-pipe) only=(--quick --only group=original-profile) ;;
            sis8300) only=(--quick --only group=test4 --only func=func_readout) ;;
            *) continue ;;
        esac
        echo "== xferbench study $s ${only[*]} --profile"
        "$bin" study "$s" "${only[@]}" --profile --out "$work/$s-profile" --no-history
        rm -rf "$dest/profile"
        mkdir -p "$dest/profile"
        find "$work/$s-profile" "$work/$s-profile/profile" -maxdepth 1 -type f \
            \( -name results.json -o -name '*.md' -o -name '*.csv' \) \
            -exec cp {} "$dest/profile/" \;
    fi
done

update="XFERBENCH_UPDATE_DOCS=1 cargo test --locked -q -p xferbench-studies --lib docs_data"
if [ "$build" -eq 1 ]; then
    echo "== the docs' generated blocks"
    eval "$update"
else
    echo "now rewrite the docs' generated blocks (a build): $update"
fi
