#!/bin/bash
# What register spills cost the FP16 direct-input 1x1 kernels (spills.spec), compiled here by
# `bench/variants.sh compile bench/results/2026-11-26-half-spills/spills.spec .sp`, timed on the
# device (two repetitions each, FP16 baselines off) and profiled with ncu on one spilled and
# one clean kernel of the same tiling. usage: device-run.sh .sp
set -u
D=$1
export SPCONV_BENCH=$PWD/.devbin/spconv-bench VARIANTS_BENCH_ARGS=--no-half-baselines
R=$OUT/${D#.}; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv > $R/device.txt
ncu=l40c3-nobias,l40c3-bias
timeout 560 bash bench/variants.sh run $D $R/${D#.}.json $ncu > $R/${D#.}.txt 2> $R/${D#.}.err
echo "rc=$?" >> $R/${D#.}.txt
cp $D/ncu-*.txt $R/ 2>/dev/null
