#!/bin/bash
# Rounds 12 and 13 (round12.spec, round13.spec), compiled here with the 26-entry H200 table:
#   SPCONV_TUNING_TABLE=$PWD/tuning/nvidia-h200.json \
#     bash bench/variants.sh compile bench/results/2026-11-27-image-pairs/round12.spec .r12
# (at 1dcc0a0; round 13 the same into .r13 at 85529d2), timed on the device (two repetitions
# each, FP16 baselines off: variants of one conv in one run) and profiled with ncu on the
# cases named. Round 12's cases travel in two halves (.r12a, .r12b: the carry limit), one a
# call on one warm machine.
# usage (device): bash device-run-variants.sh DIR NCU_CASES
#   round 12: .r12a l2ds-base,l2ds-ip,l1c3-adj,l1c3-ip,l2c2-base,l2c2-ip
#             .r12b l4c2-base,l4c2-ip,l3c2-base,l3c2-ip,l4c1-base,l4c1-ip
set -u
D=$1
export SPCONV_BENCH=$PWD/.devbin/spconv-bench VARIANTS_BENCH_ARGS=--no-half-baselines
N=${D#.}; R=$OUT/$N; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,serial --format=csv > $R/device.txt
timeout 560 bash bench/variants.sh run $D $R/$N.json $2 > $R/$N.txt 2> $R/$N.err
echo "rc=$?" >> $R/$N.txt
mkdir -p $R/ncu && cp $D/ncu-*.txt $R/ncu/ 2>/dev/null
tail -30 $R/$N.txt
tar czf $OUT/$N.tgz -C $OUT $N && rm -rf $R
