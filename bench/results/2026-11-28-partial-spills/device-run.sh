#!/bin/bash
# Partial spill reloads (docs/tuning-log.md "Partial spill reloads"): on the GPU machine,
# from the repository root, with the compiled cases carried:
#   bash bench/results/2026-11-28-partial-spills/device-run.sh STEP DIR [NCU_CASES]
# STEP scan DIR: bench/sass_spill_check.py over the SASS (cuobjdump -sass) of every cubin
#   under DIR (*.cubin, *.cubin.xz, *.tar.xz of cubins, and DIR/*/kernels.cubin[.xz]).
# STEP round DIR [NCU_CASES]: bench/variants.sh run on DIR (round48*.spec, compiled here),
#   bench/ncu_case.sh on the cases in NCU_CASES (comma-separated).
# STEP gpu DIR: bench/gpu_tests.sh run on DIR (SPCONV_GPU_TESTS_ONLY, compiled here).
# STEP sanitize DIR: compute-sanitizer (bench/sanitize.sh run) on every case of DIR.
# STEP paper10 DIR: paper10 (bench/compile_suite.sh's cases) by bench/run_device.sh, then
#   PyTorch FP16 channels-last (bench/torch_baseline.py) and the per-layer table
#   (bench/results/2026-11-26-half-tuned3/summarize.py).
# Each step's files under $OUT/STEP[-TAG].tgz, its return code in $OUT/steps.txt.
set -u
source bench/device_env.sh
export SPCONV_BENCH=$PWD/build/bin/spconv-bench
step=$1 cases=$2 R=$OUT/$1${TAG:+-$TAG}
mkdir -p $R
case $step in
  scan)
    for f in "$cases"/*.tar.xz; do [ -f "$f" ] && tar xJf "$f" -C "$cases"; done
    for f in "$cases"/*.xz "$cases"/*/*.xz; do [ -f "$f" ] && xz -d -f "$f"; done
    status=0
    for f in $(find "$cases" -name '*.cubin' | sort); do
      n=${f#$cases/}
      cuobjdump -sass "$f" | grep -E 'Function :|STL|LDL' |
        python3 bench/sass_spill_check.py --name "$n" \
        --json $R/scan.jsonl >> $R/scan.txt 2>&1 || status=1
    done
    echo "scan $cases rc=$status" >> $LOG; grep -c "suspect reloads" $R/scan.txt
    grep -v " 0 suspect" $R/scan.txt | grep "suspect reloads" | head -40 ;;
  round)
    timeout 480 bash bench/variants.sh run "$cases" $R/round.json "${3:-}" > $R/round.txt 2> $R/round.err
    echo "round rc=$?" >> $LOG; mkdir -p $R/ncu && cp "$cases"/ncu-*.txt $R/ncu/ 2>/dev/null
    cut -c1-70,400- $R/round.txt | sed 's/tiling=.*regs/regs/' | tail -40 ;;
  gpu)
    for f in "$cases"/*/*.xz; do [ -f "$f" ] && xz -d -f "$f"; done
    SPCONV_GPU_TESTS_ONLY="${SPCONV_GPU_TESTS_ONLY:-^adjw-}" timeout 300 \
      bash bench/gpu_tests.sh run "$cases" > $R/gpu-tests.log 2>&1
    echo "gpu rc=$?" >> $LOG; cp "$cases"/gpu-tests.txt $R/ 2>/dev/null; tail -4 $R/gpu-tests.log ;;
  sanitize)
    for f in "$cases"/*/*.xz; do [ -f "$f" ] && xz -d -f "$f"; done
    for d in "$cases"/*/; do n=$(basename $d); echo "$n $n -"; done > "$cases"/cases.txt
    SPCONV_SANITIZE_JOBS=14 SPCONV_SANITIZE_TIMEOUT=200 \
      timeout 460 bash bench/sanitize.sh run "$cases" $R/sanitize > $R/sanitize.log 2>&1
    echo "sanitize rc=$?" >> $LOG; tail -6 $R/sanitize.log ;;
  paper10)  # DIR from bench/compile_suite.sh; COMMIT names the compiler
    SPCONV_COMMIT=${COMMIT:-unknown} timeout 240 bash bench/run_device.sh "$cases" $R/p10 > $R/p10.log 2>&1
    timeout 150 python3 bench/torch_baseline.py $R/p10/suite.json --modes fp16 \
      --out $R/p10/torch-fp16.json > $R/torch16.log 2>&1
    python3 bench/results/2026-11-26-half-tuned3/summarize.py $R/p10 > $R/p10/summary.md 2>&1
    echo "paper10 $cases done" >> $LOG; tail -2 $R/p10.log; cat $R/p10/summary.md ;;
esac
n=$(basename $R); tar czf $OUT/$n.tgz -C $OUT $n && rm -rf $R
