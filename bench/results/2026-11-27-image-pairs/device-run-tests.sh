#!/bin/bash
# The image-pair layout's GPU tests on the device, one call:
#  1. the 8 *-imgpairs-* cases of bench/gpu_tests.sh at sparsities 0, 0.5, 0.9, 1
#     (compiled here at 1dcc0a0 with the H200 table: SPCONV_TUNING_TABLE=$PWD/tuning/nvidia-h200.json
#     SPCONV_GPU_TESTS_ONLY=imgpairs bash bench/gpu_tests.sh compile .cases/gpu-ip), each
#     checked against its stated bound;
#  2. compute-sanitizer (memcheck, racecheck, synccheck, initcheck) on them at p = 0.5 and 0.9
#     (.cases/gpu-ip/cases.txt).
set -u
export SPCONV_BENCH=$PWD/.devbin/spconv-bench
R=$OUT/tests; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,serial --format=csv > $R/device.txt
SPCONV_GPU_TESTS_ONLY=imgpairs timeout 150 bash bench/gpu_tests.sh run .cases/gpu-ip > $R/gpu-tests.log 2>&1
echo "rc=$?" >> $R/gpu-tests.log
cp .cases/gpu-ip/gpu-tests.txt $R/ 2>/dev/null
tail -3 $R/gpu-tests.log
SPCONV_SANITIZE_JOBS=14 SPCONV_SANITIZE_TIMEOUT=120 SPCONV_SANITIZE_COMMIT=$(cat .cases/gpu-ip/commit.txt) \
  SPCONV_SANITIZE_DEADLINE=$(( $(date +%s) + 200 )) \
  timeout 230 bash bench/sanitize.sh run .cases/gpu-ip $R/sanitize > $R/sanitize.log 2>&1
echo "rc=$?" >> $R/sanitize.log
tail -3 $R/sanitize.log
tar czf $OUT/tests.tgz -C $OUT tests && rm -rf $R
