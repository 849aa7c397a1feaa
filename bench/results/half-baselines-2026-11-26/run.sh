#!/usr/bin/env bash
# The device run behind this folder (one call of the device tool, repository root as cwd).
# usage: bench/results/half-baselines-2026-11-26/run.sh CARRY OUTDIR COMMIT
# CARRY (prepared here by prepare.sh): spconv-bench, FileCheck, not, lib/libz3.so.4,
#   gt/ (bench/gpu_tests.sh half cases), p10/ (fake half kernels at paper10 shapes),
#   p10broken/ (the same, --broken skip|perturb).
set -u
C="$1"; R="$2"; commit="$3"
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p "$R/gpu-tests" "$R/paper10" "$R/paper10-broken"
{ date -u +%Y-%m-%dT%H:%M:%SZ; nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; } > "$R/device.txt" 2>&1

echo "== gpu_tests.sh half cases"
SPCONV_BENCH="$C/spconv-bench" SPCONV_GPU_TESTS_ONLY='^half' bench/gpu_tests.sh run "$C/gt"
cp "$C"/gt/*.json "$C/gt/gpu-tests.txt" "$R/gpu-tests/"

echo "== test/GPU/half-fake.test (RUN lines without lit)"
LD_LIBRARY_PATH="$C/lib" python3 "$here/runlit.py" test/GPU/half-fake.test "$C" "$PWD" /tmp/half-lit \
  > "$R/lit-half-fake.txt" 2>&1
echo "runlit exit $?"; tail -n 1 "$R/lit-half-fake.txt"

echo "== paper10 shapes, fake half kernels, every cuDNN contender but cuSPARSE"
SPCONV_BENCH="$C/spconv-bench" SPCONV_COMMIT="$commit" SPCONV_BENCH_ARGS="--no-cusparse" \
  bench/run_device.sh "$C/p10" "$R/paper10"

echo "== paper10 shapes, broken fake half kernels (must be rejected: exit 1, status failed)"
for d in "$C"/p10broken/*/; do
  name="$(basename "$d")"
  "$C/spconv-bench" --launch "$d/kernels.json" --module "$d/kernels.cubin" \
    --weights "$d/weights.bin" --out "$R/paper10-broken/$name.json" --layer "$name" \
    --sparsity 0.9 --commit "$commit" --no-cusparse --no-tf32 > /dev/null 2>&1
  rc=$?
  python3 - "$R/paper10-broken/$name.json" "$name" "$rc" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); rc = int(sys.argv[3])
e = r.get("errors", {}).get("spconv", {})
ok = rc == 1 and r.get("status") == "failed"
print("%s %s exit=%d violations=%s non_finite=%s err/bound=%s" % (
    "REJECTED" if ok else "NOT-REJECTED", sys.argv[2], rc, e.get("violations"),
    e.get("non_finite"), e.get("max_err_over_bound")))
PY
done | tee "$R/paper10-broken/summary.txt"

echo "== PyTorch FP16/BF16 channels-last for the same shapes"
PYTHONUNBUFFERED=1 python3 bench/torch_baseline.py "$R/paper10/suite.json" --modes fp16,bf16 \
  --out "$R/torch-baseline.json"
echo "torch_baseline exit $?"
