#!/bin/bash
# paper10 FP16 at batch 64 (p = 0.9, half sums) in the image-pair layout with the 37-entry
# table, with legacy cuDNN FP16 (spconv-bench) and PyTorch FP16 channels-last
# (torch_baseline.py) in the same call. The cases are ../2026-11-27-image-pairs' .cases/f16ip
# (compiled at 1dcc0a0) with resnet-conv2, the one layer a round-15 entry matches (the
# 128->128 3x3 28x28 image-pair entry), compiled again at 7e3f49a:
#   cp -r .cases/f16ip .cases/f16ip15 && rm -rf .cases/f16ip15/resnet-conv2-n64-p0.9
#   SPCONV_TUNING_TABLE=$PWD/tuning/nvidia-h200.json SPCONV_DTYPE=f16 SPCONV_SPARSITIES=0.9 \
#     SPCONV_BATCHES=64 SPCONV_LAYOUT=image_pairs bench/compile_suite.sh .cases/f16ip15 resnet-conv2
set -u
export SPCONV_BENCH=$PWD/.devbin/spconv-bench
R=$OUT/paper10; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,serial --format=csv > $R/device.txt
d=f16ip15
SPCONV_COMMIT=$(cat .devbin/commit) bash bench/run_device.sh .cases/$d $R/$d > $R/$d.log 2>&1
PYTHONUNBUFFERED=1 timeout 150 python3 bench/torch_baseline.py $R/$d/suite.json --modes fp16 \
  --out $R/$d-torch-fp16.json > $R/$d-torch16.log 2>&1
tail -2 $R/$d.log
tar czf $OUT/paper10.tgz -C $OUT paper10 && rm -rf $R
