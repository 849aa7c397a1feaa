#!/usr/bin/env python3
"""Writes a bench case directory with a hand-made f16 or bf16 kernel (not spconv-generated).

It exists to test spconv-bench's half-precision path (the stated-bound check, the cuDNN
FP16/BF16 contenders) end to end without the compiler's half kernels. The kernel follows the
half contract of docs/launch-abi.md: input NCHW and output NKPQ in the kernel's type, bare
pointers; weights rounded to the type (round to nearest even); a sidecar whose params carry
the dtype and whose kernel entry carries "numerics". Each thread computes two adjacent output
columns of one (image, channel, row), and each nonzero weight is one fma.rn.f16x2 (bf16x2)
carrying (w, w) for the two; sums are kept in the kernel's type (accumulate = dtype). The
weights live in per-channel lists of nonzeros (a naive sparse direct convolution), so batch-64
paper10 shapes run in milliseconds. Layout as bench/make_fake_case.py:

    kernels.json kernels.ptx kernels.cubin weights.bin [bias.bin] case.json

usage: make_fake_half_case.py OUTDIR --layer NAME --shape N,C,H,W,K,R,S,stride,pad
           [--dtype f16|bf16] [--sparsity 0.9] [--bias] [--relu] [--seed 1]
           [--broken [skip|perturb]] [--perturb-factor 2] [--no-numerics]

--broken skip     the last output element is never written (spconv-bench must see its NaN);
--broken perturb  one output element (in the middle of the tensor) is moved by
                  --perturb-factor times its stated bound, u*T*absref + T*tiny, computed in
                  the kernel in f32: spconv-bench must reject it as outside the bound;
--no-numerics     the sidecar omits "numerics" (spconv-bench then takes T = C*R*S + 2).
weights.bin and bias.bin hold the f32 values before rounding, as for compiled kernels.
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
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#if %(bf16)d
typedef __nv_bfloat16 T;
typedef __nv_bfloat162 T2;
__device__ inline T fromBits(unsigned short b) { return __ushort_as_bfloat16(b); }
__device__ inline unsigned short toBits(T v) { return __bfloat16_as_ushort(v); }
__device__ inline T2 pair(T a, T b) { return __halves2bfloat162(a, b); }
__device__ inline float toF(T v) { return __bfloat162float(v); }
__device__ inline T fromF(float v) { return __float2bfloat16_rn(v); }
#else
typedef __half T;
typedef __half2 T2;
__device__ inline T fromBits(unsigned short b) { return __ushort_as_half(b); }
__device__ inline unsigned short toBits(T v) { return __half_as_ushort(v); }
__device__ inline T2 pair(T a, T b) { return __halves2half2(a, b); }
__device__ inline float toF(T v) { return __half2float(v); }
__device__ inline T fromF(float v) { return __float2half_rn(v); }
#endif

// Nonzero weights of output channel k: entries kOff[k] .. kOff[k+1] - 1; each entry's
// (c, r, s) packed as c << 10 | r << 5 | s, its value as the type's bits.
__device__ const unsigned kOff[%(K)d + 1] = {%(offsets)s};
__device__ const unsigned kIdx[%(nnz1)d] = {%(idx)s};
__device__ const unsigned short kW[%(nnz1)d] = {%(wbits)s};
__device__ const unsigned short kB[%(K)d] = {%(bbits)s};

extern "C" __global__ void spconv_conv2d_0(const unsigned short* __restrict__ in,
                                           unsigned short* __restrict__ out) {
  const int QP = (%(Q)d + 1) / 2;
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i >= %(N)dLL * %(K)d * %(P)d * QP) return;
  int j = i %% QP; long long t = i / QP;
  int p = t %% %(P)d; t /= %(P)d;
  int k = t %% %(K)d; int n = t / %(K)d;
  const int q0 = 2 * j, q1 = q0 + 1;
  const bool has1 = q1 < %(Q)d;
  const long long o0 = ((long long)(n * %(K)d + k) * %(P)d + p) * %(Q)d + q0;
  const bool perturb = %(perturb)d && (o0 == %(target)dLL || (has1 && o0 + 1 == %(target)dLL));
  T2 acc = pair(fromF(0.f), fromF(0.f));
  float exact0 = 0.f, exact1 = 0.f, abs0 = 0.f, abs1 = 0.f; // perturb only
  for (unsigned e = kOff[k]; e < kOff[k + 1]; ++e) {
    unsigned idx = kIdx[e];
    int c = idx >> 10, r = (idx >> 5) & 31, s = idx & 31;
    int h = p * %(stride)d - %(pad)d + r;
    if (h < 0 || h >= %(H)d) continue;
    const unsigned short* row = in + ((long long)(n * %(C)d + c) * %(H)d + h) * %(W)d;
    int w0 = q0 * %(stride)d - %(pad)d + s, w1 = q1 * %(stride)d - %(pad)d + s;
    T a0 = fromBits(w0 >= 0 && w0 < %(W)d ? row[w0] : 0);
    T a1 = fromBits(has1 && w1 >= 0 && w1 < %(W)d ? row[w1] : 0);
    T wv = fromBits(kW[e]);
    acc = __hfma2(pair(a0, a1), pair(wv, wv), acc);  // one weight, two outputs
    if (perturb) {
      exact0 = fmaf(toF(a0), toF(wv), exact0);
      exact1 = fmaf(toF(a1), toF(wv), exact1);
      abs0 = fmaf(fabsf(toF(a0)), fabsf(toF(wv)), abs0);
      abs1 = fmaf(fabsf(toF(a1)), fabsf(toF(wv)), abs1);
    }
  }
%(epilogue)s
  T y0 = __low2half_compat(acc), y1 = __high2half_compat(acc);
  if (perturb) {
    // Moved by perturb_factor x the stated bound of this element (its absref in f32).
    float b = fromBitsF(kB[k]);
    float v = (o0 == %(target)dLL ? exact0 : exact1) + b;
    float a = (o0 == %(target)dLL ? abs0 : abs1) + fabsf(b);
    if (%(relu)d) v = fmaxf(v, 0.f);
    v += %(factor)r * (%(uT)r * a + %(tinyT)r);
    if (o0 == %(target)dLL) y0 = fromF(v); else y1 = fromF(v);
  }
  if (!(%(skip)d && o0 == %(total)dLL - 1))
    out[o0] = toBits(y0);
  if (has1 && !(%(skip)d && o0 + 1 == %(total)dLL - 1))
    out[o0 + 1] = toBits(y1);
}
"""

