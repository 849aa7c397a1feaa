#!/bin/bash
# ResNet-50 `.half()` end to end through immconv.torch at batch 64 (E2E_BATCH), p = 0.9, against PyTorch
# FP16 channels-last in the same process: the image-pair layout carried through the graph
# (immconv.torch.compile(layout="image_pairs"), carry.py) and NCHW kernels, on the device.
# Kernel caches compiled here (README.md), cubins xz'd into .cache/carry-ip and
# .cache/carry-nchw (at another batch B: .cache/carry-<layout>-b<B>).
# usage (device): run-e2e.sh RUN...   RUN: ip-all | ip-default | nchw-all | nchw-default
# E2E_NET (default resnet50) and E2E_TAG (the carried caches' suffix: .cache/carry-<layout>-<TAG>,
# MobileNetV2: E2E_NET=mobilenetv2 E2E_TAG=mbv2).
set -u
export PYTHONUNBUFFERED=1 IMMCONV_COMMIT=${IMMCONV_COMMIT:-unknown}
# The kernel cache keys carry the hash of the table the kernels were compiled with.
export SPCONV_TUNING_TABLE=$PWD/tuning/nvidia-h200.json
python3 -m pip install -q --upgrade --no-deps --no-build-isolation --no-index --target /tmp/site python/ \
    > /dev/null 2>&1 && export PYTHONPATH=/tmp/site
LOG=$OUT/log.txt
{ date -u; nvidia-smi --query-gpu=name,driver_version,serial,clocks.max.sm --format=csv; } >> "$LOG"
B=${E2E_BATCH:-64}
NET=${E2E_NET:-resnet50}
A="--sparsity 0.9 --input-scale 0.1 --net $NET --batch $B --dtype f16"
SUFFIX=; [ "$B" = 64 ] || SUFFIX=-b$B
[ "$NET" = resnet50 ] || SUFFIX=$SUFFIX-${E2E_TAG:-$NET}
for run in "$@"; do
  layout=${run%-*} policy=${run#*-}
  C=/tmp/immconv-cache-$layout$SUFFIX
  if [ ! -d "$C" ]; then mkdir -p "$C" && cp -r .cache/carry-$layout$SUFFIX/. "$C"/; fi
  L=nchw; [ "$layout" = ip ] && L=image_pairs
  echo "== $run: bench/torch_backend.py --phase run --policy $policy --layout $L $A" >> "$LOG"
  timeout 280 python3 bench/torch_backend.py --phase run --policy "$policy" --layout $L \
      --cache "$C" $A --out "$OUT/$NET-b$B-f16-$run.json" >> "$LOG" 2>&1
  echo "rc=$?" >> "$LOG"
done
tail -40 "$LOG"
