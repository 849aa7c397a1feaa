#!/bin/bash
# compute-sanitizer (memcheck, racecheck, synccheck, initcheck) on the round-6 table's new
# tilings (sanitize.spec: 2 images + SM affinity on a 3x3, block-k 32 with 4 images on a
# strided 3x3, SM affinity on a direct 1x1, block-k 64 on a strided 3x3; full and partial
# packed-image blocks), and round 7 (round7.spec) timed in the same call. Compiled here:
#   bench/variants.sh compile bench/results/2026-11-26-half-round6/sanitize.spec .san6
#   bench/variants.sh compile bench/results/2026-11-26-half-round6/round7.spec .r7
# usage (device): bash device-run-sanitize.sh PART... (r7: round 7, san: the sanitizer; the two
# did not fit one carry and ran in two calls on the same warm machine)
set -u
export SPCONV_BENCH=$PWD/.devbin/spconv-bench VARIANTS_BENCH_ARGS=--no-half-baselines
R=$OUT/r7; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,serial --format=csv > $R/device.txt
for part in "$@"; do
if [ $part = r7 ]; then
timeout 200 bash bench/variants.sh run .r7 $R/round7.json > $R/round7.txt 2> $R/round7.err
echo "rc=$?" >> $R/round7.txt
cp .r7/ncu-*.txt $R/ 2>/dev/null
else
# The variants' folders as sanitize.sh cases (name, folder, no extra flags).
for f in .san6/*/*.xz; do xz -d -f "$f"; done
for d in .san6/*/; do n=$(basename $d); echo "$n $n -"; done > .san6/cases.txt
# .san6/commit.txt: the commit the cases were compiled at, written here after compiling.
SPCONV_SANITIZE_JOBS=12 SPCONV_SANITIZE_TIMEOUT=240 \
  timeout 330 bash bench/sanitize.sh run .san6 $R/sanitize > $R/sanitize.log 2>&1
echo "rc=$?" >> $R/sanitize.log
fi
done
