#!/bin/bash
# Here: ResNet-50's conv3 shapes at batch 64 in FP16 image pairs (p = 0.9, seed 1), each
# without and with the residual (spconv-gen-conv --residual), compiled with the H200 table
# into DIR/<name>{,-res} for device-run-ncu.sh. usage: compile-ncu-cases.sh DIR
set -eu
D=$1; mkdir -p $D
export SPCONV_TUNING_TABLE=$PWD/tuning/nvidia-h200.json PATH=$PWD/build/bin:$PATH
while read -r name shape; do
  for res in "" "--residual"; do
    c=$D/$name${res:+-res}
    spconv-gen-conv --shape $shape --bias --relu --sparsity 0.9 --seed 1 --dtype f16 \
      --layout image_pairs $res -o $c > /dev/null
    spconv-translate --spconv-compile $c/conv.mlir --cache-dir=none --artifact-prefix=$c/kernels \
      -o $c/kernels.json
  done
done <<'SHAPES'
l1-conv3 64,64,56,56,256,1,1
l2-conv3 64,128,28,28,512,1,1
l3-conv3 64,256,14,14,1024,1,1
l4-conv3 64,512,7,7,2048,1,1
SHAPES
git rev-parse --short HEAD > $D/commit.txt
