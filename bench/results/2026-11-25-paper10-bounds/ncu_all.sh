#!/usr/bin/env bash
# On the GPU machine: ncu (bench/ncu_case.sh) on every case under .devcarry/p10, into one file.
set -u
export SPCONV_BENCH=$PWD/.devcarry/spconv-bench
for d in .devcarry/p10/*/; do
  d="${d%/}"; n="$(basename "$d")"
  for f in "$d"/*.xz; do [ -f "$f" ] && xz -d -f "$f"; done
  bash bench/ncu_case.sh "$d" "/tmp/ncu-$n.txt" || echo "ncu failed: $n"
  { echo "### $n"; cat "/tmp/ncu-$n.txt"; } >> "$OUT/ncu-paper10.txt"
done
nvidia-smi --query-gpu=name,driver_version --format=csv >> "$OUT/ncu-paper10.txt"
