#!/bin/bash
# ResNet-50 FP16 at batch 1 with the 65-entry table, and alexnet-conv2's per-process level,
# on the device: STEP...
#   smid       smid_probe.py in 8 processes on alexnet-conv2 b1, 2 on resnet-conv2 (carry
#              .sol/p10b1-t58/{alexnet,resnet}-conv2-n1-p0.9)
#   default    ResNet-50 FP16 b1 (NCHW kernels), the measured policy, with PyTorch FP16
#              channels-last and Inductor in the same process
#   all        the same with every conv compiled (--policy all)
#   in-network in_network.py: each sparse kernel inside the all-compiled forward against the
#              default step's isolated time of it
#   in-network-cudnn  the same for PyTorch FP16 channels-last's conv kernels, against call1's
#              default step's isolated times (call1/resnet50-b1-default.json)
#   cold       spconv-bench --cold-l2 on paper10's resnet-conv1 and resnet-conv2 at batch 1
#              (ResNet-50's layer1.x.conv2 and layer2.x.conv2 shapes; carry build/bin/spconv-bench
#              and .sol/p10b1-t58/resnet-conv{1,2}-n1-p0.9), three processes each
#   prefetch   code_prefetch.py on paper10's batch-1 kernels that are not SM-affine (carry
#              .sol/p10b1-t58/*), two processes each
#   b64        ResNet-50 FP16 b64 in image pairs, the measured policy, with Inductor (carry
#              .cache/carry-ip): that the stricter plans leave batch 64 as it was
#   mbv2, vgg  MobileNetV2 / VGG-16 FP16 b64 in image pairs, the measured policy, with Inductor
#              (carry .cache/carry-ip-mbv2, .cache/carry-ip-vgg16)
#   code-in-l2 code_in_l2.py on paper10's batch-1 kernels that are not SM-affine, vgg-conv3's
#              as the evictor (carry .sol/p10b1-t58/*), two processes each
#   in-network-b64  in_network.py at batch 64 in image pairs against call4's b64 default run
#              (call4/resnet50-b64-default.json; carry .cache/carry-ip)
#   backend    ResNet-50 FP16 b1 (NCHW) and b64 (image pairs), the measured policy, through the
#              explicit API, torch.compile(backend="immconv") and torch.export (--backend)
#   ncu-in-network  ncu (application replay, caches left alone) on layer1.0.conv2's kernel
#              (spconv_conv2d_2) in the 6th all-sparse b1 forward (in_network.py
#              --forwards-only), and on paper10's resnet-conv1 b1 (layer1.0.conv2's shape and
#              entry) alone, warm (its 4th launch); carry build/bin/spconv-bench and
#              .sol/p10b1-t58/resnet-conv1-n1-p0.9
#   mbv2-b1    MobileNetV2 FP16 b1 (NCHW): the measured policy with Inductor and the PyTorch 2
#              front ends, every conv compiled, and in_network.py on it (carry
#              .cache/carry-mbv2-nchw-b1)
# Kernel cache carried: .cache/carry-nchw-b1 (README.md). IMMCONV_COMMIT names the tree.
set -u
D=$(dirname "$0")
source bench/device_env.sh  # python/ installed, $LOG begun with the card, cache
A="--phase run --sparsity 0.9 --input-scale 0.1 --batch 1 --dtype f16 --layout nchw --net resnet50"
for step in "$@"; do
  echo "== $step $(date -u +%T)" >> "$LOG"
  case $step in
    smid)
      for i in 1 2 3 4 5 6 7 8; do
        timeout 60 python3 "$D/smid_probe.py" .sol/p10b1-t58/alexnet-conv2-n1-p0.9 "$OUT/smid-a2-$i.json" >> "$LOG" 2>&1
      done
      for i in 1 2; do
        timeout 60 python3 "$D/smid_probe.py" .sol/p10b1-t58/resnet-conv2-n1-p0.9 "$OUT/smid-r2-$i.json" >> "$LOG" 2>&1
      done ;;
    default) timeout 300 python3 bench/torch_backend.py $A --policy default --inductor \
               --cache "$(cache nchw-b1)" --out "$OUT/resnet50-b1-default.json" 2>&1 \
               | grep -v "^pytorch_fp32\|ChromiumEventLogger" >> "$LOG" ;;
    all) timeout 300 python3 bench/torch_backend.py $A --policy all \
           --cache "$(cache nchw-b1)" --out "$OUT/resnet50-b1-all.json" 2>&1 \
           | grep -v "^pytorch_fp32\|ChromiumEventLogger" >> "$LOG" ;;
    in-network) timeout 300 python3 "$D/in_network.py" "$(cache nchw-b1)" \
                  "$OUT/resnet50-b1-default.json" "$OUT/in-network.json" >> "$LOG" 2>&1 ;;
    cold)
      for L in resnet-conv1 resnet-conv2; do
        C=.sol/p10b1-t58/$L-n1-p0.9
        for i in 1 2 3; do
          timeout 120 build/bin/spconv-bench --launch $C/kernels.json --module $C/kernels.cubin \
            --weights $C/weights.bin --no-cusparse --no-tf32 --cold-l2 --out "$OUT/cold-$L-$i.json" \
            > /dev/null 2>> "$LOG"
          python3 -c "import json,sys; d=json.load(open(sys.argv[1])); c=d['contenders']; print(sys.argv[2], {k: (round(v.get('time_ms',0)*1e3,2), round(v.get('time_ms_cold_l2',0)*1e3,2)) for k,v in c.items() if isinstance(v,dict)})" "$OUT/cold-$L-$i.json" "$L" >> "$LOG" 2>&1
        done
      done ;;
    b64) timeout 400 python3 bench/torch_backend.py --phase run --sparsity 0.9 --input-scale 0.1 \
           --batch 64 --dtype f16 --layout image_pairs --net resnet50 --policy default --inductor \
           --cache "$(cache ip)" --out "$OUT/resnet50-b64-default.json" 2>&1 \
           | grep -v "^pytorch_fp32\|ChromiumEventLogger" >> "$LOG" ;;
    ncu-in-network)
      M=gpu__time_duration.sum,launch__grid_size,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.per_cycle_active,smsp__inst_executed.sum,smsp__sass_thread_inst_executed_op_hfma_pred_on.sum,smsp__average_warps_issue_stalled_no_instruction_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sectors_srcunit_tex_lookup_miss.sum
      for K in spconv_conv2d_2; do
        timeout 240 ncu --replay-mode application --cache-control none --clock-control none \
          --kernel-name $K --launch-skip 5 --launch-count 1 --metrics $M \
          python3 "$D/in_network.py" "$(cache nchw-b1)" none none --forwards-only \
          > "$OUT/ncu-network-$K.txt" 2>&1; echo "ncu $K rc=$?" >> "$LOG"
      done
      C=.sol/p10b1-t58/resnet-conv1-n1-p0.9
      timeout 120 ncu --cache-control none --clock-control none --launch-skip 3 --launch-count 1 \
        --kernel-name regex:spconv --metrics $M build/bin/spconv-bench --launch $C/kernels.json \
        --module $C/kernels.cubin --weights $C/weights.bin --no-graph --iters 5 --no-cusparse \
        --no-tf32 --no-half-baselines --out "$OUT/ncu-alone-bench.json" > "$OUT/ncu-alone-resnet-conv1.txt" 2>&1
      echo "ncu alone rc=$?" >> "$LOG" ;;
    mbv2-b1)
      A1="--phase run --sparsity 0.9 --input-scale 0.1 --batch 1 --dtype f16 --layout nchw --net mobilenetv2"
      timeout 400 python3 bench/torch_backend.py $A1 --policy default --inductor --backend \
        --cache "$(cache mbv2-nchw-b1)" --out "$OUT/mobilenetv2-b1-default.json" 2>&1 \
        | grep -v "^pytorch_fp32\|ChromiumEventLogger" >> "$LOG"
      timeout 300 python3 bench/torch_backend.py $A1 --policy all \
        --cache "$(cache mbv2-nchw-b1)" --out "$OUT/mobilenetv2-b1-all.json" 2>&1 \
        | grep -v "^pytorch_fp32\|ChromiumEventLogger" >> "$LOG"
      timeout 300 python3 "$D/in_network.py" "$(cache mbv2-nchw-b1)" \
        "$OUT/mobilenetv2-b1-default.json" "$OUT/in-network-mbv2-b1.json" --net mobilenetv2 >> "$LOG" 2>&1 ;;
    backend)
      for b in 1 64; do
        L=nchw C=nchw-b1; [ $b = 64 ] && { L=image_pairs; C=ip; }
        timeout 400 python3 bench/torch_backend.py --phase run --sparsity 0.9 --input-scale 0.1 \
          --batch $b --dtype f16 --layout $L --net resnet50 --policy default --backend \
          --cache "$(cache $C)" --out "$OUT/resnet50-b$b-backend.json" 2>&1 \
          | grep -v "^pytorch_fp32\|ChromiumEventLogger" >> "$LOG"
      done ;;
    mbv2|vgg) net=mobilenetv2; c=ip-mbv2; [ "$step" = vgg ] && { net=vgg16; c=ip-vgg16; }
      timeout 400 python3 bench/torch_backend.py --phase run --sparsity 0.9 --input-scale 0.1 \
        --batch 64 --dtype f16 --layout image_pairs --net $net --policy default --inductor \
        --cache "$(cache $c)" --out "$OUT/$net-b64-default.json" 2>&1 \
        | grep -v "^pytorch_fp32\|ChromiumEventLogger" >> "$LOG" ;;
    code-in-l2)
      for L in resnet-conv1 resnet-conv2 alexnet-conv2 vgg-conv2 alexnet-conv1 googlenet-1x1 vgg-conv1; do
        for i in 1 2; do
          timeout 60 python3 "$D/code_in_l2.py" .sol/p10b1-t58/$L-n1-p0.9 .sol/p10b1-t58/vgg-conv3-n1-p0.9 \
            "$OUT/code-in-l2-$L-$i.json" >> "$LOG" 2>&1
        done
      done ;;
    prefetch)
      for L in resnet-conv1 resnet-conv2 alexnet-conv2 vgg-conv2 alexnet-conv1 googlenet-1x1 vgg-conv1; do
        for i in 1 2; do
          timeout 60 python3 "$D/code_prefetch.py" .sol/p10b1-t58/$L-n1-p0.9 "$OUT/prefetch-$L-$i.json" >> "$LOG" 2>&1
        done
      done ;;
    in-network-b64) timeout 300 python3 "$D/in_network.py" "$(cache ip)" \
                  "$D/call4/resnet50-b64-default.json" "$OUT/in-network-b64.json" --batch 64 \
                  --layout image_pairs >> "$LOG" 2>&1 ;;
    in-network-cudnn) timeout 300 python3 "$D/in_network.py" "$(cache nchw-b1)" \
                  "$D/call1/resnet50-b1-default.json" "$OUT/in-network-cudnn.json" --cudnn >> "$LOG" 2>&1 ;;
  esac
  echo "rc=$? $(date -u +%T)" >> "$LOG"
done
cat "$LOG"
