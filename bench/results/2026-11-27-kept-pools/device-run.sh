#!/bin/bash
# Max pools on 4-D tensors through torch.compile (carry.max_pool2d), on the device: STEP...
#   pytest    the CUDA-capable python test files (test_carry's compiled 4-D pools among them)
#   pools     pool_bench.py: eager against compiled 4-D pools at VGG-16's and ResNet-50's shapes
#   r50       ResNet-50 FP16 b64, default policy, with PyTorch FP16 channels-last, Inductor,
#             all kept, torch.compile(backend="immconv"), export: this tree
#   r50-prev  the default policy with carry.py before the change (prev.patch reversed): the A/B
#   vgg, vgg-prev  VGG-16 FP16 b64, default policy with Inductor: this tree, then before
#   vgg-all   VGG-16 FP16 b64, every conv sparse
#   vgg-short VGG-16 default policy, the variants timed as the policy times (3 warm-ups, 15
#             replays) instead of 10 and 50
#   mbv2      MobileNetV2 FP16 b64, default policy with Inductor (carry .cache/carry-ip-mbv2)
#   mbv2-prev the same before d65e89f (prev-residual.patch reversed)
#   mbv2-res  the same after d65e89f (its residual adds in the kernels; carry
#             .cache/carry-ip-mbv2-res), with torch.compile(backend="immconv") and export
#   r50-b1    ResNet-50 FP16 batch 1 (NCHW kernels), default policy with Inductor (carry
#             .cache/carry-nchw-b1)
#   ncu       ncu on VGG-16's second pool, channels-last, compiled and eager (ncu_pool.py)
# Kernel caches carried: .cache/carry-ip (ResNet-50), .cache/carry-ip-vgg16 (bench/results
# moved out but for this folder, so that the carry fits). IMMCONV_COMMIT names the tree.
# Calls 1-8 ran this script with bench/device_env.sh's lines inline (the same steps);
# call9 ran it as it is now.
set -u
D=$(dirname "$0")
source bench/device_env.sh  # python/ installed, $LOG begun with the card, cache, prev_tree
# the trees before carry.py's change and before d65e89f (MobileNetV2's residual adds
# outside the kernels), for the A/B steps
prev_tree /tmp/prev-tree "$D/prev.patch"
prev_tree /tmp/prev-res-tree "$D/prev-residual.patch"
A="--phase run --sparsity 0.9 --input-scale 0.1 --batch 64 --dtype f16 --layout image_pairs"
run() {  # TREE NAME NET POLICY [ARGS...]: one TREE/bench/torch_backend.py run into $OUT/NAME.json
  local tree=$1 name=$2 net=$3 policy=$4; shift 4
  local c; c=$(cache "${CACHE:-ip$([ "$net" = resnet50 ] || echo "-$net")}")
  echo "-- $name" >> "$LOG"
  timeout 300 python3 "$tree/bench/torch_backend.py" $A --net "$net" --policy "$policy" \
      --cache "$c" --out "$OUT/$name.json" "$@" 2>&1 | grep -v "^pytorch_fp32\|ChromiumEventLogger" >> "$LOG"
}
for step in "$@"; do
  echo "== $step $(date -u +%T)" >> "$LOG"
  case $step in
    pytest) timeout 300 python3 -m pytest -q -p no:cacheprovider python/tests/test_carry.py python/tests/test_dynamo.py \
              python/tests/test_layout.py python/tests/test_residual.py python/tests/test_torch.py python/tests/test_half.py \
              > "$OUT/pytest.txt" 2>&1; tail -3 "$OUT/pytest.txt" >> "$LOG" ;;
    pools) timeout 200 python3 "$D/pool_bench.py" "$OUT/pools.json" >> "$LOG" 2>&1 ;;
    r50) run . resnet50-default resnet50 default --inductor --backend ;;
    r50-prev) run /tmp/prev-tree resnet50-default-prev resnet50 default ;;
    vgg) run . vgg16-default vgg16 default --inductor ;;
    vgg-prev) run /tmp/prev-tree vgg16-default-prev vgg16 default ;;
    vgg-all) run . vgg16-all vgg16 all ;;
    vgg-short) run . vgg16-default-short vgg16 default --warmup 3 --repeats 15 ;;
    mbv2) CACHE=ip-mbv2 run . mobilenetv2-default mobilenetv2 default --inductor ;;
    mbv2-prev) CACHE=ip-mbv2 run /tmp/prev-res-tree mobilenetv2-default-prev-res mobilenetv2 default ;;
    mbv2-res) CACHE=ip-mbv2-res run . mobilenetv2-default-res mobilenetv2 default --inductor --backend ;;
    r50-b1) CACHE=nchw-b1 run . resnet50-b1-default resnet50 default --batch 1 --layout nchw --inductor ;;
    ncu) timeout 200 ncu --nvtx --nvtx-include "profiled/" --metrics gpu__time_duration.sum,\
dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,dram__bytes_write.sum,\
sm__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,\
smsp__issue_active.avg.per_cycle_active,launch__grid_size,launch__block_size \
           python3 "$D/ncu_pool.py" > "$OUT/ncu-pool.txt" 2>&1; grep -c "==PROF==\|Section" "$OUT/ncu-pool.txt" >> "$LOG" ;;
  esac
  echo "rc=$? $(date -u +%T)" >> "$LOG"
done
cat "$LOG"
