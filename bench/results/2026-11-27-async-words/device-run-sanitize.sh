#!/bin/bash
# compute-sanitizer (memcheck, racecheck, synccheck, initcheck) on round 15's cp.async table
# tilings (sanitize.spec), compiled here by
#   bash bench/variants.sh compile bench/results/2026-11-27-async-words/sanitize.spec .san-cpa
# and `git rev-parse --short HEAD > .san-cpa/commit.txt`.
set -u
export SPCONV_BENCH=$PWD/.devbin/spconv-bench
R=$OUT/san; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,serial --format=csv > $R/device.txt
for f in .san-cpa/*/*.xz; do xz -d -f "$f"; done
for d in .san-cpa/*/; do n=$(basename $d); echo "$n $n -"; done > .san-cpa/cases.txt
SPCONV_SANITIZE_JOBS=12 SPCONV_SANITIZE_TIMEOUT=240 \
  timeout 330 bash bench/sanitize.sh run .san-cpa $R/sanitize > $R/sanitize.log 2>&1
echo "rc=$?" >> $R/sanitize.log
tail -3 $R/sanitize.log
tar czf $OUT/san.tgz -C $OUT san && rm -rf $R
