#!/usr/bin/env bash
set -u
B=$PWD/.devcarry/spconv-bench
for rep in 1 2; do
  for d in .devcarry/sw/*/; do d=${d%/}; n=$(basename $d)
    $B --launch $d/kernels.json --module $d/kernels.cubin --weights $d/weights.bin --no-cusparse --batches 5 --out $OUT/$n-r$rep.json > /tmp/b.log 2>&1
    echo "$n r$rep $(tail -1 /tmp/b.log)"
  done
done
for d in .devcarry/sw/*/; do d=${d%/}; n=$(basename $d)
  SPCONV_BENCH=$B bash bench/ncu_case.sh $d /tmp/ncu.txt > /dev/null 2>&1; { echo "### $n"; cat /tmp/ncu.txt; } >> $OUT/ncu-sw.txt
done
cd $OUT && python3 -c "
import json,glob; json.dump({p[:-5]: json.load(open(p)) for p in sorted(glob.glob('*-r[12].json'))}, open('sw-bench.json','w'), indent=1)" && rm -f *-r[12].json
