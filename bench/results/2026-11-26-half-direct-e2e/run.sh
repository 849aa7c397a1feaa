#!/bin/bash
# ResNet-50 `.half()` at batch 64 end to end through immconv.torch with half-precision direct
# inputs (eab0371) and the round-5 table, against PyTorch FP16 channels-last and Inductor in
# the same process, on the device. Kernels: compiled here at ddee7e1 into a fresh cache,
# every conv (--policy all), cubins xz-compressed into .cache/carry-dir:
#   SPCONV_TUNING_TABLE=$PWD/tuning/nvidia-h200.json /usr/bin/python3 bench/torch_backend.py \
#     --phase compile --cache .cache/immconv-half-dir --net resnet50 --batch 64 \
#     --sparsity 0.9 --policy all --dtype f16 --jobs 2
# Two runs: every conv compiled (--policy all: each layer's kernel against its kept
# channels-last time, the evidence for the half rule), and the measured policy (--policy
# default: the half rule, the layout choice, end-to-end candidates).
set -u
export PYTHONUNBUFFERED=1 IMMCONV_COMMIT=${IMMCONV_COMMIT:-unknown}
# The kernel cache keys carry the hash of the table the kernels were compiled with.
export SPCONV_TUNING_TABLE=$PWD/tuning/nvidia-h200.json
C=/tmp/immconv-cache
rm -rf "$C" && mkdir -p "$C" && cp -r .cache/carry-dir/. "$C"/
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/site python/ \
    > /dev/null 2>&1 && export PYTHONPATH=/tmp/site
LOG=$OUT/log.txt
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; } > "$LOG"
A="--sparsity 0.9 --cache $C --input-scale 0.1 --net resnet50 --batch 64 --dtype f16"
run() {  # name, then torch_backend.py arguments
  local name=$1; shift
  echo "== $name: bench/torch_backend.py --phase run $* $A" >> "$LOG"
  timeout 280 python3 bench/torch_backend.py --phase run "$@" $A --out "$OUT/$name.json" >> "$LOG" 2>&1
  echo "rc=$?" >> "$LOG"
}
run resnet50-b64-f16-all --policy all
run resnet50-b64-f16-default --policy default --inductor
