#!/bin/bash
# Dynamic shared memory (docs/design.md, docs/tuning-log.md "Dynamic shared memory"): on the
# GPU machine, from the repository root, with the compiled cases carried:
#   bash bench/results/2026-11-28-dynamic-shared/device-run.sh STEP DIR [NCU_CASES]
# STEP gpu DIR: bench/gpu_tests.sh run on DIR (the dyn-* GPU tests, compiled here).
# STEP round DIR [NCU_CASES]: bench/variants.sh run on DIR (round46*.spec, compiled here),
#   bench/ncu_case.sh on the cases in NCU_CASES (comma-separated).
# STEP paper10 DIR: paper10 (bench/compile_suite.sh's cases) by bench/run_device.sh, then
#   PyTorch FP16 channels-last (bench/torch_baseline.py) and the per-layer table
#   (bench/results/2026-11-26-half-tuned3/summarize.py).
# STEP clocks -: VGG-16 end to end with a clock trace joined to its timed phases.
# STEP sanitize DIR: compute-sanitizer (memcheck, racecheck, synccheck, initcheck;
#   bench/sanitize.sh run) on every case of DIR.
# Each step's files under $OUT/STEP.tgz, its return code in $OUT/steps.txt.
set -u
source bench/device_env.sh
export SPCONV_BENCH=$PWD/build/bin/spconv-bench
step=$1 cases=$2 R=$OUT/$1${TAG:+-$TAG}  # TAG: two runs of a step in one call
mkdir -p $R
case $step in
  gpu)
    for f in "$cases"/*/*.xz; do [ -f "$f" ] && xz -d -f "$f"; done
    SPCONV_GPU_TESTS_ONLY="${SPCONV_GPU_TESTS_ONLY:-^dyn-}" timeout 300 \
      bash bench/gpu_tests.sh run "$cases" > $R/gpu-tests.log 2>&1
    echo "gpu rc=$?" >> $LOG; cp "$cases"/gpu-tests.txt $R/ 2>/dev/null; tail -4 $R/gpu-tests.log ;;
  round)
    timeout 480 bash bench/variants.sh run "$cases" $R/round.json "${3:-}" > $R/round.txt 2> $R/round.err
    echo "round rc=$?" >> $LOG; mkdir -p $R/ncu && cp "$cases"/ncu-*.txt $R/ncu/ 2>/dev/null
    cut -c1-70,400- $R/round.txt | sed 's/tiling=.*regs/regs/' | tail -40 ;;
  paper10)  # DIR from bench/compile_suite.sh; COMMIT names the compiler
    SPCONV_COMMIT=${COMMIT:-unknown} timeout 240 bash bench/run_device.sh "$cases" $R/p10 > $R/p10.log 2>&1
    timeout 150 python3 bench/torch_baseline.py $R/p10/suite.json --modes fp16 \
      --out $R/p10/torch-fp16.json > $R/torch16.log 2>&1
    python3 bench/results/2026-11-26-half-tuned3/summarize.py $R/p10 > $R/p10/summary.md 2>&1
    echo "paper10 $cases done" >> $LOG; tail -2 $R/p10.log; cat $R/p10/summary.md ;;
  clocks)  # DIR unused. VGG-16 FP16 b64, default policy, the carried cache .cache/carry-ip-vgg16
    # (compiled with the table of 281b08d, which its plan needs to hit the cache), timed with
    # 50 replays while nvidia-smi samples the clocks every 50 ms; bench/clock_phases.py then
    # says what each variant's timing window ran at (the phase markers of torch_backend.py).
    c=$(cache ip-vgg16)
    export SPCONV_TUNING_TABLE=$PWD/bench/results/2026-11-28-speed-of-light/table-281b08d.json
    F=clocks_throttle_reasons.active  # renamed clocks_event_reasons in newer drivers
    nvidia-smi --query-gpu=$F --format=csv,noheader > /dev/null 2>&1 || F=clocks_event_reasons.active
    nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,$F \
      --format=csv,noheader -lms 50 > $R/clocks.csv 2>&1 & smi=$!
    timeout 200 python3 bench/torch_backend.py --phase run --sparsity 0.9 --input-scale 0.1 \
      --batch 64 --dtype f16 --layout image_pairs --net vgg16 --policy default --cache "$c" \
      --out $R/vgg16.json > $R/vgg16.log 2>&1
    echo "clocks rc=$?" >> $LOG; kill $smi; sleep 1
    python3 bench/clock_phases.py $R/clocks.csv $R/vgg16.json --out $R/phases.json | tee -a $LOG
    tail -4 $R/vgg16.log ;;
  sanitize)
    for f in "$cases"/*/*.xz; do [ -f "$f" ] && xz -d -f "$f"; done
    for d in "$cases"/*/; do n=$(basename $d); echo "$n $n -"; done > "$cases"/cases.txt
    SPCONV_SANITIZE_JOBS=14 SPCONV_SANITIZE_TIMEOUT=200 \
      timeout 460 bash bench/sanitize.sh run "$cases" $R/sanitize > $R/sanitize.log 2>&1
    echo "sanitize rc=$?" >> $LOG; tail -6 $R/sanitize.log ;;
esac
n=$(basename $R); tar czf $OUT/$n.tgz -C $OUT $n && rm -rf $R
