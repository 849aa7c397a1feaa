#!/bin/bash
# One round on one warm machine (bench/variants.sh cases compiled here, see README.md):
#   bash bench/results/2026-11-27-strided/device-run.sh A_DIR A_NCU [B_DIR]
# A_DIR: every case twice with spconv-bench (checked against cuDNN FP32 first; legacy cuDNN
# FP16 in the same process), ncu on A_NCU (comma-separated), then PyTorch FP16
# channels-last for the shapes of its -base cases. B_DIR (optional): the same without the
# FP16 baselines (--no-half-baselines: a screening sweep against the -base cases) and
# without ncu. SASS_CASES: cases of A_DIR whose cubin's SASS opcodes are counted. Everything under $OUT/<dir>.tgz.
set -u
mkdir -p .devbin && xz -dc .devbinx/spconv-bench.xz > .devbin/spconv-bench &&
  chmod +x .devbin/spconv-bench && cp .devbinx/commit .devbin/
export SPCONV_BENCH=$PWD/.devbin/spconv-bench
one() {  # DIR NCU BENCH_ARGS TIMEOUT TORCH
  local D=$1 N=${1#.} R=$OUT/${1#.}
  mkdir -p $R
  nvidia-smi --query-gpu=name,driver_version,serial --format=csv > $R/device.txt
  VARIANTS_BENCH_ARGS="$3" timeout $4 bash bench/variants.sh run $D $R/$N.json "$2" \
    > $R/$N.txt 2> $R/$N.err
  echo "rc=$?" >> $R/$N.txt
  mkdir -p $R/ncu && cp $D/ncu-*.txt $R/ncu/ 2>/dev/null
  # SASS opcode counts (static) of the cases in $SASS_CASES (comma-separated).
  for c in ${SASS_CASES:+${SASS_CASES//,/ }}; do
    [ -f $D/$c/kernels.cubin ] || continue
    cuobjdump -sass $D/$c/kernels.cubin | grep -oE '^ +/\*[0-9a-f]{4,}\*/ +(@!?U?P[0-9T] +)?[A-Z][A-Z0-9_.]*' |
      awk '{print $NF}' | sort | uniq -c | sort -rn > $R/ncu/sass-$c.txt
  done
  if [ "$5" = torch ]; then
    python3 - $R/$N.json $R/suite.json <<'PY'
import json, sys
runs = json.load(open(sys.argv[1]))
json.dump({"cases": [r["run1"] for n, r in sorted(runs.items()) if n.endswith("-base")]},
          open(sys.argv[2], "w"), indent=1)
PY
    timeout 100 python3 bench/torch_baseline.py $R/suite.json --modes fp16 --out $R/torch-fp16.json \
      > $R/torch-fp16.txt 2>&1
    echo "torch rc=$?" >> $R/$N.txt
  fi
  cut -c1-60,400- $R/$N.txt | sed 's/tiling=.*regs/regs/' | tail -40; tail -8 $R/torch-fp16.txt 2>/dev/null
  tar czf $OUT/$N.tgz -C $OUT $N && rm -rf $R
}
one $1 "$2" "" ${A_TIMEOUT:-450} torch
[ -n "${3:-}" ] && one $3 "" "--no-half-baselines" 300 none
exit 0
