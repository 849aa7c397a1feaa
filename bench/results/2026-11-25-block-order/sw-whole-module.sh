#!/usr/bin/env bash
# A/B on the GPU: grid (tiles, channel blocks, images) as built vs (tiles, images, channel blocks).
set -u
B=$PWD/.devcarry/spconv-bench
for l in vgg-conv3 alexnet-conv2; do
  d=.devcarry/sw/$l
  for rep in 1 2; do
    for v in "kernels.json kernels.cubin built" "kernels.json whole.cubin whole" "sw.json sw.cubin swapped"; do
      set -- $v
      $B --launch $d/$1 --module $d/$2 --weights $d/weights.bin --no-cusparse --batches 5 --out $OUT/$l-$3-r$rep.json > /tmp/b.log 2>&1
      echo "$l $3 r$rep $(tail -1 /tmp/b.log)"
    done
  done
  SPCONV_BENCH=$B bash bench/ncu_case.sh .devcarry/sw/$l-swdir /tmp/ncu.txt; { echo "### $l swapped"; cat /tmp/ncu.txt; } >> $OUT/ncu-swapped.txt
done
