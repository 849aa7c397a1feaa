#!/bin/bash
# Round 8 (round8.spec): two images per block against the heuristic on ResNet-50's layer3 3x3
# and VGG-16's conv4_1, conv4_2 and conv5_2 shapes in FP16 at batch 64, before the heuristic
# counted a half block's images as FP32 does. Compiled here at f0ff9d4's compiler:
#   bench/variants.sh compile bench/results/2026-11-26-half-round6/round8.spec .r8
# usage (device): bash device-run-round8.sh
set -u
export SPCONV_BENCH=$PWD/.devbin/spconv-bench VARIANTS_BENCH_ARGS=--no-half-baselines
R=$OUT/r8; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,serial --format=csv > $R/device.txt
timeout 300 bash bench/variants.sh run .r8 $R/round8.json > $R/round8.txt 2> $R/round8.err
echo "rc=$?" >> $R/round8.txt
