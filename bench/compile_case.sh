#!/usr/bin/env bash
# usage: bench/compile_case.sh LAYER BATCH SPARSITY OUTDIR [extra spconv-translate flags]
#
# Here (no GPU): generates the paper10 layer with magnitude-pruned random weights
# (spconv-gen-conv, seed 1), compiles it cold (empty template cache) and then warm (a second
# sparsity pattern of the same shape against the now-filled cache), and leaves OUTDIR ready
# for bench/run_device.sh: kernels.{json,ptx,cubin}, weights.bin, case.json with the times.
# SPCONV_DTYPE=f16|bf16 compiles the half-precision kernel (spconv-gen-conv --dtype), and
# SPCONV_ACCUMULATE=f32|f16|bf16 states its accumulation (--accumulate), and
# SPCONV_LAYOUT=image_pairs stores its tensors as image pairs (--layout; even batches only:
# a batch-1 case keeps NCHW).
set -euo pipefail
[ $# -ge 4 ] || { sed -n '2,8p' "$0"; exit 2; }
layer=$1 batch=$2 sparsity=$3 out=$4; shift 4
bin="${SPCONV_BIN:-$(cd "$(dirname "$0")/.." && pwd)/build/bin}"
mkdir -p "$out"
cache="$(mktemp -d)"
trap 'rm -rf "$cache" "$out/warm"' EXIT

dtype=(--dtype "${SPCONV_DTYPE:-f32}")
[ -z "${SPCONV_ACCUMULATE:-}" ] || dtype+=(--accumulate "$SPCONV_ACCUMULATE")
if [ "${SPCONV_LAYOUT:-nchw}" != nchw ] && [ $((batch % 2)) = 0 ]; then
  dtype+=(--layout "$SPCONV_LAYOUT")
fi
"$bin/spconv-gen-conv" --layer "$layer" --batch "$batch" --sparsity "$sparsity" --seed 1 \
  "${dtype[@]}" -o "$out" >/dev/null
now() { date +%s.%N; }
peak_kb() { awk '/Maximum resident/ {print $NF}' "$1"; }

t0=$(now)
/usr/bin/time -v -o "$out/cold.time" "$bin/spconv-translate" --spconv-compile "$out/conv.mlir" \
  --cache-dir="$cache" --artifact-prefix="$out/kernels" -o "$out/kernels.json" "$@"
t1=$(now)
# Warm: same shape, another pattern (seed 2), template from the cache. SPCONV_SKIP_WARM=1
# skips it (the warm path is recorded at sparsity 0.9 only, to save time).
if [ -n "${SPCONV_SKIP_WARM:-}" ]; then
  mkdir -p "$out/warm"; cp "$out/kernels.json" "$out/warm/kernels.json"
  cp "$out/cold.time" "$out/warm.time"
fi
[ -n "${SPCONV_SKIP_WARM:-}" ] || "$bin/spconv-gen-conv" --layer "$layer" --batch "$batch" --sparsity "$sparsity" --seed 2 \
  "${dtype[@]}" -o "$out/warm" >/dev/null
t2=$(now)
[ -n "${SPCONV_SKIP_WARM:-}" ] || /usr/bin/time -v -o "$out/warm.time" "$bin/spconv-translate" --spconv-compile \
  "$out/warm/conv.mlir" --cache-dir="$cache" --artifact-prefix="$out/warm/kernels" \
  -o "$out/warm/kernels.json" "$@"
t3=$(now)

python3 - "$out" "$layer" "$batch" "$sparsity" "$t0" "$t1" "$t2" "$t3" \
  "$(peak_kb "$out/cold.time")" "$(peak_kb "$out/warm.time")" <<'PY'
import json, sys
out, layer, batch, sp, t0, t1, t2, t3, cold_kb, warm_kb = sys.argv[1:]
cold = json.load(open(out + "/kernels.json"))["compile_seconds"]
warm = json.load(open(out + "/warm/kernels.json"))["compile_seconds"]
skip = bool(__import__("os").environ.get("SPCONV_SKIP_WARM"))
case = {"layer": layer, "batch": int(batch), "sparsity": float(sp),
        "dtype": __import__("os").environ.get("SPCONV_DTYPE", "f32"),
        "accumulate": __import__("os").environ.get("SPCONV_ACCUMULATE", ""),
        "compile": {"cold_total_s": float(t1) - float(t0), "warm_total_s": float(t3) - float(t2),
                    "cold": cold, "warm": warm,
                    "cold_to_ptx_s": cold["lower_and_fold"] + cold["nvptx"],
                    "warm_to_ptx_s": warm["lower_and_fold"] + warm["nvptx"],
                    "cold_peak_rss_mb": int(cold_kb) / 1024, "warm_peak_rss_mb": int(warm_kb) / 1024}}
if skip:
    for k in ("warm", "warm_total_s", "warm_to_ptx_s", "warm_peak_rss_mb"):
        case["compile"].pop(k)
json.dump(case, open(out + "/case.json", "w"), indent=2)
c = case["compile"]
if skip:
    print("%s N=%s p=%s: cold %.1fs (to PTX %.1fs, ptxas %.1fs), peak %d MB"
          % (layer, batch, sp, c["cold_total_s"], c["cold_to_ptx_s"], cold["ptxas"],
             c["cold_peak_rss_mb"]))
    sys.exit(0)
print("%s N=%s p=%s: cold %.1fs (to PTX %.1fs, ptxas %.1fs), warm %.1fs (to PTX %.1fs), peak %d MB"
      % (layer, batch, sp, c["cold_total_s"], c["cold_to_ptx_s"], cold["ptxas"],
         c["warm_total_s"], c["warm_to_ptx_s"], c["cold_peak_rss_mb"]))
PY
