#!/bin/bash
# Half-precision direct inputs (eab0371) on the device, one call:
#  1. ResNet-50 FP16 at batch 64 with direct inputs on its 1x1 convs (part c of
#     ../2026-11-26-r50-f16-vs-f32/device-run.sh; bundle .net/carry/r50-b64-f16d, compiled at
#     eab0371's tree with the round-4 table: SPCONV_DTYPE=f16
#     SPCONV_TUNING_TABLE=$PWD/tuning/nvidia-h200.json SPCONV_CACHE_DIR=none
#     bench/compile_network.sh resnet50 64 0.9 1 .net/r50-b64-f16d --jobs=2);
#  2. every half GPU test case (SPCONV_GPU_TESTS_ONLY='^b?f16-' bench/gpu_tests.sh compile
#     .cases/gpu-half-dir: 21 shapes x 4 sparsities, the 9 f16-dir-* new);
#  3. compute-sanitizer (memcheck, racecheck, synccheck, initcheck) on the direct-input cases
#     at p = 0, 0.5, 0.9, f16-1x1 and a ResNet-50 layer3.1.conv1 shape at batch 4 with the
#     heuristic's tiling (split-c 4, direct): .cases/gpu-half-dir/cases.txt.
set -u
export SPCONV_BENCH=$PWD/.devbin/spconv-bench
bash bench/results/2026-11-26-r50-f16-vs-f32/device-run.sh c
R=$OUT/res; mkdir -p $R
timeout 150 bash bench/gpu_tests.sh run .cases/gpu-half-dir > $R/gpu-tests.log 2>&1
echo "rc=$?" >> $R/gpu-tests.log
cp .cases/gpu-half-dir/gpu-tests.txt $R/ 2>/dev/null
SPCONV_SANITIZE_JOBS=14 SPCONV_SANITIZE_TIMEOUT=120 SPCONV_SANITIZE_COMMIT=eab0371 \
  SPCONV_SANITIZE_DEADLINE=$(( $(date +%s) + 200 )) \
  timeout 290 bash bench/sanitize.sh run .cases/gpu-half-dir $R/sanitize > $R/sanitize.log 2>&1
echo "rc=$?" >> $R/sanitize.log
tar czf $OUT/res-dir.tgz -C $OUT res && rm -rf $OUT/res
