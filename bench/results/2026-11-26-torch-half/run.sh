#!/bin/bash
# The GPU half of bench/results/2026-11-26-torch-half: run from the repository root on the
# device machine, with the kernel cache compiled here carried in .cache/carry-half (cubins xz).
# Writes at most 8 files under $OUT (the device tool's limit). IMMCONV_COMMIT: the commit.
set -u
export PYTHONUNBUFFERED=1
C=/tmp/immconv-cache
rm -rf "$C" && cp -r .cache/carry-half "$C"      # the cache unpacks cubins on first use
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/site python/ \
    > /dev/null 2>&1 && export PYTHONPATH=/tmp/site   # the torch_dynamo_backends entry point
LOG=$OUT/log${RUN_TAG:-}.txt
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; } > "$LOG"
A="--sparsity 0.9 --cache $C --keep-missing --input-scale 0.1"
run() {  # name, then torch_backend.py arguments
  local name=$1; shift
  echo "== $name: bench/torch_backend.py --phase run $* $A" >> "$LOG"
  timeout 240 python3 bench/torch_backend.py --phase run "$@" $A --out "$OUT/$name${RUN_TAG:-}.json" \
      >> "$LOG" 2>&1
  echo "rc=$?" >> "$LOG"
}
run resnet50-b64-f16-all --net resnet50 --batch 64 --policy all --dtype f16
run resnet50-b1-f16-all --net resnet50 --batch 1 --policy all --dtype f16
#run resnet50-b64-f16-default --net resnet50 --batch 64 --policy default --dtype f16
for net in mobilenetv2 vgg16; do
  if ls .cache/carry-half/compile-$net-b64-*.json > /dev/null 2>&1; then
    run $net-b64-f16-all --net $net --batch 64 --policy all --dtype f16
  fi
done
