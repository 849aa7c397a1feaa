#!/bin/bash
# Round 9 (round9.spec), compiled here by
# `bench/variants.sh compile bench/results/2026-11-27-adjacent-pairs/round9.spec .r9`, timed on
# the device (two repetitions each, FP16 baselines off: variants of one conv compared in one
# run) and profiled with ncu on the bases and adjacent forms of three shapes.
# usage: device-run.sh DIR [NCU_CASES] (round 10: bash device-run.sh .r10 CASE,CASE)
set -u
D=$1
export SPCONV_BENCH=$PWD/.devbin/spconv-bench VARIANTS_BENCH_ARGS=--no-half-baselines
R=$OUT/${D#.}; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,serial --format=csv > $R/device.txt
ncu=${2:-l1c3-base,l1c3-adj,l3c1-base,l3c1-adj,l2c3-base,l2c3-adj}
timeout 560 bash bench/variants.sh run $D $R/${D#.}.json $ncu > $R/${D#.}.txt 2> $R/${D#.}.err
echo "rc=$?" >> $R/${D#.}.txt
cp $D/ncu-*.txt $R/ 2>/dev/null
