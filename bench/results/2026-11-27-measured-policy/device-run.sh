#!/bin/bash
# The measured policy's candidates profiled (candidate_profile.py) at batch 64 (image pairs)
# and 1 (NCHW), from the carried kernel caches .cache/carry-ip and .cache/carry-nchw-b1;
# then Inductor's fused dense baseline at batch 64 (torch_backend.py --inductor); device.
set -u
export PYTHONUNBUFFERED=1 SPCONV_TUNING_TABLE=$PWD/tuning/nvidia-h200.json
python3 -m pip install -q --upgrade --no-deps --no-build-isolation --no-index --target /tmp/site python/ \
    > /dev/null 2>&1 && export PYTHONPATH=/tmp/site
D=$(dirname "$0")
LOG=$OUT/log.txt
{ date -u; nvidia-smi --query-gpu=name,driver_version,serial,clocks.max.sm --format=csv; } >> "$LOG"
for spec in ${RUNS:-ip:64 nchw:1}; do
  l=${spec%:*} b=${spec#*:}
  L=nchw; [ "$l" = ip ] && L=image_pairs
  S=; [ "$b" = 64 ] || S=-b$b
  C=/tmp/immconv-cache-$l$S
  [ -d "$C" ] || { mkdir -p "$C" && cp -r .cache/carry-$l$S/. "$C"/; }
  mkdir -p "$OUT/b$b"
  echo "== candidates $L batch $b" >> "$LOG"
  timeout 300 python3 "$D/candidate_profile.py" "$C" $L $b "$OUT/b$b" >> "$LOG" 2>&1
  echo "rc=$?" >> "$LOG"
done
if [ -n "${INDUCTOR:-}" ]; then
  echo "== inductor batch 64" >> "$LOG"
  timeout 400 python3 bench/torch_backend.py --phase run --policy all --layout image_pairs \
    --cache /tmp/immconv-cache-ip --sparsity 0.9 --input-scale 0.1 --net resnet50 --batch 64 \
    --dtype f16 --inductor --out "$OUT/resnet50-b64-f16-ip-all-inductor.json" >> "$LOG" 2>&1
  echo "rc=$?" >> "$LOG"
fi
cd "$OUT" && tar czf profiles.tgz b*/ && rm -rf b*/
tail -30 "$LOG"
