#!/bin/bash
# ResNet-50 `.half()` end to end through immconv.torch with adjacent pairs on the stride-1
# 1x1 convs and the 20-entry table, against PyTorch FP16 channels-last and the FP32 model in
# the same process, on the device. Kernels compiled here into fresh caches, every conv
# (--policy all), cubins xz-compressed into .cache/carry-adj-b<B>:
#   SPCONV_TUNING_TABLE=$PWD/tuning/nvidia-h200.json /usr/bin/python3 bench/torch_backend.py \
#     --phase compile --cache .cache/immconv-adj[-b1] --net resnet50 --batch B \
#     --sparsity 0.9 --policy all --dtype f16 --jobs 2
# Two runs per batch: every conv compiled (--policy all) and the measured policy (--policy
# default: the half rule, the layout choice, end-to-end candidates).
# usage (device): run-e2e.sh BATCH
set -u
B=$1
export PYTHONUNBUFFERED=1 IMMCONV_COMMIT=${IMMCONV_COMMIT:-unknown}
# The kernel cache keys carry the hash of the table the kernels were compiled with.
export SPCONV_TUNING_TABLE=$PWD/tuning/nvidia-h200.json
C=/tmp/immconv-cache
rm -rf "$C" && mkdir -p "$C" && cp -r .cache/carry-adj-b$B/. "$C"/
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/site python/ \
    > /dev/null 2>&1 && export PYTHONPATH=/tmp/site
LOG=$OUT/log-b$B.txt
{ date -u; nvidia-smi --query-gpu=name,driver_version,serial,clocks.max.sm --format=csv; } > "$LOG"
A="--sparsity 0.9 --cache $C --input-scale 0.1 --net resnet50 --batch $B --dtype f16"
run() {  # name, then torch_backend.py arguments
  local name=$1; shift
  echo "== $name: bench/torch_backend.py --phase run $* $A" >> "$LOG"
  timeout 270 python3 bench/torch_backend.py --phase run "$@" $A --out "$OUT/$name.json" >> "$LOG" 2>&1
  echo "rc=$?" >> "$LOG"
}
run resnet50-b$B-f16-all --policy all
run resnet50-b$B-f16-default --policy default
tail -30 "$LOG"
