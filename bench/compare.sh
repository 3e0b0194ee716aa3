#!/bin/bash
# Side by side, in one run, best of three (see README "Speed"):
#   M3  -> GLB (hangar, 1 job)  vs mdx-m3-viewer parsing the same files (one node process)
#                                 vs a plain copy of the files (read + write)
#                                 vs hangar's own reads and writes alone (io_floor: the same
#                                    inputs read, outputs of the same sizes written, no conversion)
#   XMF -> GLB (hangar, 1 job)  vs inflating the same zlib buffers alone (python zlib, in-process)
#   both folders with --jobs 1..cores: files/s and MB/s of input per core count
# Usage: bench/compare.sh [CORPUS]   (CORPUS defaults to $HANGAR_CORPUS: its m3/ and x4/ folders;
#   needs node, npm, python3, bc; HANGAR_BIN=path skips the release build, PEER_DIR reuses an npm folder)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CORPUS=${1:-${HANGAR_CORPUS:?give the corpus folder or set HANGAR_CORPUS}}
if [ -z "${HANGAR_BIN:-}" ]; then (cd "$ROOT" && cargo build --release -q -p hangar-cli); fi
BIN=${HANGAR_BIN:-${CARGO_TARGET_DIR:-$ROOT/target}/release/hangar}
# hangar's own reads and writes with no conversion between them (hangar/examples/io_floor.rs)
(cd "$ROOT" && cargo build --release -q -p hangar --example io_floor)
FLOOR=${CARGO_TARGET_DIR:-$ROOT/target}/release/examples/io_floor
PEER=${PEER_DIR:-/tmp/hangar-bench-peer}
if [ ! -d "$PEER/node_modules/mdx-m3-viewer" ]; then
  mkdir -p "$PEER" && (cd "$PEER" && npm init -y >/dev/null && npm install --silent mdx-m3-viewer@5.12.0 >/dev/null)
fi
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
mkdir -p "$T/m3" "$T/xmf"
cp "$CORPUS"/m3/*.m3 "$T/m3/"
cp "$CORPUS"/x4/*.xmf "$T/xmf/"
secs() { local s e; s=$(date +%s.%N); "$@" >/dev/null 2>&1; e=$(date +%s.%N); echo "$e - $s" | bc -l; }
best3() { local b=""; for _ in 1 2 3; do local t; t=$("$@"); if [ -z "$b" ] || (( $(echo "$t < $b" | bc -l) )); then b=$t; fi; done; echo "$b"; }
conv() { rm -rf "$T/out"; secs "$BIN" convert "$1" "$T/out" --to glb --jobs "$2"; }
cpy() { rm -rf "$T/cp"; secs cp -r "$1" "$T/cp"; }
peer() { node "$ROOT/bench/mdx_parse.js" "$PEER" "$T"/m3/*.m3 2>/dev/null; }
mb() { du -sb "$1" | awk '{printf "%.1f", $1/1e6}'; }
r() { echo "scale=2; $1 / $2" | bc -l; }

m3h=$(best3 conv "$T/m3" 1); m3p=$(best3 peer); m3c=$(best3 cpy "$T/m3")
rm -rf "$T/out"; "$BIN" convert "$T/m3" "$T/out" --to glb --jobs 1 >/dev/null 2>&1 || true; m3o=$(mb "$T/out")
rm -rf "$T/glb"; mv "$T/out" "$T/glb"
io() { rm -rf "$T/io"; secs "$FLOOR" "$1" "$T/io" "$T/glb"; }
m3f=$(best3 io "$T/m3")
xh=$(best3 conv "$T/xmf" 1); xi=$(python3 "$ROOT/bench/inflate.py" "$T"/xmf/*.xmf)
rm -rf "$T/out"; "$BIN" convert "$T/xmf" "$T/out" --to glb --jobs 1 >/dev/null 2>&1 || true; xo=$(mb "$T/out")
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-6s %5s %8s %8s  %s\n' format files "in MB" "out MB" "hangar to GLB (1 job), s / peer, s"
printf '%-6s %5s %8s %8s  %.3f | mdx-m3-viewer parse %.3f (%sx faster) | copy %.3f (hangar = %sx copy)\n' \
  M3 "$(ls "$T/m3" | wc -l)" "$(mb "$T/m3")" "$m3o" "$m3h" "$m3p" "$(r "$m3p" "$m3h")" "$m3c" "$(r "$m3h" "$m3c")"
printf '%-6s %5s %8s %8s  %.3f | its reads and writes alone, no conversion (io_floor) = %sx copy; conversion = %sx copy\n' \
  "M3 I/O" "$(ls "$T/m3" | wc -l)" "$(mb "$T/m3")" "$m3o" "$m3f" "$(r "$m3f" "$m3c")" "$(r "$(echo "$m3h - $m3f" | bc -l)" "$m3c")"
printf '%-6s %5s %8s %8s  %.3f | zlib inflate alone %.3f (hangar = %sx inflate)\n' \
  XMF "$(ls "$T/xmf" | wc -l)" "$(mb "$T/xmf")" "$xo" "$xh" "$xi" "$(r "$xh" "$xi")"
echo "throughput per core count (M3 + XMF folders, input MB/s):"
total=$(echo "$(du -sb "$T/m3" | cut -f1) + $(du -sb "$T/xmf" | cut -f1)" | bc)
n=1; while [ "$n" -le "$(nproc)" ]; do
  a=$(best3 conv "$T/m3" "$n"); b=$(best3 conv "$T/xmf" "$n")
  printf '  --jobs %-3s %.3f s  %.1f MB/s\n' "$n" "$(echo "$a + $b" | bc -l)" "$(echo "$total / 1000000 / ($a + $b)" | bc -l)"
  n=$((n * 2))
done
echo "output size against input (M3 + XMF folders, --jobs all):"
in_mb=$(echo "scale=1; $total / 1000000" | bc -l)
for flags in "" "--quantize" "--compress" "--quantize --compress"; do
  rm -rf "$T/out"; mkdir -p "$T/out"
  # shellcheck disable=SC2086
  "$BIN" convert "$T/m3" "$T/out/m3" --to glb $flags >/dev/null 2>&1 || true
  # shellcheck disable=SC2086
  "$BIN" convert "$T/xmf" "$T/out/xmf" --to glb $flags >/dev/null 2>&1 || true
  out=$(find "$T/out" -name '*.glb' -printf '%s\n' | awk '{s+=$1} END {printf "%.1f", s/1e6}')
  printf '  %-22s %6s MB from %s MB (%sx)\n' "${flags:-plain}" "$out" "$in_mb" "$(r "$out" "$in_mb")"
done
