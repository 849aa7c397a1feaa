#!/bin/bash
# compute-sanitizer (memcheck, racecheck, synccheck, initcheck) on the image-pair layout's
# table tilings (sanitize.spec), compiled here by
#   SPCONV_TUNING_TABLE=none bash bench/variants.sh compile \
#     bench/results/2026-11-27-image-pairs/sanitize.spec .san-ip
# and `git rev-parse --short HEAD > .san-ip/commit.txt`.
set -u
export SPCONV_BENCH=$PWD/.devbin/spconv-bench
R=$OUT/san; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,serial --format=csv > $R/device.txt
for f in .san-ip/*/*.xz; do xz -d -f "$f"; done
for d in .san-ip/*/; do n=$(basename $d); echo "$n $n -"; done > .san-ip/cases.txt
SPCONV_SANITIZE_JOBS=12 SPCONV_SANITIZE_TIMEOUT=240 \
  timeout 330 bash bench/sanitize.sh run .san-ip $R/sanitize > $R/sanitize.log 2>&1
echo "rc=$?" >> $R/sanitize.log
tail -3 $R/sanitize.log
tar czf $OUT/san.tgz -C $OUT san && rm -rf $R
