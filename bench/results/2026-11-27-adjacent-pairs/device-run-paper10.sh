#!/bin/bash
# paper10 FP16 (p = 0.9, half sums) with adjacent pairs (googlenet-1x1 is the only paper10
# layer they apply to) and the 20-entry table, in one device call, with legacy cuDNN FP16
# (spconv-bench) and PyTorch FP16 channels-last (torch_baseline.py). Compiled here:
#   SPCONV_TUNING_TABLE=$PWD/tuning/nvidia-h200.json SPCONV_DTYPE=f16 SPCONV_SPARSITIES=0.9 \
#     bench/compile_suite.sh .cases/f16t4
set -u
export SPCONV_BENCH=$PWD/.devbin/spconv-bench
R=$OUT/paper10; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,serial --format=csv > $R/device.txt
SPCONV_COMMIT=$(cat .devbin/commit) bash bench/run_device.sh .cases/f16t4 $R/tuned > $R/tuned.log 2>&1
PYTHONUNBUFFERED=1 timeout 150 python3 bench/torch_baseline.py $R/tuned/suite.json --modes fp16 --out $R/torch-fp16.json > $R/torch16.log 2>&1
tar czf $OUT/paper10.tgz -C $OUT paper10 && rm -rf $R
