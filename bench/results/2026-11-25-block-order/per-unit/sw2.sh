#!/usr/bin/env bash
# A/B on the GPU: grid (tiles, channel blocks, images) as built vs (tiles, images, channel
# blocks), both assembled per unit as spconv-translate does.
set -u
B=$PWD/.devcarry/spconv-bench
for rep in 1 2; do
  for d in .devcarry/sw2/*/; do d=${d%/}; n=$(basename $d)
    $B --launch $d/kernels.json --module $d/kernels.cubin --weights $d/weights.bin --no-cusparse --batches 5 --out $OUT/$n-r$rep.json > /tmp/b.log 2>&1
    echo "$n r$rep $(tail -1 /tmp/b.log)"
  done
done
for n in vgg-conv3-swp alexnet-conv2-swp resnet-conv2-swp resnet-conv2-built; do
  SPCONV_BENCH=$B bash bench/ncu_case.sh .devcarry/sw2/$n /tmp/ncu.txt; { echo "### $n"; cat /tmp/ncu.txt; } >> $OUT/ncu-sw2.txt
done
cd $OUT && python3 -c "
import json,glob; json.dump({p[:-5]: json.load(open(p)) for p in sorted(glob.glob('*-r[12].json'))}, open('sw2-bench.json','w'), indent=1)" && rm -f *-r[12].json
