#!/usr/bin/env bash
# Screenshots of the HTML report for a person to review, into docs/img/: the pages of
# a stream and a ping-pong run (docs/data/report/{stream,pingpong}.json), each light
# and dark in a desktop window, and the stream page on a phone-sized window.
#
#   scripts/screenshots.sh          # screenshots of the committed result files
#   scripts/screenshots.sh measure  # measure both result files again (release build),
#                                   # with the machine's load in docs/data/report/load.txt
#
# The screenshots need Debian's `chromium`: the report crate's browser test renders
# the pages exactly as `--export-html` writes them and photographs them. With
# `pngquant` installed they are made about 60 % smaller (256 colours; text and lines
# look the same).
set -euo pipefail
cd "$(dirname "$0")/.."
data=docs/data/report
if [ "${1:-}" = "measure" ]; then
    xb=target/release/xferbench
    [ -x "$xb" ] || cargo build --release -q -p xferbench
    history=$(mktemp -d)
    trap 'rm -rf "$history"' EXIT
    export XFERBENCH_HISTORY="$history/history.sqlite"
    mkdir -p "$data"
    before=$(cut -d' ' -f1-3 /proc/loadavg)
    "$xb" run stream --transport shm,pipe,unix,tcp --size 64,2KiB,64KiB \
        --quiet --export-json "$data/stream.json" >/dev/null
    "$xb" run pingpong --transport shm,pipe,unix,tcp --size 64,1KiB,16KiB \
        --quiet --export-json "$data/pingpong.json" >/dev/null
    printf 'load average (1, 5, 15 min) before: %s\nload average (1, 5, 15 min) after: %s\n' \
        "$before" "$(cut -d' ' -f1-3 /proc/loadavg)" | tee "$data/load.txt"
    exit 0
fi
command -v chromium >/dev/null 2>&1 || { echo "error: screenshots need chromium (apt-get install chromium)" >&2; exit 1; }
mkdir -p docs/img
XFERBENCH_SCREENSHOTS="$PWD/docs/img" cargo test -q -p xferbench-report --lib \
    html::browser_tests::screenshots_for_review -- --exact --nocapture
if command -v pngquant >/dev/null 2>&1; then
    pngquant --quality 80-95 --speed 1 --force --ext .png docs/img/report-*.png
fi
ls -l docs/img/report-*.png
