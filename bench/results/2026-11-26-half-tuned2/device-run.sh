#!/bin/bash
# paper10 FP16 (p = 0.9, half sums) with the heuristic's tilings (.cases/f16h, 20 cases, as in
# ../2026-11-26-half-tuned) and with tuning/nvidia-h200.json after round 4 of the sweep
# (.cases/f16t2: the 5 layers with an entry, both batches; a case without one compiles as the
# heuristic's), in one run, with legacy cuDNN FP16 (spconv-bench) and PyTorch FP16
# channels-last (torch_baseline.py); ncu on the batch-1 layers the table now pairs by rows.
# Compiled here:
#   SPCONV_DTYPE=f16 SPCONV_SPARSITIES=0.9 bench/compile_suite.sh .cases/f16h   # at f7c6604
#   SPCONV_TUNING_TABLE=$PWD/tuning/nvidia-h200.json SPCONV_DTYPE=f16 SPCONV_SPARSITIES=0.9 \
#     bench/compile_suite.sh .cases/f16t2 vgg-conv3 vgg-conv2 alexnet-conv2 resnet-conv2 \
#     googlenet-1x1                                                              # at 1b33573
set -u
export SPCONV_BENCH=$PWD/.devbin/spconv-bench
R=$OUT/res; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv > $R/device.txt
SPCONV_COMMIT=f7c6604 bash bench/run_device.sh .cases/f16h $R/heuristic > $R/heuristic.log 2>&1
SPCONV_COMMIT=1b33573 bash bench/run_device.sh .cases/f16t2 $R/tuned > $R/tuned.log 2>&1
PYTHONUNBUFFERED=1 timeout 150 python3 bench/torch_baseline.py $R/heuristic/suite.json $R/tuned/suite.json --modes fp16 --out $R/torch-fp16.json > $R/torch16.log 2>&1
for c in vgg-conv3-n1 vgg-conv2-n1; do
  timeout 60 bash bench/ncu_case.sh .cases/f16h/$c-p0.9 $R/ncu-heuristic-$c.txt > /dev/null 2>&1
  timeout 60 bash bench/ncu_case.sh .cases/f16t2/$c-p0.9 $R/ncu-tuned-$c.txt > /dev/null 2>&1
done
# every file comes back in one archive (the per-case logs are too many to fetch one by one)
tar czf $OUT/res.tgz -C $OUT res && rm -rf $OUT/res
