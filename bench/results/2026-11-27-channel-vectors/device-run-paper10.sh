#!/bin/bash
# paper10 FP16 at batch 64 (p = 0.9, half sums) in the image-pair layout with the 48-entry
# table (channel vectors on vgg-conv3, alexnet-conv2 and resnet-conv2), with legacy cuDNN
# FP16 (spconv-bench) and PyTorch FP16 channels-last (torch_baseline.py) in the same call.
# Compiled here at 06aea10:
#   SPCONV_TUNING_TABLE=$PWD/tuning/nvidia-h200.json SPCONV_DTYPE=f16 SPCONV_SPARSITIES=0.9 \
#     SPCONV_BATCHES=64 SPCONV_LAYOUT=image_pairs bench/compile_suite.sh .cases/f16ip48
# usage (device, carrying .cases/f16ip48 and .devbinx): bash device-run-paper10.sh
set -u
mkdir -p .devbin && xz -dc .devbinx/spconv-bench.xz > .devbin/spconv-bench &&
  chmod +x .devbin/spconv-bench && cp .devbinx/commit .devbin/
export SPCONV_BENCH=$PWD/.devbin/spconv-bench
R=$OUT/paper10; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,serial --format=csv > $R/device.txt
d=${SPCONV_PAPER10_CASES:-f16ip48}
SPCONV_COMMIT=${SPCONV_PAPER10_COMMIT:-06aea10} bash bench/run_device.sh .cases/$d $R/$d > $R/$d.log 2>&1
PYTHONUNBUFFERED=1 timeout 150 python3 bench/torch_baseline.py $R/$d/suite.json --modes fp16 \
  --out $R/$d/torch-fp16.json > $R/$d-torch16.log 2>&1
python3 bench/results/2026-11-26-half-tuned3/summarize.py $R/$d > $R/$d/summary.md 2>&1
tail -2 $R/$d.log; tail -4 $R/$d/summary.md
tar czf $OUT/paper10.tgz -C $OUT paper10 && rm -rf $R
