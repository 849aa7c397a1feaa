#!/bin/bash
# ResNet-50 and MobileNetV2 `.half()` end to end through immconv.torch with the measured
# policy's layout choice (python/immconv/torch/layout.py: a kept layer runs NCHW or
# channels-last, conversions counted), against PyTorch FP16 channels-last in the same run,
# on the device machine. Kernels from the kernel cache compiled for
# ../2026-11-26-torch-half-full (f7c6604's spconv-translate), carried in .cache/carry-layout
# (its ResNet-50 and MobileNetV2 units; no --keep-missing: a missing kernel is an error).
# The input is scaled by 0.1 (the FP16 model overflows on unit-variance input).
# Besides PyTorch FP16 channels-last (eager, from a CUDA graph: the baseline), each
# run times the same model through torch.compile's Inductor (--inductor: a fused dense
# baseline) and the ablation immconv_all_kept_channels_last (every conv kept: the fusion
# without the sparse kernels).
# usage: run.sh PART   (a: ResNet-50 batch 64, with torch.compile(backend="immconv");
#                       b: ResNet-50 batch 1, MobileNetV2 batch 64; c: VGG-16 batch 64;
#                       d: MobileNetV2 and ResNet-50 in BF16 at batch 64)
set -u
export PYTHONUNBUFFERED=1 IMMCONV_COMMIT=${IMMCONV_COMMIT:-unknown}
C=/tmp/immconv-cache
rm -rf "$C" && mkdir -p "$C"
[ -d .cache/carry-layout ] && cp -r .cache/carry-layout/. "$C"/
# part c: VGG-16's unit of the same cache (.cache/carry-vgg); part d: BF16 kernels compiled
# here at 707cf66 into .cache/carry-bf16 (cubins xz) by
#   /usr/bin/python3 bench/torch_backend.py --phase compile --cache .cache/immconv-bf16 \
#     --net NET --batch 64 --sparsity 0.9 --policy all --dtype bf16 --jobs 2
[ -d .cache/carry-vgg ] && cp -r .cache/carry-vgg/. "$C"/
[ -d .cache/carry-bf16 ] && cp -r .cache/carry-bf16/. "$C"/
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/site python/ \
    > /dev/null 2>&1 && export PYTHONPATH=/tmp/site
LOG=$OUT/log-$1.txt
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; } > "$LOG"
A="--sparsity 0.9 --cache $C --input-scale 0.1"
run() {  # name, then torch_backend.py arguments
  local name=$1; shift
  echo "== $name: bench/torch_backend.py --phase run $* $A" >> "$LOG"
  timeout 400 python3 bench/torch_backend.py --phase run "$@" $A --out "$OUT/$name.json" >> "$LOG" 2>&1
  echo "rc=$?" >> "$LOG"
}
if [ "$1" = a ]; then
  run resnet50-b64-f16-default --net resnet50 --batch 64 --policy default --dtype f16 \
      --inductor --backend
elif [ "$1" = d ]; then
  run mobilenetv2-b64-bf16-default --net mobilenetv2 --batch 64 --policy default --dtype bf16 \
      --inductor
  run resnet50-b64-bf16-default --net resnet50 --batch 64 --policy default --dtype bf16 \
      --inductor
elif [ "$1" = c ]; then
  run vgg16-b64-f16-default --net vgg16 --batch 64 --policy default --dtype f16 --inductor
else
  run resnet50-b1-f16-default --net resnet50 --batch 1 --policy default --dtype f16 --inductor
  run mobilenetv2-b64-f16-default --net mobilenetv2 --batch 64 --policy default --dtype f16 \
      --inductor
fi
