#!/usr/bin/env bash
# usage: bench/compile_per_conv.sh SPLIT_DIR OUT.json [spconv-translate flags]
#
# Compiles every conv of a network split one per file (bench/networks.py NET --split DIR)
# cold and on its own, one after the other, recording each conv's wall time and peak memory:
# the largest single process (GNU time: spconv-translate or the largest ptxas it waited for)
# and the sum of the resident sets of spconv-translate and its ptxas/nvlink children,
# sampled every 0.2 s. Issue 10's per-conv budget is 30 s and 2 GiB.
set -euo pipefail
[ $# -ge 2 ] || { sed -n '2,9p' "$0"; exit 2; }
split="$1"; out="$2"; shift 2
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=bench/peak_rss.sh
. "$here/peak_rss.sh"
bin="${SPCONV_BIN:-$here/../build/bin}"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
echo "[" > "$out"
first=1
for f in "$split"/*.mlir; do
  name="$(basename "$f" .mlir)"
  /usr/bin/time -f '%M %e' -o "$tmp/time.txt" "$bin/spconv-translate" --spconv-compile "$f" \
    --cache-dir=none --artifact-prefix="$tmp/k" -o "$tmp/k.json" "$@" 2> "$tmp/log" &
  wait_peak_rss $! ||
    { echo "compile_per_conv.sh: $name failed:" >&2; tail -3 "$tmp/log" >&2; exit 1; }
  peak=$PEAK_RSS_KB
  read -r rss wall < "$tmp/time.txt"
  [ $first -eq 1 ] || echo "," >> "$out"
  first=0
  printf '{"conv": "%s", "wall_seconds": %s, "peak_rss_mib_largest_process": %d, "peak_rss_mib_sum_sampled": %d}' \
    "$name" "$wall" $((rss / 1024)) $((peak / 1024)) >> "$out"
  echo "$name: ${wall} s, $((rss / 1024)) MiB largest process, $((peak / 1024)) MiB summed"
  rm -f "$tmp"/k.*
done
echo "]" >> "$out"
