#!/bin/bash
# paper10 FP16 at batch 64 (p = 0.9, half sums) in the image-pair layout, and the NCHW cases
# of ../2026-11-27-adjacent-pairs (both batches) again on the same machine, each with legacy
# cuDNN FP16 (spconv-bench) and PyTorch FP16 channels-last (torch_baseline.py). Compiled here:
#   SPCONV_TUNING_TABLE=$PWD/tuning/nvidia-h200.json SPCONV_DTYPE=f16 SPCONV_SPARSITIES=0.9 \
#     SPCONV_BATCHES=64 SPCONV_LAYOUT=image_pairs bench/compile_suite.sh .cases/f16ip
# (at 1dcc0a0) and, for NCHW, the same without SPCONV_LAYOUT and SPCONV_BATCHES into
# .cases/f16t4 (at 7b293b6).
set -u
export SPCONV_BENCH=$PWD/.devbin/spconv-bench
R=$OUT/paper10; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,serial --format=csv > $R/device.txt
for d in f16ip f16t4; do
  SPCONV_COMMIT=$(cat .devbin/commit) bash bench/run_device.sh .cases/$d $R/$d > $R/$d.log 2>&1
  PYTHONUNBUFFERED=1 timeout 150 python3 bench/torch_baseline.py $R/$d/suite.json --modes fp16 \
    --out $R/$d-torch-fp16.json > $R/$d-torch16.log 2>&1
  tail -2 $R/$d.log
done
tar czf $OUT/paper10.tgz -C $OUT paper10 && rm -rf $R
