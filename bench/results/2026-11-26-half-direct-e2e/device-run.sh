#!/bin/bash
# One device call: run.sh (ResNet-50 FP16 end to end, carry .cache/carry-dir), then the four
# ncu cases of ncu.spec (here: `bench/variants.sh compile ncu.spec .r6`; carry .r6), timed
# twice each and profiled with bench/ncu_case.sh.
set -u
IMMCONV_COMMIT=${IMMCONV_COMMIT:-unknown} bash bench/results/2026-11-26-half-direct-e2e/run.sh
export SPCONV_BENCH=$PWD/.devbin/spconv-bench
mkdir -p $OUT/ncu
timeout 200 bash bench/variants.sh run .r6 $OUT/ncu/ncu.json l31c2-f16,l31c2-f32,l41c2-f16,l41c2-f32 \
  > $OUT/ncu/ncu.txt 2>&1
cp .r6/ncu-*.txt $OUT/ncu/ 2>/dev/null
