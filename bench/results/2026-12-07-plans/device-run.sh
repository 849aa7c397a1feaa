#!/bin/bash
# On the GPU machine, from the repository root (bench/results moved out but for this folder),
# with build/bin/spconv-bench, the round's cases (.sol/r61, bench/variants.sh compile of
# round61.spec) and the ResNet-50 b64 image-pair kernel cache (.cache/carry-ip) carried:
#   bash bench/results/2026-12-07-plans/device-run.sh STEP...
# round: bench/variants.sh run on .sol/r61 (or $ROUND61_DIR: a subset) (VARIANTS_REPS, default 2, --no-half-baselines;
#   ncu on the cases in NCU_CASES, comma-separated);
# round62: the same on .sol/r62 (or $ROUND62_DIR) (round62.spec: cluster launches; ncu on NCU_CASES62;
#   ROUND_BENCH_ARGS replaces --no-half-baselines, ROUND_TIMEOUT the 300 s);
# gpu: bench/gpu_tests.sh run on ${SAN_DIR:-.sol/san}/gpu (the cluster cases, SPCONV_GPU_TESTS_ONLY=cluster)
#   and cluster_attr.py on each (the driver's view of the compiled cluster shape);
# sanitize: bench/sanitize.sh run on .sol/san (those cases, the four tools);
# paper10-TAG: paper10 FP16 at batch 1 from .sol/p10b1-TAG (bench/run_device.sh, then
#   bench/torch_baseline.py's FP16 modes on the same suite; 2026-11-26-half-tuned3/summarize.py, kept);
# fetch: bench/fetch/one_pass.sh (straight-line FFMA code in one pass, the batch-1 regime);
# plans: plans.py on the cache (ResNet-50 FP16 b64, image pairs; PLANS_TIMEOUT s, default 280).
# Each step's files under $OUT/STEP.tgz, its return code in $OUT/steps.txt.
set -u
source bench/device_env.sh
export SPCONV_BENCH=$PWD/build/bin/spconv-bench
H=bench/results/2026-12-07-plans
for step in "$@"; do
  R=$OUT/$step; mkdir -p $R
  case $step in
    round)
      VARIANTS_REPS=${VARIANTS_REPS:-2} VARIANTS_BENCH_ARGS=--no-half-baselines timeout 330 \
        bash bench/variants.sh run ${ROUND61_DIR:-.sol/r61} $R/round.json "${NCU_CASES:-}" > $R/round.txt 2> $R/round.err
      echo "round rc=$?" >> $LOG; cp ${ROUND61_DIR:-.sol/r61}/ncu-*.txt $R/ 2>/dev/null
      python3 $H/summarize_round.py $R/round.json | tee $R/summary.txt ;;
    round62)
      VARIANTS_REPS=${VARIANTS_REPS:-2} VARIANTS_BENCH_ARGS=${ROUND_BENCH_ARGS:---no-half-baselines} timeout ${ROUND_TIMEOUT:-300} \
        bash bench/variants.sh run ${ROUND62_DIR:-.sol/r62} $R/round.json "${NCU_CASES62:-}" > $R/round.txt 2> $R/round.err
      echo "round62 rc=$?" >> $LOG; cp ${ROUND62_DIR:-.sol/r62}/ncu-*.txt $R/ 2>/dev/null
      python3 $H/summarize_round.py $R/round.json | tee $R/summary.txt ;;
    gpu)
      SPCONV_GPU_TESTS_ONLY=cluster timeout 120 bash bench/gpu_tests.sh run ${SAN_DIR:-.sol/san}/gpu \
        > $R/gpu.txt 2>&1
      echo "gpu rc=$?" >> $LOG; cp ${SAN_DIR:-.sol/san}/gpu/gpu-tests.txt $R/ 2>/dev/null
      grep -E "PASS|FAIL" $R/gpu.txt | tail -14
      python3 $H/cluster_attr.py ${SAN_DIR:-.sol/san}/gpu/*-p0.9 2>&1 | tee $R/cluster-attr.txt ;;
    sanitize)
      SPCONV_SANITIZE_JOBS=8 timeout 240 bash bench/sanitize.sh run ${SAN_DIR:-.sol/san} $R/san > $R/sanitize.log 2>&1
      echo "sanitize rc=$?" >> $LOG; tail -5 $R/sanitize.log ;;
    paper10-*)  # paper10-TAG: the suite compiled into .sol/p10b1-TAG (bench/compile_suite.sh)
      cases=.sol/p10b1-${step#paper10-}
      SPCONV_COMMIT=${IMMCONV_COMMIT:-unknown} timeout 240 bash bench/run_device.sh "$cases" $R/p10 > $R/p10.log 2>&1
      timeout 150 python3 bench/torch_baseline.py $R/p10/suite.json --modes fp16 \
        --out $R/p10/torch-fp16.json > $R/torch16.log 2>&1
      python3 bench/results/2026-11-26-half-tuned3/summarize.py $R/p10 > $R/p10/summary.md 2>&1
      echo "$step done" >> $LOG; tail -2 $R/p10.log; cat $R/p10/summary.md ;;
    fetch)
      timeout 150 bash bench/fetch/one_pass.sh $R > $R/one-pass.txt 2>&1
      echo "fetch rc=$?" >> $LOG; cat $R/one-pass.txt ;;
    plans)
      timeout ${PLANS_TIMEOUT:-280} python3 $H/plans.py "$(cache ip)" $R/plans.json > $R/plans.log 2>&1
      echo "plans rc=$?" >> $LOG; tail -75 $R/plans.log ;;
  esac
  tar czf $OUT/$step.tgz -C $OUT $step && rm -rf $R
done
cat $LOG
