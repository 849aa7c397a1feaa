#!/usr/bin/env bash
# usage: bench/run_network.sh BUNDLE OUTDIR
#
# Runs every kernel of a compiled network on the GPU machine, each checked against cuDNN
# FP32 before it is timed against cuDNN FP32/TF32 and cuSPARSE (spconv-bench; a half
# network's kernels against their stated bound, and timed against cuDNN in their type too),
# and writes OUTDIR/<NN>-<layer>.json per conv plus OUTDIR/network.json (per-conv and summed times).
#
# BUNDLE holds what the compile machine made (bench/compile_network.sh):
#   net.json net.cubin           the sidecar and the linked cubin (kernel i = conv i)
#   manifest.json                bench/networks.py --split's layer list
#   weights/NN-<name>.bin        KCRS float32 weights (regenerated here when absent:
#                                bench/networks.py is deterministic, see gen.args)
# spconv-bench from $SPCONV_BENCH, else build/bin/spconv-bench next to this script.
# Extra spconv-bench flags in $SPCONV_BENCH_ARGS (--cold-l2: network.json's totals add the
# sums from a cold L2, as the convs run inside the network).
# Where PyTorch with CUDA is importable, every conv is also timed through PyTorch's cuDNN
# (bench/torch_baseline.py: cuDNN 9's frontend engines, cudnn.benchmark) into
# OUTDIR/torch-baseline.json: on small grids it is much faster than spconv-bench's legacy
# cudnnFind best, so claims are made against the faster of the two. SPCONV_TORCH_BASELINE=0
# skips it (A/B runs of the same network).
set -u
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
[ $# -eq 2 ] || { sed -n '2,14p' "$0"; exit 2; }
bundle="$1"; out="$2"
mkdir -p "$out"
bench="${SPCONV_BENCH:-$root/build/bin/spconv-bench}"
[ -x "$bench" ] || { echo "run_network.sh: no spconv-bench at $bench" >&2; exit 2; }

if [ ! -d "$bundle/weights" ]; then
  # Same generator, same arguments: the same weights the compile folded in.
  # shellcheck disable=SC2046
  python3 "$here/networks.py" $(cat "$bundle/gen.args") --split "$bundle/split" >/dev/null || exit 2
  ln -s split/weights "$bundle/weights"
fi

status=0
python3 - "$bundle/manifest.json" > "$out/layers.txt" <<'PY' || exit 2
import json, sys
m = json.load(open(sys.argv[1]))
for i, l in enumerate(m["layers"]):
    print(i, l["name"], l["weights"], l.get("bias") or "-")
PY
while read -r i name wfile bfile; do
  tag="$(printf '%02d' "$i")-$name"
  args=(--launch "$bundle/net.json" --module "$bundle/net.cubin" --entry "spconv_conv2d_$i"
        --weights "$bundle/weights/$(basename "$wfile")" --layer "$name" --out "$out/$tag.json")
  [ "$bfile" != "-" ] && args+=(--bias "$bundle/weights/$(basename "$bfile")")
  # shellcheck disable=SC2086
  if ! "$bench" "${args[@]}" ${SPCONV_BENCH_ARGS:-} 2> "$out/$tag.log"; then
    status=1
    echo "run_network.sh: $tag failed, see $out/$tag.log" >&2
    tail -n 3 "$out/$tag.log" >&2
  fi
done < "$out/layers.txt"

python3 "$here/network_summary.py" "$out" > "$out/network.json" || status=1
python3 - "$out/network.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
t = s["totals"]
def vs(ms, base):  # "-" for a baseline skipped (--no-tf32, --no-cusparse)
    return "%.3f (x%.2f)" % (base, base / ms) if base else "-"
print("%d convs, %d checked ok; sum ms: spconv %.3f  cudnn_fp32 %s  cudnn_tf32 %s  cusparse %s" % (
    s["convs"], s["checked_ok"], t["spconv"], vs(t["spconv"], t["cudnn_fp32"]),
    vs(t["spconv"], t.get("cudnn_tf32")), vs(t["spconv"], t.get("cusparse"))))
if t.get("best_cudnn_half"):
    print("half precision: legacy cuDNN best half %s" % vs(t["spconv"], t["best_cudnn_half"]))
if t.get("spconv_cold_l2"):  # spconv-bench --cold-l2 in $SPCONV_BENCH_ARGS
    print("from a cold L2: spconv %.3f  legacy cuDNN best half %s" % (
        t["spconv_cold_l2"], vs(t["spconv_cold_l2"], t.get("best_cudnn_half_cold_l2"))))
ratio = lambda x: "x%.2f" % x if x else "-"
for l in s["layers"]:
    print("  %-24s %8.4f ms  %s fp32  %s tf32  %s" % (l["layer"], l["spconv"], ratio(l["x_fp32"]), ratio(l.get("x_tf32")), l["status"]))
PY
if [ "${SPCONV_TORCH_BASELINE:-1}" = 0 ]; then
  echo "run_network.sh: SPCONV_TORCH_BASELINE=0: torch-baseline.json not written" >&2
elif python3 -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" 2>/dev/null; then
  python3 "$here/torch_baseline.py" "$out/network.json" --out "$out/torch-baseline.json" || status=1
else
  echo "run_network.sh: no PyTorch with CUDA here: torch-baseline.json not written" >&2
fi
exit $status
