#!/bin/sh
# Interop between xferbench and antmicro/warp-pipe's C code, both directions:
#   1. warp-pipe's memory-mock ← xferbench warp client (every connection mode)
#   2. xferbench warp serve ← warp-pipe's client library (scripts/warp-interop.c)
# Usage: scripts/warp-interop.sh WARP_PIPE_SOURCE_DIR [XFERBENCH_BINARY]
# Needs gcc and libyaml (the memory mock links it); no CMake needed.
set -eu
src=$1
xb=${2:-target/release/xferbench}
here=$(cd "$(dirname "$0")" && pwd)
out=$(mktemp -d)
lib="$src/src/server.c $src/src/client.c $src/src/crc.c $src/src/proto.c"
gcc -std=gnu2x -O2 -I"$src/inc" $lib "$src/src/yaml_configspace.c" "$src/memory-mock/main.c" -lyaml -o "$out/memory_mock"
gcc -std=gnu2x -O2 -I"$src/inc" $lib "$src/src/yaml_configspace.c" "$here/warp-interop.c" -lyaml -o "$out/warp_client"

echo "== warp-pipe memory-mock <- xferbench warp client"
"$out/memory_mock" -4 -p 21150 >/dev/null 2>&1 &
mock=$!
sleep 0.5
for mode in shared per-thread pipelined; do
    "$xb" warp client --connect 127.0.0.1:21150 --threads 1 --iterations 100 --crc bitwise --connection "$mode"
done
# Its SIGINT handler is a no-op when SIGINT was ignored (background job): TERM.
kill -TERM "$mock"; wait "$mock" || true

echo "== xferbench warp serve <- warp-pipe client library"
"$xb" warp serve --port 21151 --crc bitwise &
srv=$!
sleep 0.5
"$out/warp_client" 21151 100
kill -INT "$srv"; wait "$srv"
rm -rf "$out"
