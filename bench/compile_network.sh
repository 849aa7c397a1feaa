#!/usr/bin/env bash
# usage: bench/compile_network.sh NETWORK BATCH SPARSITY SEED OUTDIR [spconv-translate flags]
#
# Generates NETWORK's conv stack (bench/networks.py) at BATCH/SPARSITY/SEED, compiles every
# conv into one bundle with spconv-translate --spconv-compile (parallel ptxas, code and
# memory budgets), and leaves in OUTDIR what bench/run_network.sh needs on the GPU machine:
# net.json, net.cubin, manifest.json and gen.args (weights are regenerated there from it).
# Records wall time and peak resident memory of the whole compile (GNU time: the maximum
# over the process and its waited-for children, i.e. the largest single process) in
# OUTDIR/compile.json. Uses $SPCONV_CACHE_DIR (default OUTDIR/cache; 'none' disables).
# SPCONV_DTYPE=f16|bf16 makes the activations half precision (networks.py --dtype); the
# weights stay f32 and are rounded by the compiler. SPCONV_LAYOUT=image_pairs stores every
# conv's tensors as image pairs (networks.py --layout).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=bench/peak_rss.sh
. "$here/peak_rss.sh"
root="$(cd "$here/.." && pwd)"
[ $# -ge 5 ] || { sed -n '2,10p' "$0"; exit 2; }
net="$1"; batch="$2"; sparsity="$3"; seed="$4"; out="$5"; shift 5
bin="${SPCONV_BIN:-$root/build/bin}"
mkdir -p "$out"
args="$net --batch $batch --sparsity $sparsity --seed $seed"
[ "${SPCONV_DTYPE:-f32}" = f32 ] || args+=" --dtype $SPCONV_DTYPE"
[ "${SPCONV_LAYOUT:-nchw}" = nchw ] || args+=" --layout $SPCONV_LAYOUT"
echo "$args" > "$out/gen.args"
# shellcheck disable=SC2086
/usr/bin/python3 "$here/networks.py" $args -o "$out/net.mlir"
# The manifest only (weights are large): --split into a scratch dir, keep the manifest.
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
# shellcheck disable=SC2086
/usr/bin/python3 "$here/networks.py" $args --split "$tmp" > /dev/null
cp "$tmp/manifest.json" "$out/manifest.json"
cache="${SPCONV_CACHE_DIR:-$out/cache}"
/usr/bin/time -f '%M %e' -o "$out/time.txt" "$bin/spconv-translate" --spconv-compile \
  "$out/net.mlir" --cache-dir="$cache" --progress --artifact-prefix="$out/net" "$@" \
  -o "$out/net.json" 2> "$out/compile.log" &
# The whole run's memory: the sum of the resident sets of spconv-translate and every ptxas
# and nvlink it runs (bench/peak_rss.sh).
wait_peak_rss $! || { tail -5 "$out/compile.log" >&2; exit 1; }
peak_sum=$PEAK_RSS_KB
read -r peak_kb wall < "$out/time.txt"
python3 - "$out" "$peak_kb" "$wall" "$net" "$batch" "$sparsity" "$seed" "$*" "$peak_sum" "$root" <<'PY'
import json, os, platform, subprocess, sys
out, peak_kb, wall, net, batch, sp, seed, flags, peak_sum, root = sys.argv[1:]
side = json.load(open(os.path.join(out, "net.json")))
commit = subprocess.run(["git", "-C", root, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
rec = {"network": net, "batch": int(batch), "sparsity": float(sp), "seed": int(seed),
       "commit": commit, "flags": flags, "wall_seconds": float(wall),
       "peak_rss_mib_largest_process": int(peak_kb) // 1024,
       "peak_rss_mib_sum_sampled": int(peak_sum) // 1024,
       "compile_seconds": side.get("compile_seconds"), "ptxas": side.get("ptxas"),
       "template_cache": side.get("template_cache"), "kernels": len(side["kernels"]),
       "kernel_pieces": sum(k.get("kernel_pieces") or 1 for k in side["kernels"]),
       "cubin_bytes": os.path.getsize(os.path.join(out, "net.cubin")),
       "ptx_bytes": os.path.getsize(os.path.join(out, "net.ptx")),
       "cores": os.cpu_count(), "machine": platform.node()}
json.dump(rec, open(os.path.join(out, "compile.json"), "w"), indent=1)
print(json.dumps(rec))
PY
