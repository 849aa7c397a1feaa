# Device run 4: paper10 BF16 (p = 0.9, N = 1 and 64, half sums), checked against the stated
# bound, timed against legacy cuDNN BF16 (NCHW, NHWC) and PyTorch BF16 channels-last.
set -u
export SPCONV_BENCH=$PWD/.devbin/spconv-bench
R=$OUT/res; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv > $R/device.txt
SPCONV_COMMIT=$(git rev-parse --short HEAD 2>/dev/null || cat .devbin/commit) bash bench/run_device.sh .cases/bf16 $R/bf16 > $R/bf16.log 2>&1
PYTHONUNBUFFERED=1 timeout 100 python3 bench/torch_baseline.py $R/bf16/suite.json --modes bf16 --out $R/torch-bf16.json > $R/torch.log 2>&1
rm -f $R/bf16/*.log
tar czf $OUT/res.tgz -C $OUT res