# __low2half/__high2half are named per type; one spelling for the template above.
COMPAT = r"""
#if %(bf16)d
#define __low2half_compat __low2bfloat16
#define __high2half_compat __high2bfloat16
#else
#define __low2half_compat __low2half
#define __high2half_compat __high2half
#endif
__device__ inline float fromBitsF(unsigned short b) { return toF(fromBits(b)); }
"""


def f32(v):
    return struct.unpack("<f", struct.pack("<f", v))[0]


def half_bits(v, dtype):
    """Round-to-nearest-even of the f32 value v to f16/bf16: (bits, value as float)."""
    if dtype == "f16":
        b = struct.pack("<e", v)  # CPython packs binary16 with round-half-even
        return struct.unpack("<H", b)[0], struct.unpack("<e", b)[0]
    bits = struct.unpack("<I", struct.pack("<f", v))[0]
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    return bits, struct.unpack("<f", struct.pack("<I", bits << 16))[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("outdir")
    ap.add_argument("--layer", required=True)
    ap.add_argument("--shape", required=True, help="N,C,H,W,K,R,S,stride,pad")
    ap.add_argument("--dtype", choices=("f16", "bf16"), default="f16")
    ap.add_argument("--sparsity", type=float, default=0.9)
    ap.add_argument("--bias", action="store_true")
    ap.add_argument("--relu", action="store_true")
    ap.add_argument("--broken", nargs="?", const="skip", choices=("skip", "perturb"))
    ap.add_argument("--perturb-factor", type=float, default=2.0)
    ap.add_argument("--no-numerics", action="store_true")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()

    N, C, H, W, K, R, S, stride, pad = (int(v) for v in a.shape.split(","))
    if R >= 32 or S >= 32 or C >= (1 << 22):
        raise SystemExit("shape too large for the packed (c, r, s) index")
    P = (H + 2 * pad - R) // stride + 1
    Q = (W + 2 * pad - S) // stride + 1
    rng = random.Random(a.seed)
    wcount = K * C * R * S
    w = [rng.gauss(0.0, 1.0) for _ in range(wcount)]
    nzero = int(round(a.sparsity * wcount))
    for idx in sorted(range(wcount), key=lambda j: abs(w[j]))[:nzero]:
        w[idx] = 0.0
    w = [f32(v) for v in w]
    bias = [f32(rng.gauss(0.0, 1.0)) for _ in range(K)] if a.bias else []

    offsets, idx, wbits = [0], [], []
    for k in range(K):
        for c in range(C):
            for r in range(R):
                for s in range(S):
                    v = w[((k * C + c) * R + r) * S + s]
                    if v == 0.0:
                        continue
                    bits, rounded = half_bits(v, a.dtype)
                    if rounded == 0.0 or rounded != rounded or abs(rounded) == float("inf"):
                        raise SystemExit("weight %r rounds to %r in %s" % (v, rounded, a.dtype))
                    idx.append((c << 10) | (r << 5) | s)
                    wbits.append(bits)
        offsets.append(len(idx))
    bbits = [half_bits(v, a.dtype)[0] for v in bias] if a.bias else [0] * K

    u = 2.0 ** -11 if a.dtype == "f16" else 2.0 ** -8
    tiny = 2.0 ** -24 if a.dtype == "f16" else 2.0 ** -133
    terms = C * R * S + 2
    total = N * K * P * Q
    target = ((N - 1) * K + K // 2) * P * Q + (P // 2) * Q + Q // 2

    epilogue = ""
    if a.bias:
        epilogue += "  { T b = fromBits(kB[k]); acc = __hadd2(acc, pair(b, b)); }\n"
    if a.relu:
        epilogue += "  acc = __hmax2(acc, pair(fromF(0.f), fromF(0.f)));\n"
    fields = dict(
        bf16=int(a.dtype == "bf16"), N=N, C=C, H=H, W=W, K=K, P=P, Q=Q, stride=stride, pad=pad,
        offsets=",".join(map(str, offsets)), nnz1=max(len(idx), 1),
        idx=",".join(map(str, idx)) or "0", wbits=",".join(map(str, wbits)) or "0",
        bbits=",".join(map(str, bbits)), epilogue=epilogue, total=total, target=target,
        perturb=int(a.broken == "perturb"), skip=int(a.broken == "skip"), relu=int(a.relu),
        factor=float(a.perturb_factor), uT=u * terms, tinyT=terms * tiny)
    head, body = KERNEL.split("extern \"C\"", 1)
    src = head % fields + COMPAT % fields + "extern \"C\"" + body % fields

    os.makedirs(a.outdir, exist_ok=True)
    cu = os.path.join(a.outdir, "kernels.cu")
    with open(cu, "w") as f:
        f.write(src)
    nvcc = "nvcc"
    if not any(os.access(os.path.join(d, "nvcc"), os.X_OK)
               for d in os.environ.get("PATH", "").split(":")):
        nvcc = "/usr/local/cuda/bin/nvcc"
    for kind in ("ptx", "cubin"):
        subprocess.check_call([nvcc, "-arch=sm_90", "-O3", "--" + kind, cu, "-o",
                               os.path.join(a.outdir, "kernels." + kind)])
    with open(os.path.join(a.outdir, "weights.bin"), "wb") as f:
        f.write(struct.pack("<%df" % wcount, *w))
    if a.bias:
        with open(os.path.join(a.outdir, "bias.bin"), "wb") as f:
            f.write(struct.pack("<%df" % K, *bias))

    block = 256
    threads = N * K * P * ((Q + 1) // 2)
    kernel = {
        "entry": "spconv_conv2d_0",
        "grid": [(threads + block - 1) // block, 1, 1], "block": [block, 1, 1],
        "dynamic_shared_bytes": 0,
        "params": [
            {"name": "input", "role": "input", "dtype": a.dtype, "shape": [N, C, H, W]},
            {"name": "output", "role": "output", "dtype": a.dtype, "shape": [N, K, P, Q]},
        ],
        "conv": {"N": N, "C": C, "H": H, "W": W, "K": K, "R": R, "S": S, "P": P, "Q": Q,
                 "stride": [stride, stride], "padding": [pad, pad, pad, pad],
                 "dilation": [1, 1], "groups": 1,
                 "activation": "relu" if a.relu else "none", "has_bias": a.bias},
        "weights_nnz": len(idx), "weights_total": wcount,
        "tiling": {"fake": "two adjacent output columns per thread, one %sx2 FMA per nonzero "
                           "weight" % a.dtype},
    }
    if not a.no_numerics:
        kernel["numerics"] = {"dtype": a.dtype, "accumulate": a.dtype, "unit_roundoff": u,
                              "error_terms": terms}
    launch = {"format": "spconv-launch", "version": 1, "chip": "sm_90", "kernels": [kernel]}
    with open(os.path.join(a.outdir, "kernels.json"), "w") as f:
        json.dump(launch, f, indent=2)
    with open(os.path.join(a.outdir, "case.json"), "w") as f:
        json.dump({"layer": a.layer, "batch": N, "sparsity": a.sparsity, "dtype": a.dtype,
                   "compile": {"fake": True, "note": "hand-written half test kernel",
                               "broken": a.broken}}, f, indent=2)
    print("wrote %s: %s %s N=%d nnz=%d/%d%s" % (a.outdir, a.layer, a.dtype, N, len(idx), wcount,
                                              " broken=" + a.broken if a.broken else ""))


if __name__ == "__main__":
    sys.exit(main())
