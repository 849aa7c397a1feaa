#!/bin/bash
# ResNet-50, MobileNetV2 and VGG-16 `.half()` end to end through immconv.torch against PyTorch
# FP16 channels-last, on the device machine, every conv from the kernel cache compiled here
# (no --keep-missing: a missing kernel is an error), carried in .cache/carry-half2 (cubins
# xz). The input is scaled by 0.1 (the FP16 model overflows on unit-variance input).
# Compiled here at f7c6604 (spconv-translate of 1d65635's C++):
#   SPCONV_BIN=<that build>/bin /usr/bin/python3 bench/torch_backend.py --phase compile \
#     --cache .cache/immconv-half-s2 --net NET --batch B --sparsity 0.9 --policy all --dtype f16 --jobs 1
# usage: run.sh PART   (PART a: ResNet-50 batch 64, policy all and default; b: the rest)
set -u
export PYTHONUNBUFFERED=1 IMMCONV_COMMIT=f7c6604
C=/tmp/immconv-cache
rm -rf "$C" && cp -r .cache/carry-half2 "$C"
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/site python/ \
    > /dev/null 2>&1 && export PYTHONPATH=/tmp/site
LOG=$OUT/log-$1.txt
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; } > "$LOG"
A="--sparsity 0.9 --cache $C --input-scale 0.1"
run() {  # name, then torch_backend.py arguments
  local name=$1; shift
  echo "== $name: bench/torch_backend.py --phase run $* $A" >> "$LOG"
  timeout 280 python3 bench/torch_backend.py --phase run "$@" $A --out "$OUT/$name.json" >> "$LOG" 2>&1
  echo "rc=$?" >> "$LOG"
}
if [ "$1" = a ]; then
  run resnet50-b64-f16-all --net resnet50 --batch 64 --policy all --dtype f16
  run resnet50-b64-f16-default --net resnet50 --batch 64 --policy default --dtype f16
else
  run resnet50-b1-f16-all --net resnet50 --batch 1 --policy all --dtype f16
  run mobilenetv2-b64-f16-all --net mobilenetv2 --batch 64 --policy all --dtype f16
  run vgg16-b64-f16-all --net vgg16 --batch 64 --policy all --dtype f16
fi
