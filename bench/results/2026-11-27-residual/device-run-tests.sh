#!/bin/bash
# The residual epilogue on the device, one call (spconv-bench with residual support carried
# xz'd in .devbinx):
#  1. the residual GPU test cases (SPCONV_GPU_TESTS_ONLY='res' bench/gpu_tests.sh compile .gtr:
#     12 shapes x 4 sparsities) and a regression set of earlier cases (.gtx:
#     SPCONV_GPU_TESTS_ONLY='imgpairs-async$|adjpair$|^split2$|^chunks-line$|^sm-affine');
# GT_DIRS (default "gtr gtx") and GT_SAN (default gtr) name the folders; 3cf5182 ran
# GT_DIRS="gtr16 gtx16" GT_SAN=gtr16.
#  2. compute-sanitizer (memcheck, racecheck, synccheck, initcheck) on the residual cases at
#     p = 0, 0.5, 0.9 (.gtr/cases.txt).
set -u
mkdir -p /tmp/bin && xz -dc .devbinx/spconv-bench.xz > /tmp/bin/spconv-bench && chmod +x /tmp/bin/spconv-bench
export SPCONV_BENCH=/tmp/bin/spconv-bench
R=$OUT/tests; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,serial --format=csv > $R/device.txt
for d in ${GT_DIRS:-gtr gtx}; do
  timeout 150 bash bench/gpu_tests.sh run .$d > $R/gpu-tests-$d.log 2>&1
  echo "rc=$?" >> $R/gpu-tests-$d.log
  cp .$d/gpu-tests.txt $R/gpu-tests-$d.txt 2>/dev/null
  mkdir -p $R/json-$d && cp .$d/*.json $R/json-$d/ 2>/dev/null
done
SPCONV_SANITIZE_JOBS=14 SPCONV_SANITIZE_TIMEOUT=120 SPCONV_SANITIZE_COMMIT=$(cat .${GT_SAN:-gtr}/commit.txt) \
  SPCONV_SANITIZE_DEADLINE=$(( $(date +%s) + 240 )) \
  timeout 280 bash bench/sanitize.sh run .${GT_SAN:-gtr} $R/sanitize > $R/sanitize.log 2>&1
echo "rc=$?" >> $R/sanitize.log
for f in $R/*.log; do tail -n 3 $f; done
grep -c "^PASS" $R/sanitize/sanitize.txt; grep -v "^PASS" $R/sanitize/sanitize.txt | head
tar czf $OUT/tests.tgz -C $OUT tests && rm -rf $R
