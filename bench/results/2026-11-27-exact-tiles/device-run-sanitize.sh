#!/bin/bash
# compute-sanitizer (memcheck, racecheck, synccheck, initcheck: bench/sanitize.sh) on the
# seven tilings of sanitize.spec, compiled here:
#   bash bench/variants.sh compile bench/results/2026-11-27-exact-tiles/sanitize.spec .san29
# usage (device, carrying .san29 and .devbinx): bash device-run-sanitize.sh .san29
set -u
mkdir -p .devbin && xz -dc .devbinx/spconv-bench.xz > .devbin/spconv-bench &&
  chmod +x .devbin/spconv-bench && cp .devbinx/commit .devbin/
export SPCONV_BENCH=$PWD/.devbin/spconv-bench
D=$1 R=$OUT/sanitize
mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,serial --format=csv > $R/device.txt
for f in $D/*/*.xz; do xz -d -f "$f"; done
for d in $D/*/; do n=$(basename $d); echo "$n $n -"; done > $D/cases.txt
T=${SAN_TIMEOUT:-240}
SPCONV_SANITIZE_JOBS=14 SPCONV_SANITIZE_TIMEOUT=$T \
  timeout $((T * 2 + 60)) bash bench/sanitize.sh run $D $R/sanitize > $R/sanitize.log 2>&1
echo "rc=$?" >> $R/sanitize.log
tail -12 $R/sanitize.log
tar czf $OUT/sanitize.tgz -C $OUT sanitize && rm -rf $R
