#!/bin/bash
# Round 21 (round21.spec) and its sanitizer cases (sanitize.spec), compiled here:
#   SPCONV_TUNING_TABLE=$PWD/tuning/nvidia-h200.json \
#     bash bench/variants.sh compile bench/results/2026-11-27-channel-vectors/round21.spec .r21y
#   bash bench/variants.sh compile bench/results/2026-11-27-channel-vectors/sanitize.spec .san21
# On the device, one warm machine:
#   bash bench/results/2026-11-27-channel-vectors/device-run.sh time .r21y NCU_CASES
#     every case twice with spconv-bench (checked against cuDNN FP32 first; legacy cuDNN FP16
#     baselines in the same process), ncu on NCU_CASES, then PyTorch FP16 channels-last for
#     the same shapes (bench/torch_baseline.py --modes fp16): everything under $OUT/r21y
#   bash bench/results/2026-11-27-channel-vectors/device-run.sh sanitize .san21
#     compute-sanitizer, four tools, on every case (bench/sanitize.sh)
set -u
mkdir -p .devbin && xz -dc .devbinx/spconv-bench.xz > .devbin/spconv-bench &&
  chmod +x .devbin/spconv-bench && cp .devbinx/commit .devbin/
export SPCONV_BENCH=$PWD/.devbin/spconv-bench
mode=$1 D=$2 N=${2#.} R=$OUT/${2#.}
mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,serial --format=csv > $R/device.txt
if [ "$mode" = time ]; then
  VARIANTS_BENCH_ARGS="" timeout 420 bash bench/variants.sh run $D $R/$N.json "${3:-}" \
    > $R/$N.txt 2> $R/$N.err
  echo "rc=$?" >> $R/$N.txt
  mkdir -p $R/ncu && cp $D/ncu-*.txt $R/ncu/ 2>/dev/null
  # PyTorch FP16 channels-last for each shape (its -v1 or -base case's first run stands for it).
  python3 - $R/$N.json $R/suite.json <<'PY'
import json, sys
runs = json.load(open(sys.argv[1]))
json.dump({"cases": [r["run1"] for n, r in sorted(runs.items()) if n.endswith(("-v1", "-base"))]},
          open(sys.argv[2], "w"), indent=1)
PY
  timeout 100 python3 bench/torch_baseline.py $R/suite.json --modes fp16 --out $R/torch-fp16.json \
    > $R/torch-fp16.txt 2>&1
  echo "torch rc=$?" >> $R/$N.txt
  tail -25 $R/$N.txt; tail -15 $R/torch-fp16.txt
else
  for f in $D/*/*.xz; do xz -d -f "$f"; done
  for d in $D/*/; do n=$(basename $d); echo "$n $n -"; done > $D/cases.txt
  T=${SAN_TIMEOUT:-200}
  SPCONV_SANITIZE_JOBS=12 SPCONV_SANITIZE_TIMEOUT=$T \
    timeout $((T + 60)) bash bench/sanitize.sh run $D $R/sanitize > $R/sanitize.log 2>&1
  echo "rc=$?" >> $R/sanitize.log
  tail -5 $R/sanitize.log
fi
tar czf $OUT/$N.tgz -C $OUT $N && rm -rf $R
