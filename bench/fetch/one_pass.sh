#!/usr/bin/env bash
# Instruction fetch in one pass: the batch-1 regime (docs/tuning-log.md, "Instruction fetch
# in one pass"). Every SM runs its blocks' code once (one wave), from L2, with 4-16 warps;
# the rotated variants enter the body at 2, 4 or 16 points (warp w at segment w mod S), so
# an SM fetches several places of the same code at once. Writes one JSON per shape.
# usage (on the GPU machine): bash bench/fetch/one_pass.sh OUT_DIR
set -euo pipefail
out=${1:?usage: one_pass.sh OUT_DIR}
mkdir -p "$out"
here=$(dirname "$0")
for fmas in 4096 16384; do
  for shape in 128:1 128:2 128:4 512:1; do
    threads=${shape%:*} bps=${shape#*:}
    variants=(base:1:0:0:1 rotate2:1:0:0:2 rotate4:1:0:0:4)
    [ "$bps" -gt 1 ] && variants+=(copies2:2:0:0:1)
    [ "$threads" -eq 512 ] && variants+=(rotate16:1:0:0:16)
    echo "== $fmas FMAs, $threads threads, $bps blocks an SM, one wave"
    python3 "$here/ffma_stream.py" --fmas "$fmas" --threads "$threads" --blocks-per-sm "$bps" \
      --waves 1 --launches 20 --variant "${variants[@]}" \
      --json "$out/one-pass-$fmas-t$threads-b$bps.json"
  done
done
