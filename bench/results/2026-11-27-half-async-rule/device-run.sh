#!/bin/bash
# Round 20 (round20.spec), compiled here at b261ce4 without a table:
#   bash bench/variants.sh compile bench/results/2026-11-27-half-async-rule/round20.spec .r20
# timed on the device (two repetitions each, FP16 baselines off: variants of one conv in one
# run), ncu on the cases named, then compute-sanitizer on the cp.async tilings at small
# batches (sanitize.spec, compiled into .san20 when given).
# usage (device): bash bench/results/2026-11-27-half-async-rule/device-run.sh .r20 NCU_CASES [.san20]
set -u
mkdir -p .devbin && xz -dc .devbinx/spconv-bench.xz > .devbin/spconv-bench &&
  chmod +x .devbin/spconv-bench && cp .devbinx/commit .devbin/
bash bench/results/2026-11-27-image-pairs/device-run-variants.sh "$1" "$2"
if [ -n "${3:-}" ]; then
  export SPCONV_BENCH=$PWD/.devbin/spconv-bench
  S=$3; N=${S#.}; R=$OUT/$N; mkdir -p $R
  nvidia-smi --query-gpu=name,driver_version,serial --format=csv > $R/device.txt
  for f in $S/*/*.xz; do xz -d -f "$f"; done
  for d in $S/*/; do n=$(basename $d); echo "$n $n -"; done > $S/cases.txt
  [ -f $S/commit.txt ] || cp .devbin/commit $S/commit.txt
  T=${SAN_TIMEOUT:-200}  # seconds per case and tool; SPCONV_SANITIZE_TOOLS picks the tools
  SPCONV_SANITIZE_JOBS=12 SPCONV_SANITIZE_TIMEOUT=$T \
    timeout $((T + 60)) bash bench/sanitize.sh run $S $R/sanitize > $R/sanitize.log 2>&1
  echo "rc=$?" >> $R/sanitize.log
  tail -3 $R/sanitize.log
  tar czf $OUT/$N.tgz -C $OUT $N && rm -rf $R
fi
