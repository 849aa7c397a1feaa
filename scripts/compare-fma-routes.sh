#!/usr/bin/env bash
# Byte-identity check between the two ways of writing a template's FMAs, while both exist:
# the hand unroller (ConvTemplateEmitter::emitChunkFMAs, SPCONV_FMA_EMITTER=legacy) and the
# affine nest + unrollTemplateNests (default). For each shape it compares the block-template
# PTX, the final PTX folded in PTX and in LLVM IR, the CPU twin's MLIR (canonicalized), and
# spconv-cpu-check's numeric report.
#
#   bash scripts/compare-fma-routes.sh [BUILD_DIR] [WORK_DIR]
set -euo pipefail
BUILD=${1:-build}
WORK=${2:-$(mktemp -d)}
BIN=$BUILD/bin
mkdir -p "$WORK"

# name | spconv-gen-conv arguments | extra tiling flags
CASES=(
  "lenet-conv2-bias-relu|--layer lenet-conv2 --bias --relu|"
  "resnet-conv2|--layer resnet-conv2|"
  "1x1-stride2|--shape 1,64,28,28,128,1,1 --stride 2,2|"
  "grouped-g4|--shape 1,32,14,14,64,3,3 --groups 4 --pad 1,1,1,1 --bias|"
  "depthwise-relu6|--shape 1,32,14,14,32,3,3 --groups 32 --stride 2,2 --pad 1,1,1,1 --bias --relu6|"
  "depthwise-m2-past-K|--shape 1,24,9,9,48,3,3 --groups 24 --pad 1,1,1,1|--block-k=32"
  "k40-blockk16|--shape 1,16,12,12,40,3,3 --pad 1,1,1,1 --bias --relu|--block-k=16"
  "opt2|--shape 2,8,16,16,16,3,3 --pad 1,1,1,1|--outputs-per-thread=2"
  "dilation2|--shape 1,8,20,20,16,3,3 --dilation 2,2 --pad 2,1,2,3|"
  "grouped-g2-relu6-chunks|--shape 1,16,10,10,16,3,3 --groups 2 --pad 1,1,1,1 --bias --relu6|--block-k=16 --chunk-c=3"
)

fail=0
for c in "${CASES[@]}"; do
  IFS='|' read -r name gen flags <<<"$c"
  d=$WORK/$name
  mkdir -p "$d"
  # shellcheck disable=SC2086
  "$BIN/spconv-gen-conv" $gen --sparsity 0.7 -o "$d" >/dev/null
  line="$name:"
  for route in legacy affine; do
    env=()
    [ $route = legacy ] && env=(SPCONV_FMA_EMITTER=legacy)
    # shellcheck disable=SC2086
    {
      env "${env[@]}" "$BIN/spconv-translate" --spconv-to-block-template-ptx --cache-dir=none \
        $flags "$d/conv.mlir" -o "$d/$route.block.ptx"
      env "${env[@]}" "$BIN/spconv-translate" --spconv-to-ptx --fold-at=ptx --cache-dir=none \
        $flags "$d/conv.mlir" -o "$d/$route.ptx-fold.ptx"
      env "${env[@]}" "$BIN/spconv-translate" --spconv-to-ptx --fold-at=llvm --cache-dir=none \
        $flags "$d/conv.mlir" -o "$d/$route.llvm-fold.ptx"
      cpu=--convert-spconv-to-cpu
      [ -n "$flags" ] && cpu="$cpu=${flags//--/}"
      env "${env[@]}" "$BIN/spconv-opt" "$d/conv.mlir" "$cpu" -o "$d/$route.cpu.raw.mlir"
      /usr/bin/python3 "$(dirname "$0")/normalize-constants.py" "$d/$route.cpu.raw.mlir" \
        >"$d/$route.cpu.mlir"
      env "${env[@]}" "$BIN/spconv-cpu-check" "$d/conv.mlir" $flags >"$d/$route.cpu-check.txt"
    }
  done
  for f in block.ptx ptx-fold.ptx llvm-fold.ptx cpu.mlir cpu-check.txt; do
    if cmp -s "$d/legacy.$f" "$d/affine.$f"; then
      line+=" $f=identical"
    else
      line+=" $f=DIFFERENT"
      fail=1
    fi
  done
  echo "$line"
done
exit $fail
