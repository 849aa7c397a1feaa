#!/bin/bash
# ResNet-50 at batch 64, p = 0.9, every conv: the FP16 kernels with adjacent pairs on the
# stride-1 1x1 convs and the 20-entry table, against the FP32 kernels (the bundle of
# ../2026-11-26-r50-f16-vs-f32, compiled at e63f934; the FP32 code is unchanged since). Each
# kernel is checked (FP32 against cuDNN FP32, FP16 against its stated bound) before it is
# timed; torch_baseline.py times PyTorch's convs for the FP16 bundle. Compiled here (the
# cubin carried xz-compressed in .net/carry/r50-b64-f16r9):
#   SPCONV_DTYPE=f16 SPCONV_TUNING_TABLE=$PWD/tuning/nvidia-h200.json SPCONV_CACHE_DIR=none \
#     bench/compile_network.sh resnet50 64 0.9 1 .net/r50-b64-f16r9 --jobs=2
# usage (device): bash device-run-r50.sh BUNDLE (one bundle a call: two do not fit a carry)
set -u
export SPCONV_BENCH=$PWD/.devbin/spconv-bench SPCONV_BENCH_ARGS="--no-cusparse"
R=$OUT/${SPCONV_R50_OUT:-r50}; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,serial --format=csv > $R/device-$1.txt
d=$1
[ $d = r50-b64-f32 ] && export SPCONV_TORCH_BASELINE=0
B=/tmp/$d; rm -rf $B; cp -r .net/carry/$d $B
[ -f $B/net.cubin.xz ] && xz -d $B/net.cubin.xz
timeout 400 bash bench/run_network.sh $B $R/$d > $R/$d.log 2>&1
echo "rc=$?" >> $R/$d.log
tail -6 $R/$d.log
tar czf $OUT/r50-$d.tgz -C $OUT ${SPCONV_R50_OUT:-r50} && rm -rf $R
