#!/bin/bash
# Whole words by cp.async: the GPU tests on the device, one call.
#  1. the *-imgpairs-async-* and f16-adjpair-async-* cases (compiled with the *-imgpairs-*
#     and FP32 async-* cases, which travel apart) of bench/gpu_tests.sh at 4 sparsities, with
#     the H200 table:
#       SPCONV_TUNING_TABLE=$PWD/tuning/nvidia-h200.json \
#         SPCONV_GPU_TESTS_ONLY='imgpairs|adjpair-async|^async' bash bench/gpu_tests.sh compile .cases-cpa
#     each checked against its stated bound (FP32: cuDNN FP32's);
#  2. compute-sanitizer (memcheck, racecheck, synccheck, initcheck) on the half-precision
#     cp.async cases at p = 0.5 and 0.9.
set -u
export SPCONV_BENCH=$PWD/.devbin/spconv-bench
R=$OUT/tests; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,serial --format=csv > $R/device.txt
SPCONV_GPU_TESTS_ONLY='imgpairs-async|adjpair-async' timeout 200 bash bench/gpu_tests.sh run .cases-cpa > $R/gpu-tests.log 2>&1
echo "rc=$?" >> $R/gpu-tests.log
cp .cases-cpa/gpu-tests.txt $R/ 2>/dev/null
tail -3 $R/gpu-tests.log
for d in .cases-cpa/*async*-p0.5 .cases-cpa/*async*-p0.9; do
  case $d in *imgpairs-async*|*adjpair-async*) n=$(basename $d); echo "$n $n -";; esac
done > .cases-cpa/cases.txt
SPCONV_SANITIZE_JOBS=14 SPCONV_SANITIZE_TIMEOUT=120 SPCONV_SANITIZE_COMMIT=$(cat .cases-cpa/commit.txt) \
  SPCONV_SANITIZE_DEADLINE=$(( $(date +%s) + 220 )) \
  timeout 260 bash bench/sanitize.sh run .cases-cpa $R/sanitize > $R/sanitize.log 2>&1
echo "rc=$?" >> $R/sanitize.log
tail -3 $R/sanitize.log
tar czf $OUT/tests.tgz -C $OUT tests && rm -rf $R
