#!/bin/bash
# compute-sanitizer (memcheck, racecheck, synccheck, initcheck) on the table tilings of rounds
# 15-17 (sanitize.spec), compiled here by
#   bash bench/variants.sh compile bench/results/2026-11-27-async-words/sanitize.spec DIR
# and `git rev-parse --short HEAD > DIR/commit.txt`: .san-cpa (round 15's four, into san/),
# .san-cpa17 (all seven, into san17/).
# usage (device): bash device-run-sanitize.sh [DIR]   (default .san-cpa)
set -u
D=${1:-.san-cpa}
N=$(basename $D | sed 's/^.san-cpa/san/')
export SPCONV_BENCH=$PWD/.devbin/spconv-bench
R=$OUT/$N; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,serial --format=csv > $R/device.txt
for f in $D/*/*.xz; do xz -d -f "$f"; done
for d in $D/*/; do n=$(basename $d); echo "$n $n -"; done > $D/cases.txt
SPCONV_SANITIZE_JOBS=12 SPCONV_SANITIZE_TIMEOUT=240 \
  timeout 330 bash bench/sanitize.sh run $D $R/sanitize > $R/sanitize.log 2>&1
echo "rc=$?" >> $R/sanitize.log
tail -3 $R/sanitize.log
tar czf $OUT/$N.tgz -C $OUT $N && rm -rf $R
