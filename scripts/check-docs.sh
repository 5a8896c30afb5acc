#!/usr/bin/env bash
# Checks the docs against their committed data: scripts/check-docs.sh
#
# Runs the tests of xferbench-studies that hold the docs to their data:
#   docs_figures  every figure in the prose of the checked docs carries a reference
#                 to a committed result file (or the study's seed figures in its code)
#                 and still agrees with it as printed; a failure names FILE:LINE
#                 (docs/README.md, "Figures in prose"); the measurement log, exempt
#                 as history, names the data file of every table instead
#   docs_data     every generated block is the data file it quotes, and every
#                 committed results.json still parses and renders
# `cargo test --workspace` runs the same tests; this is the short way to run only them.
set -euo pipefail
cd "$(dirname "$0")/.."
exec cargo test --locked -q -p xferbench-studies --lib docs_ -- --nocapture
