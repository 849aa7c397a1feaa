#!/bin/bash
# ResNet-50 FP32 end to end through immconv.torch with the residual epilogue (784e4ce: FP32
# convs take their add-ReLU too), batch 64 (E2E_BATCH), p = 0.9, against PyTorch FP32 and
# TF32 (PyTorch's default for convs) in the same process; device. Kernel cache compiled here
# with --dtype f32 (README.md), cubins xz'd into .cache/carry-f32res.
# usage (device): run-f32.sh POLICY...   POLICY: all | default
set -u
export PYTHONUNBUFFERED=1 IMMCONV_COMMIT=${IMMCONV_COMMIT:-unknown}
export SPCONV_TUNING_TABLE=$PWD/tuning/nvidia-h200.json
python3 -m pip install -q --upgrade --no-deps --no-build-isolation --no-index --target /tmp/site python/ \
    > /dev/null 2>&1 && export PYTHONPATH=/tmp/site
LOG=$OUT/log.txt
{ date -u; nvidia-smi --query-gpu=name,driver_version,serial,clocks.max.sm --format=csv; } >> "$LOG"
B=${E2E_BATCH:-64}
C=/tmp/immconv-cache-f32res
if [ ! -d "$C" ]; then
  mkdir -p "$C" && cp -r .cache/carry-f32res/. "$C"/
fi
for policy in "$@"; do
  echo "== f32 $policy: bench/torch_backend.py --phase run --policy $policy --dtype f32 --batch $B" >> "$LOG"
  timeout 280 python3 bench/torch_backend.py --phase run --policy "$policy" --cache "$C" \
      --sparsity 0.9 --input-scale 0.1 --net resnet50 --batch $B --dtype f32 \
      --out "$OUT/resnet50-b$B-f32-$policy.json" >> "$LOG" 2>&1
  echo "rc=$?" >> "$LOG"
done
tail -30 "$LOG"
