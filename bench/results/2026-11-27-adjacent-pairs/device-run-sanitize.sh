#!/bin/bash
# compute-sanitizer (memcheck, racecheck, synccheck, initcheck) on rounds 10 and 11's table
# tilings (sanitize.spec), compiled here by
#   bench/variants.sh compile bench/results/2026-11-27-adjacent-pairs/sanitize.spec .san11
# and `git rev-parse --short HEAD > .san11/commit.txt`.
set -u
export SPCONV_BENCH=$PWD/.devbin/spconv-bench
R=$OUT/san11; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,serial --format=csv > $R/device.txt
for f in .san11/*/*.xz; do xz -d -f "$f"; done
# The variants' folders as sanitize.sh cases (name, folder, no extra flags).
for d in .san11/*/; do n=$(basename $d); echo "$n $n -"; done > .san11/cases.txt
SPCONV_SANITIZE_JOBS=12 SPCONV_SANITIZE_TIMEOUT=240 \
  timeout 330 bash bench/sanitize.sh run .san11 $R/sanitize > $R/sanitize.log 2>&1
echo "rc=$?" >> $R/sanitize.log
tail -3 $R/sanitize.log
grep -v "^PASS" $R/sanitize/sanitize.txt | head
