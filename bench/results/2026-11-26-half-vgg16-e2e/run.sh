#!/bin/bash
# VGG-16 `.half()` at batch 64 end to end through immconv.torch, every conv compiled (--policy
# all), against PyTorch FP16 channels-last in the same process, on the device: the first
# whole-network run with round 8's images-per-block rule (964d2da), which packs two words
# a block on VGG-16's conv4/conv5 layers where four were packed before. Kernels compiled here at
# b6ed9b1 into a fresh cache, cubins xz-compressed into .cache/carry-vgg-r8:
#   SPCONV_TUNING_TABLE=$PWD/tuning/nvidia-h200.json /usr/bin/python3 bench/torch_backend.py \
#     --phase compile --cache .cache/immconv-vgg-r8 --net vgg16 --batch 64 \
#     --sparsity 0.9 --policy all --dtype f16 --jobs 2
# Before: bench/results/2026-11-26-torch-half-full, vgg16-b64-f16-all (f7c6604): 12.714 ms,
# 0.57x PyTorch FP16 CL.
set -u
export PYTHONUNBUFFERED=1 IMMCONV_COMMIT=${IMMCONV_COMMIT:-unknown}
# The kernel cache keys carry the hash of the table the kernels were compiled with.
export SPCONV_TUNING_TABLE=$PWD/tuning/nvidia-h200.json
C=/tmp/immconv-cache
rm -rf "$C" && mkdir -p "$C" && cp -r .cache/carry-vgg-r8/. "$C"/
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/site python/ \
    > /dev/null 2>&1 && export PYTHONPATH=/tmp/site
LOG=$OUT/log.txt
{ date -u; nvidia-smi --query-gpu=name,driver_version,serial,clocks.max.sm --format=csv; } > "$LOG"
A="--sparsity 0.9 --cache $C --input-scale 0.1 --net vgg16 --batch 64 --dtype f16"
echo "== vgg16-b64-f16-all: bench/torch_backend.py --phase run --policy all $A" >> "$LOG"
timeout 400 python3 bench/torch_backend.py --phase run --policy all $A \
  --out "$OUT/vgg16-b64-f16-all.json" >> "$LOG" 2>&1
echo "rc=$?" >> "$LOG"
