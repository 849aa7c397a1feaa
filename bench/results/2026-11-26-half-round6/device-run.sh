#!/bin/bash
# Round 6 of the half-precision tiling sweep (round6.spec), compiled here by
# `bench/variants.sh compile bench/results/2026-11-26-half-round6/round6.spec .r6x`, then split in two, timed on
# the device (two repetitions each, FP16 baselines off: the table compares variants of one
# conv in one run) and profiled with ncu on the bases and the variants the fetch question is
# about. usage: device-run.sh DIR (the cases did not fit one carry: the r4 shapes in .r6b, the rest in .r6a)
set -u
D=$1
export SPCONV_BENCH=$PWD/.devbin/spconv-bench VARIANTS_BENCH_ARGS=--no-half-baselines
R=$OUT/${D#.}; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv > $R/device.txt
ncu=r3s1-base,r3s1-ipb2,r4s1-base,r4s1-bk32ipb4,v3-base,v3-ipb4
timeout 560 bash bench/variants.sh run $D $R/${D#.}.json $ncu > $R/${D#.}.txt 2> $R/${D#.}.err
echo "rc=$?" >> $R/${D#.}.txt
cp $D/ncu-*.txt $R/ 2>/dev/null
