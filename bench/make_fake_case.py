#!/usr/bin/env python3
"""Writes a bench case directory with a hand-made (not spconv-generated) kernel.

It exists to test the runtime and spconv-bench end to end without the compiler: a naive
direct convolution, one thread per output, with the pruned weights baked into the module
as a constant array. Layout follows docs/launch-abi.md and bench/run_device.sh:

    kernels.json kernels.ptx kernels.cubin weights.bin [bias.bin] case.json

usage: make_fake_case.py OUTDIR --layer NAME --shape N,C,H,W,K,R,S,stride,pad
                         [--sparsity 0.9] [--bias] [--relu] [--broken] [--seed 1]
--broken leaves the last output element unwritten (to test the failure path).
Needs nvcc (CUDA 13) on PATH or at /usr/local/cuda/bin. Python standard library only.
"""
import argparse
import json
import os
import random
import struct
import subprocess
import sys

KERNEL = r"""
__device__ const float kW[%(wcount)d] = {%(weights)s};
%(bias_decl)s
extern "C" __global__ void spconv_conv2d_0(const float* __restrict__ in, float* __restrict__ out) {
  const long long total = %(total)dLL;
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i >= total %(broken)s) return;
  int q = i %% %(Q)d; long long t = i / %(Q)d;
  int p = t %% %(P)d; t /= %(P)d;
  int k = t %% %(K)d; int n = t / %(K)d;
  float acc = 0.f;
  for (int c = 0; c < %(C)d; ++c)
    for (int r = 0; r < %(R)d; ++r) {
      int h = p * %(stride)d - %(pad)d + r;
      if (h < 0 || h >= %(H)d) continue;
      for (int s = 0; s < %(S)d; ++s) {
        int w = q * %(stride)d - %(pad)d + s;
        if (w < 0 || w >= %(W)d) continue;
        acc = fmaf(in[((n * %(C)d + c) * %(H)d + h) * %(W)d + w],
                   kW[((k * %(C)d + c) * %(R)d + r) * %(S)d + s], acc);
      }
    }
  %(epilogue)s
  out[i] = acc;
}
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("outdir")
    ap.add_argument("--layer", required=True)
    ap.add_argument("--shape", required=True, help="N,C,H,W,K,R,S,stride,pad")
    ap.add_argument("--sparsity", type=float, default=0.9)
    ap.add_argument("--bias", action="store_true")
    ap.add_argument("--relu", action="store_true")
    ap.add_argument("--broken", action="store_true")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()

    N, C, H, W, K, R, S, stride, pad = (int(v) for v in a.shape.split(","))
    P = (H + 2 * pad - R) // stride + 1
    Q = (W + 2 * pad - S) // stride + 1
    rng = random.Random(a.seed)
    wcount = K * C * R * S
    w = [rng.gauss(0.0, 1.0) for _ in range(wcount)]
    # Unstructured magnitude pruning: zero the smallest |w|.
    nzero = int(round(a.sparsity * wcount))
    for idx in sorted(range(wcount), key=lambda j: abs(w[j]))[:nzero]:
        w[idx] = 0.0
    w = [struct.unpack("<f", struct.pack("<f", v))[0] for v in w]  # round to f32
    bias = [rng.gauss(0.0, 1.0) for _ in range(K)] if a.bias else []
    bias = [struct.unpack("<f", struct.pack("<f", v))[0] for v in bias]

    total = N * K * P * Q
    epilogue = ""
    if a.bias:
        epilogue += "acc += kB[k]; "
    if a.relu:
        epilogue += "acc = fmaxf(acc, 0.f);"
    src = KERNEL % dict(
        wcount=wcount, weights=",".join("%.9e" % v for v in w),
        bias_decl=("__device__ const float kB[%d] = {%s};" % (K, ",".join("%.9e" % v for v in bias)))
        if a.bias else "",
        total=total, broken="|| i == total - 1" if a.broken else "",
        N=N, C=C, H=H, W=W, K=K, R=R, S=S, P=P, Q=Q, stride=stride, pad=pad, epilogue=epilogue)

    os.makedirs(a.outdir, exist_ok=True)
    cu = os.path.join(a.outdir, "kernels.cu")
    with open(cu, "w") as f:
        f.write(src)
    nvcc = "nvcc"
    if not any(os.access(os.path.join(d, "nvcc"), os.X_OK) for d in os.environ.get("PATH", "").split(":")):
        nvcc = "/usr/local/cuda/bin/nvcc"
    for kind in ("ptx", "cubin"):
        subprocess.check_call([nvcc, "-arch=sm_90", "-O3", "--" + kind, cu, "-o",
                               os.path.join(a.outdir, "kernels." + kind)])
    with open(os.path.join(a.outdir, "weights.bin"), "wb") as f:
        f.write(struct.pack("<%df" % wcount, *w))
    if a.bias:
        with open(os.path.join(a.outdir, "bias.bin"), "wb") as f:
            f.write(struct.pack("<%df" % K, *bias))

    nnz = sum(1 for v in w if v != 0.0)
    block = 256
    launch = {
        "format": "spconv-launch", "version": 1, "chip": "sm_90",
        "kernels": [{
            "entry": "spconv_conv2d_0",
            "grid": [(total + block - 1) // block, 1, 1], "block": [block, 1, 1],
            "dynamic_shared_bytes": 0,
            "params": [
                {"name": "input", "role": "input", "dtype": "f32", "shape": [N, C, H, W]},
                {"name": "output", "role": "output", "dtype": "f32", "shape": [N, K, P, Q]},
            ],
            "conv": {"N": N, "C": C, "H": H, "W": W, "K": K, "R": R, "S": S, "P": P, "Q": Q,
                     "stride": [stride, stride], "padding": [pad, pad, pad, pad],
                     "dilation": [1, 1], "groups": 1,
                     "activation": "relu" if a.relu else "none", "has_bias": a.bias},
            "weights_nnz": nnz, "weights_total": wcount,
            "tiling": {"fake": "one thread per output"},
        }],
    }
    with open(os.path.join(a.outdir, "kernels.json"), "w") as f:
        json.dump(launch, f, indent=2)
    with open(os.path.join(a.outdir, "case.json"), "w") as f:
        json.dump({"layer": a.layer, "batch": N, "sparsity": a.sparsity,
                   "compile": {"fake": True, "note": "hand-written test kernel"}}, f, indent=2)
    print("wrote %s: %s N=%d nnz=%d/%d" % (a.outdir, a.layer, N, nnz, wcount))


if __name__ == "__main__":
    sys.exit(main())
