#!/bin/bash
# There: each case of compile-ncu-cases.sh DIR timed by spconv-bench (checked against cuDNN
# FP32 first; legacy cuDNN FP16 beside it) and profiled by bench/ncu_case.sh.
# usage: device-run-ncu.sh DIR
set -u
D=$1
find $D -name "*.xz" -exec xz -d {} \;
mkdir -p /tmp/bin && xz -dc .devbinx/spconv-bench.xz > /tmp/bin/spconv-bench && chmod +x /tmp/bin/spconv-bench
export SPCONV_BENCH=/tmp/bin/spconv-bench
R=$OUT/ncu; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,serial --format=csv > $R/device.txt
for c in $(ls $D | grep -v commit.txt); do
  timeout 60 $SPCONV_BENCH --launch $D/$c/kernels.json --module $D/$c/kernels.cubin \
    --weights $D/$c/weights.bin --bias $D/$c/bias.bin --out $R/$c.json --layer $c \
    --sparsity 0.9 > $R/$c.txt 2>&1
  timeout 60 bash bench/ncu_case.sh $D/$c $R/ncu-$c.txt > /dev/null 2>&1
  cut -c1-200 $R/$c.txt
done
# many small files: one archive
tar czf $OUT/ncu.tgz -C $OUT ncu && rm -rf $R
