#!/bin/bash
# ResNet-50 at batch 64, p = 0.9: every conv's spconv kernel in FP16 (half sums, the
# round-4 tuning table) and in FP32 (the heuristic), in one device call, each checked (FP32
# against cuDNN FP32; FP16 against its stated bound) before it is timed against cuDNN
# (spconv-bench: FP32, TF32, FP16 NCHW/NHWC) and PyTorch (torch_baseline.py: FP32, TF32,
# FP16 and BF16 channels-last). Issue 27's floor: the FP16 kernels' sum at most half the
# FP32 kernels'.
# Compiled here (bench/compile_network.sh; the cubins carried xz-compressed):
#   SPCONV_DTYPE=f16 SPCONV_TUNING_TABLE=$PWD/tuning/nvidia-h200.json SPCONV_CACHE_DIR=none \
#     bench/compile_network.sh resnet50 64 0.9 1 .net/r50-b64-f16 --jobs=2
#   SPCONV_CACHE_DIR=none bench/compile_network.sh resnet50 64 0.9 1 .net/r50-b64-f32 --jobs=2
# usage (device): bash device-run.sh PART...  (a: FP16 staged, b: FP32, c: FP16 with direct
# inputs (eab0371, round-4 table), d: FP16 with direct inputs and the round-5 table (ddee7e1))
set -u
export SPCONV_BENCH=$PWD/.devbin/spconv-bench SPCONV_BENCH_ARGS="--no-cusparse"
R=$OUT/res; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv > $R/device.txt
for part in "$@"; do
  unset SPCONV_TORCH_BASELINE
  case $part in a) d=r50-b64-f16 ;; b) d=r50-b64-f32; export SPCONV_TORCH_BASELINE=0 ;;
                c) d=r50-b64-f16d ;; d) d=r50-b64-f16t ;; esac
  B=/tmp/$d; rm -rf $B; cp -r .net/carry/$d $B
  [ -f $B/net.cubin.xz ] && xz -d $B/net.cubin.xz
  timeout 280 bash bench/run_network.sh $B $R/$d > $R/$d.log 2>&1
  echo "rc=$?" >> $R/$d.log
done
tar czf $OUT/res-$(echo "$@" | tr -d ' ').tgz -C $OUT res && rm -rf $OUT/res
