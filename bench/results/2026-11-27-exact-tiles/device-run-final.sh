#!/bin/bash
# paper10 FP16 at batch 64 (image pairs, p = 0.9) and VGG-16's 13 convs with the tuning
# table after rounds 25-28, against the 48-entry table's VGG-16 bundle, on one warm machine.
# Compiled here (see README.md): .cases/$PAPER10 (bench/compile_suite.sh) and the bundles
# .net/carry/{vgg-b64-f16ip-new,vgg-b64-f16ip-t48} (bench/compile_network.sh; carried:
# net.json, manifest.json, gen.args, compile.json, net.cubin.xz).
# usage (device, carrying .cases/$PAPER10, .net/carry and .devbinx):
#   PAPER10=f16ip-r28 COMMIT=<rev> bash device-run-final.sh
set -u
mkdir -p .devbin && xz -dc .devbinx/spconv-bench.xz > .devbin/spconv-bench &&
  chmod +x .devbin/spconv-bench && cp .devbinx/commit .devbin/
export SPCONV_BENCH=$PWD/.devbin/spconv-bench
R=$OUT/final; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,serial --format=csv > $R/device.txt
d=$PAPER10
SPCONV_COMMIT=$COMMIT timeout 240 bash bench/run_device.sh .cases/$d $R/$d > $R/$d.log 2>&1
PYTHONUNBUFFERED=1 timeout 150 python3 bench/torch_baseline.py $R/$d/suite.json --modes fp16 \
  --out $R/$d/torch-fp16.json > $R/$d-torch16.log 2>&1
python3 bench/results/2026-11-26-half-tuned3/summarize.py $R/$d > $R/$d/summary.md 2>&1
tail -2 $R/$d.log; tail -4 $R/$d/summary.md
export SPCONV_BENCH_ARGS="--no-cusparse"
for b in vgg-b64-f16ip-new vgg-b64-f16ip-t48; do
  [ -d .net/carry/$b ] || { echo "$b: not carried, skipped"; continue; }
  B=/tmp/$b; rm -rf $B; cp -r .net/carry/$b $B
  [ -f $B/net.cubin.xz ] && xz -d $B/net.cubin.xz
  [ $b = vgg-b64-f16ip-t48 ] && export SPCONV_TORCH_BASELINE=0   # PyTorch timed once
  timeout 150 bash bench/run_network.sh $B $R/$b > $R/$b.log 2>&1
  echo "rc=$?" >> $R/$b.log
  tail -4 $R/$b.log
done
tar czf $OUT/final.tgz -C $OUT final && rm -rf $R
