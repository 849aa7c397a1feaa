#!/bin/bash
# Round 5 of the half-precision tiling sweep (round5.spec): ResNet-50's 1x1 shapes at batch 64
# and googlenet-1x1 at batch 64 and 1, with half-precision direct inputs (eab0371), compiled
# here by `bench/variants.sh compile bench/results/2026-11-26-half-direct-inputs/round5.spec
# .r5`, timed on the device (two repetitions each, FP16 baselines off: the table compares
# variants of one conv) and profiled with ncu where direct and staged differ only in that
# (block-k 64 at 4 blocks per SM both). The cases did not fit one carry: layer1-3 and
# layer4.0.conv1/conv3 were moved to .r5a, the rest to .r5b (usage: device-run-round5.sh DIR).
set -u
D=$1
export SPCONV_BENCH=$PWD/.devbin/spconv-bench VARIANTS_BENCH_ARGS=--no-half-baselines
R=$OUT/${D#.}; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv > $R/device.txt
ncu=r50-layer3_0_conv1-bk64,r50-layer3_0_conv1-staged-bk64,r50-layer4_0_conv1-bk64,r50-layer4_0_conv1-staged-bk64,r50-layer1_1_conv1-bk64,r50-layer1_1_conv1-staged-bk64
timeout 560 bash bench/variants.sh run $D $R/round5.json $ncu > $R/round5.txt 2> $R/round5.err
echo "rc=$?" >> $R/round5.txt
cp $D/ncu-*.txt $R/ 2>/dev/null
tar czf $OUT/${D#.}.tgz -C $OUT ${D#.} && rm -rf $R
