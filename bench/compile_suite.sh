#!/usr/bin/env bash
# usage: bench/compile_suite.sh OUTROOT [LAYERS...]
#
# Here: compiles paper10 (or the named layers) at sparsity 0.5 0.8 0.9 0.95 for N = 1 and 64
# into OUTROOT/<layer>-n<N>-p<P>/ with bench/compile_case.sh (cold and warm compile times
# recorded in case.json). PTX is dropped after assembling (the cubin is what runs) so that
# the cases fit the device tool's 64 MiB carry; the compile log goes to OUTROOT/compile.log.
# Override the grid with SPCONV_SPARSITIES="0.9" SPCONV_BATCHES="64".
set -uo pipefail
[ $# -ge 1 ] || { sed -n '2,9p' "$0"; exit 2; }
out=$1; shift
here="$(cd "$(dirname "$0")" && pwd)"
layers=("$@")
[ ${#layers[@]} -gt 0 ] || layers=(lenet-conv1 lenet-conv2 alexnet-conv1 alexnet-conv2 vgg-conv1
  vgg-conv2 vgg-conv3 resnet-conv1 resnet-conv2 googlenet-1x1)
mkdir -p "$out"
for layer in "${layers[@]}"; do
  for n in ${SPCONV_BATCHES:-1 64}; do
    for p in ${SPCONV_SPARSITIES:-0.5 0.8 0.9 0.95}; do
      dir="$out/$layer-n$n-p$p"
      [ -f "$dir/case.json" ] && continue
      skip=1; [ "$p" = "0.9" ] && skip=
      if SPCONV_SKIP_WARM=$skip "$here/compile_case.sh" "$layer" "$n" "$p" "$dir" >> "$out/compile.log" 2>&1; then
        rm -f "$dir/kernels.ptx" "$dir/conv.mlir" "$dir/cold.time" "$dir/warm.time"
        tail -n 1 "$out/compile.log"
      else
        echo "compile_suite: $layer N=$n p=$p failed (see $out/compile.log)" >&2
      fi
    done
  done
done
