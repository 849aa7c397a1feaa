# paper10 FP16 (p = 0.9, half sums) with the heuristic's tilings (.cases/f16h, 20 cases) and
# with tuning/nvidia-h200.json (.cases/f16t: the 3 layers that have an entry), in one run,
# with legacy cuDNN FP16 (spconv-bench) and PyTorch FP16 channels-last (torch_baseline.py);
# ncu on the three tuned layers, both tilings; round 3 of the tiling sweep (PTX- against
# LLVM-level fold). Compiled here:
#   SPCONV_DTYPE=f16 SPCONV_SPARSITIES=0.9 bench/compile_suite.sh .cases/f16h   # at f7c6604
#   SPCONV_TUNING_TABLE=$PWD/tuning/nvidia-h200.json SPCONV_DTYPE=f16 SPCONV_SPARSITIES=0.9 \
#     SPCONV_BATCHES=64 bench/compile_suite.sh .cases/f16t vgg-conv3 resnet-conv2 googlenet-1x1
#     # at b7cd674 (the tuning table; the same code as f7c6604 where no entry applies)
set -u
export SPCONV_BENCH=$PWD/.devbin/spconv-bench
C=f7c6604
R=$OUT/res; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv > $R/device.txt
SPCONV_COMMIT=$C bash bench/run_device.sh .cases/f16h $R/heuristic > $R/heuristic.log 2>&1
SPCONV_COMMIT=b7cd674 bash bench/run_device.sh .cases/f16t $R/tuned > $R/tuned.log 2>&1
PYTHONUNBUFFERED=1 timeout 150 python3 bench/torch_baseline.py $R/heuristic/suite.json $R/tuned/suite.json --modes fp16 --out $R/torch-fp16.json > $R/torch16.log 2>&1
for c in vgg-conv3 resnet-conv2 googlenet-1x1; do
  timeout 60 bash bench/ncu_case.sh .cases/f16h/$c-n64-p0.9 $R/ncu-heuristic-$c.txt > /dev/null 2>&1
  timeout 60 bash bench/ncu_case.sh .cases/f16t/$c-n64-p0.9 $R/ncu-tuned-$c.txt > /dev/null 2>&1
done
VARIANTS_REPS=2 VARIANTS_BENCH_ARGS=--no-half-baselines timeout 120 bash bench/variants.sh run .sweep4 $R/round3.json > $R/round3.txt 2>&1
tar czf $OUT/res.tgz -C $OUT res
