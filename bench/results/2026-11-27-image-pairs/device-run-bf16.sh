#!/bin/bash
# paper10 BF16 at batch 64 (p = 0.9, half sums) in the image-pair layout, with legacy cuDNN
# BF16 (spconv-bench) and PyTorch BF16 channels-last (torch_baseline.py), one call.
# Compiled here (at 4d947c1 + docs, the 33-entry table):
#   SPCONV_TUNING_TABLE=$PWD/tuning/nvidia-h200.json SPCONV_DTYPE=bf16 SPCONV_SPARSITIES=0.9 \
#     SPCONV_BATCHES=64 SPCONV_LAYOUT=image_pairs bench/compile_suite.sh .cases/bf16ip
set -u
export SPCONV_BENCH=$PWD/.devbin/spconv-bench
R=$OUT/bf16; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,serial --format=csv > $R/device.txt
SPCONV_COMMIT=$(git rev-parse --short HEAD 2>/dev/null || cat .devbin/commit) \
  bash bench/run_device.sh .cases/bf16ip $R/bf16ip > $R/bf16ip.log 2>&1
PYTHONUNBUFFERED=1 timeout 150 python3 bench/torch_baseline.py $R/bf16ip/suite.json --modes bf16 \
  --out $R/bf16ip/torch-bf16.json > $R/bf16ip-torch.log 2>&1
tail -3 $R/bf16ip-torch.log
tar czf $OUT/bf16.tgz -C $OUT bf16 && rm -rf $R
