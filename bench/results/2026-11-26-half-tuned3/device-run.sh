#!/bin/bash
# paper10 FP16 (p = 0.9, half sums) at ddee7e1's compiler with the round-5 tuning table
# (half-precision direct inputs on googlenet-1x1), in one device call, with legacy cuDNN FP16
# (spconv-bench) and PyTorch FP16 channels-last (torch_baseline.py). Compiled here:
#   SPCONV_TUNING_TABLE=$PWD/tuning/nvidia-h200.json SPCONV_DTYPE=f16 SPCONV_SPARSITIES=0.9 \
#     bench/compile_suite.sh .cases/f16t3
set -u
export SPCONV_BENCH=$PWD/.devbin/spconv-bench
R=$OUT/res; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv > $R/device.txt
SPCONV_COMMIT=ddee7e1 bash bench/run_device.sh .cases/f16t3 $R/tuned > $R/tuned.log 2>&1
PYTHONUNBUFFERED=1 timeout 150 python3 bench/torch_baseline.py $R/tuned/suite.json --modes fp16 --out $R/torch-fp16.json > $R/torch16.log 2>&1
tar czf $OUT/res.tgz -C $OUT res && rm -rf $OUT/res
