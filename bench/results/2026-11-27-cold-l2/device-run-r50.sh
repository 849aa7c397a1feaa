#!/bin/bash
# ResNet-50's 53 FP16 convs (image pairs, batch 64, p = 0.9, the 49-entry table) with
# spconv-bench --cold-l2: every kernel, and cuDNN FP16 in both legacy layouts, warm and from
# a cold L2, each kernel checked against its stated bound first. Compiled here:
#   SPCONV_DTYPE=f16 SPCONV_LAYOUT=image_pairs SPCONV_TUNING_TABLE=$PWD/tuning/nvidia-h200.json \
#     SPCONV_CACHE_DIR=none bench/compile_network.sh resnet50 64 0.9 1 .net/r50-b64-f16ip --jobs=2
# carried as .net/carry/r50-b64-f16ip (net.json, manifest.json, gen.args, compile.json,
# net.cubin.xz) with .devbinx. usage (device): bash device-run-r50.sh [BUNDLE] (default
# r50-b64-f16ip; r50-b64-f16nchw: the same without SPCONV_LAYOUT, the NCHW kernels
# immconv.torch runs)
set -u
mkdir -p .devbin && xz -dc .devbinx/spconv-bench.xz > .devbin/spconv-bench &&
  chmod +x .devbin/spconv-bench
export SPCONV_BENCH=$PWD/.devbin/spconv-bench SPCONV_TORCH_BASELINE=0 \
  SPCONV_BENCH_ARGS="--no-cusparse --no-tf32 --cold-l2 --batches 5"
d=${1:-r50-b64-f16ip} R=$OUT/r50-cold
mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,serial --format=csv > $R/device.txt
cp .devbinx/commit $R/bench-commit.txt
B=/tmp/$d; rm -rf $B; cp -r .net/carry/$d $B; xz -d $B/net.cubin.xz
timeout 520 bash bench/run_network.sh $B $R/$d > $R/$d.log 2>&1
echo "rc=$?" >> $R/$d.log
python3 - $R/$d > $R/summary.txt <<'PY'
import glob, json, os, sys
rows, sw, sc, hw, hc = 0, 0, 0, 0, 0
for f in sorted(glob.glob(os.path.join(sys.argv[1], "[0-9][0-9]-*.json"))):
    r = json.load(open(f))
    if "cold_l2" not in r or not r.get("best_cudnn_half"):
        print(os.path.basename(f), r.get("status")); continue
    a = r["contenders"]["spconv"]["time_ms"]; b = r["cold_l2"]["spconv"]
    c = r["best_cudnn_half"]["time_ms"]; d = r["cold_l2"]["best_cudnn_half"]["time_ms"]
    print("%-28s spconv %.4f -> %.4f  cudnn half %.4f -> %.4f" % (r.get("layer"), a, b, c, d))
    rows += 1; sw += a; sc += b; hw += c; hc += d
print("%d layers: spconv %.3f -> %.3f ms (%.2fx), cuDNN FP16 %.3f -> %.3f ms (%.2fx), "
      "ratio %.2fx -> %.2fx" % (rows, sw, sc, sc / sw, hw, hc, hc / hw, hw / sw, hc / sc))
PY
tail -3 $R/$d.log; tail -1 $R/summary.txt
tar czf $OUT/r50-cold-$d.tgz -C $OUT r50-cold && rm -rf $R
