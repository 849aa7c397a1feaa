#!/bin/bash
# Adjacent pairs on the device, one call:
#  1. every half GPU test case (SPCONV_GPU_TESTS_ONLY='^b?f16-' bench/gpu_tests.sh compile
#     .cases/gpu-adj: 29 shapes x 4 sparsities, the 8 *-adjpair-* new; f16-dir-split and
#     f16-dir-llvm are adjacent pairs now by the compiler's choice);
#  2. compute-sanitizer (memcheck, racecheck, synccheck, initcheck) on the adjpair cases at
#     p = 0, 0.5, 0.9 and the two dir cases at 0.9 (.cases/gpu-adj/cases.txt).
set -u
export SPCONV_BENCH=$PWD/.devbin/spconv-bench
R=$OUT/tests; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,serial --format=csv > $R/device.txt
SPCONV_GPU_TESTS_ONLY='^b?f16-' timeout 200 bash bench/gpu_tests.sh run .cases/gpu-adj > $R/gpu-tests.log 2>&1
echo "rc=$?" >> $R/gpu-tests.log
cp .cases/gpu-adj/gpu-tests.txt $R/ 2>/dev/null
SPCONV_SANITIZE_JOBS=14 SPCONV_SANITIZE_TIMEOUT=120 SPCONV_SANITIZE_COMMIT=$(cat .cases/gpu-adj/commit.txt) \
  SPCONV_SANITIZE_DEADLINE=$(( $(date +%s) + 300 )) \
  timeout 330 bash bench/sanitize.sh run .cases/gpu-adj $R/sanitize > $R/sanitize.log 2>&1
echo "rc=$?" >> $R/sanitize.log
