#!/bin/bash
# The max pool over image pairs through torch.compile (fastcopy.py), on the device: STEP...
#   pools       pool_bench.py: eager against compiled pools over pairs, beside PyTorch's
#   pytest      the CUDA tests of test_carry.py (the compiled pools and conversions)
#   e2e         ResNet-50 FP16 b64, every conv sparse and the default policy
#               (../2026-11-27-image-pair-e2e/run-e2e.sh ip-all ip-default)
#   candidates  the measured policy's candidates profiled at b64, and Inductor's dense model
#               (../2026-11-27-measured-policy/device-run.sh with RUNS=ip:64 INDUCTOR=1)
#   r50         ResNet-50 FP16 b64, the default policy, in one process with PyTorch FP16
#               channels-last, Inductor, all kept, torch.compile(backend="immconv"), export
#   r50-eager   ResNet-50 FP16 b64, every conv sparse, with IMMCONV_COMPILED_COPIES=0 (eager
#               conversions and pools) and then without
#   vgg         VGG-16 FP16 b64: every conv sparse, then the default policy with Inductor
#   ncu         ncu on the stem pool over pairs, compiled and eager (ncu_pool.py)
# Kernel caches carried: .cache/carry-ip (ResNet-50), .cache/carry-ip-vgg16 (bench/results
# moved out so that the carry fits). IMMCONV_COMMIT names the carried tree.
set -u
export PYTHONUNBUFFERED=1 SPCONV_TUNING_TABLE=$PWD/tuning/nvidia-h200.json
python3 -m pip install -q --upgrade --no-deps --no-build-isolation --no-index --target /tmp/site python/ \
    > /dev/null 2>&1 && export PYTHONPATH=/tmp/site
D=$(dirname "$0")
LOG=$OUT/steps.txt
{ date -u; nvidia-smi --query-gpu=name,driver_version,serial,clocks.max.sm --format=csv; } >> "$LOG"
A="--phase run --sparsity 0.9 --input-scale 0.1 --batch 64 --dtype f16 --layout image_pairs"
cache() {  # the carried cache .cache/carry-$1, copied once to /tmp
  [ -d /tmp/cache-$1 ] || { mkdir -p /tmp/cache-$1 && cp -r .cache/carry-$1/. /tmp/cache-$1/; }
  echo /tmp/cache-$1
}
run() {  # NAME NET POLICY [ARGS...]: one torch_backend.py run into $OUT/NAME.json
  local name=$1 net=$2 policy=$3; shift 3
  local c; c=$(cache "ip$([ "$net" = resnet50 ] || echo "-$net")")
  echo "-- $name" >> "$LOG"
  timeout 400 python3 bench/torch_backend.py $A --net "$net" --policy "$policy" --cache "$c" \
      --out "$OUT/$name.json" "$@" 2>&1 | grep -v "^pytorch_fp32" >> "$LOG"
}
for step in "$@"; do
  echo "== $step $(date -u +%T)" >> "$LOG"
  case $step in
    pools) timeout 200 python3 "$D/pool_bench.py" "$OUT/pools.json" >> "$LOG" 2>&1 ;;
    pytest) timeout 300 python3 -m pytest -q -p no:cacheprovider python/tests/test_carry.py python/tests/test_dynamo.py \
              python/tests/test_layout.py python/tests/test_residual.py python/tests/test_torch.py python/tests/test_half.py \
              > "$OUT/pytest.txt" 2>&1; tail -3 "$OUT/pytest.txt" >> "$LOG" ;;
    e2e) bash bench/results/2026-11-27-image-pair-e2e/run-e2e.sh ip-all ip-default > /dev/null ;;
    candidates) RUNS=ip:64 INDUCTOR=1 bash bench/results/2026-11-27-measured-policy/device-run.sh \
              > /dev/null ;;
    r50) run resnet50-default-all-baselines resnet50 default --inductor --backend ;;
    r50-eager) IMMCONV_COMPILED_COPIES=0 run resnet50-all-eager-pools resnet50 all
               run resnet50-all-compiled-pools resnet50 all ;;
    ncu) timeout 200 ncu --nvtx --nvtx-include "profiled/" --metrics gpu__time_duration.sum,\
dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,dram__bytes_write.sum,\
sm__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,\
smsp__issue_active.avg.per_cycle_active,launch__grid_size,launch__block_size \
           python3 "$D/ncu_pool.py" > "$OUT/ncu-pool.txt" 2>&1; grep -c "==PROF==\|Section" "$OUT/ncu-pool.txt" >> "$LOG" ;;
    vgg) run vgg16-all vgg16 all
         run vgg16-default-inductor vgg16 default --inductor ;;
  esac
  echo "rc=$? $(date -u +%T)" >> "$LOG"
done
cat "$LOG"
