#!/bin/bash
# VGG-16's 13 convs in FP16 at batch 64 (image pairs, p = 0.9): the bundle compiled with round
# 37's table (vgg-b64-f16ip-r37) against last session's 49-entry bundle (vgg-b64-f16ip-new),
# on one warm machine; PyTorch FP16 channels-last timed once, with the first.
# Compiled here (bench/compile_network.sh, see README.md) and carried as .net/carry/<name>
# (net.json, manifest.json, gen.args, compile.json, net.cubin.xz).
# usage (device, carrying .net/carry and .devbinx): bash device-run-vgg16.sh
set -u
mkdir -p .devbin && xz -dc .devbinx/spconv-bench.xz > .devbin/spconv-bench &&
  chmod +x .devbin/spconv-bench && cp .devbinx/commit .devbin/
export SPCONV_BENCH=$PWD/.devbin/spconv-bench SPCONV_BENCH_ARGS="--no-cusparse"
R=$OUT/vgg16; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,serial --format=csv > $R/device.txt
for b in vgg-b64-f16ip-r37 vgg-b64-f16ip-new; do
  [ -d .net/carry/$b ] || { echo "$b: not carried, skipped"; continue; }
  B=/tmp/$b; rm -rf $B; cp -r .net/carry/$b $B
  [ -f $B/net.cubin.xz ] && xz -d $B/net.cubin.xz
  [ $b = vgg-b64-f16ip-new ] && export SPCONV_TORCH_BASELINE=0   # PyTorch timed once
  timeout 200 bash bench/run_network.sh $B $R/$b > $R/$b.log 2>&1
  echo "rc=$?" >> $R/$b.log
  tail -4 $R/$b.log
done
tar czf $OUT/vgg16.tgz -C $OUT vgg16 && rm -rf $R
