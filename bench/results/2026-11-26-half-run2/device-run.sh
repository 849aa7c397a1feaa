# Device run 2: promoted half runs at block-k 16 against half sums (same run), paper10 FP32
# at HEAD (race-fix barriers) for the FP32 regression check, ncu on the half-sum kernels,
# compute-sanitizer over the compiled half GPU tests.
set -u
export SPCONV_BENCH=$PWD/.devbin/spconv-bench
C=$(cat .devbin/commit)
R=$OUT/res; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv > $R/device.txt
SPCONV_COMMIT=$C bash bench/run_device.sh .cases/r2 $R/acc32 > $R/acc32.log 2>&1
SPCONV_COMMIT=$C bash bench/run_device.sh .cases/f16 $R/acc16 > $R/acc16.log 2>&1
SPCONV_COMMIT=$C bash bench/run_device.sh .cases/f32 $R/f32 > $R/f32.log 2>&1
PYTHONUNBUFFERED=1 timeout 100 python3 bench/torch_baseline.py $R/acc32/suite.json $R/acc16/suite.json --modes fp16 --out $R/torch-fp16.json > $R/torch16.log 2>&1
PYTHONUNBUFFERED=1 timeout 100 python3 bench/torch_baseline.py $R/f32/suite.json --modes fp32,tf32 --out $R/torch-fp32.json > $R/torch32.log 2>&1
for c in vgg-conv3-n64 resnet-conv2-n64 alexnet-conv2-n64 vgg-conv2-n64 vgg-conv3-n1; do
  timeout 50 bash bench/ncu_case.sh .cases/f16/$c-p0.9 $R/ncu-acc16-$c.txt > /dev/null 2>&1
done
for c in vgg-conv3-n64 resnet-conv2-n64; do
  timeout 50 bash bench/ncu_case.sh .cases/r2/$c-p0.9 $R/ncu-acc32-$c.txt > /dev/null 2>&1
done
SPCONV_SANITIZE_JOBS=12 SPCONV_SANITIZE_TIMEOUT=60 SPCONV_SANITIZE_DEADLINE=$(( $(date +%s) + 170 )) timeout 230 bash bench/sanitize.sh run .cases/san $R/san > $R/san.log 2>&1
rm -rf $R/san/work
tar czf $OUT/res.tgz -C $OUT res
