# Device run 1: paper10 FP16 (p = 0.9, N = 1 and 64) compiled at HEAD, promoted runs and
# half sums, checked against the stated bound and timed against cuDNN FP16/BF16 (legacy,
# NCHW and NHWC) and PyTorch FP16 channels-last; ncu on three layers.
set -u
export SPCONV_BENCH=$PWD/.devbin/spconv-bench
R=$OUT/res; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv > $R/device.txt
SPCONV_COMMIT=$(cat .devbin/commit) bash bench/run_device.sh .cases/f16p $R/f16p > $R/f16p.log 2>&1
SPCONV_COMMIT=$(cat .devbin/commit) bash bench/run_device.sh .cases/f16 $R/f16h > $R/f16h.log 2>&1
PYTHONUNBUFFERED=1 timeout 150 python3 bench/torch_baseline.py $R/f16p/suite.json $R/f16h/suite.json --modes fp16 --out $R/torch-fp16.json > $R/torch.log 2>&1
SPCONV_GPU_TESTS_ONLY="^b?f16-" timeout 120 bash bench/gpu_tests.sh run .cases/gpu-half > $R/gpu-half.log 2>&1
for c in vgg-conv3-n64 resnet-conv2-n64 alexnet-conv2-n64 resnet-conv2-n1; do
  timeout 60 bash bench/ncu_case.sh .cases/f16p/$c-p0.9 $R/ncu-$c.txt > $R/ncu-$c.log 2>&1
done
tar czf $OUT/res.tgz -C $OUT res
