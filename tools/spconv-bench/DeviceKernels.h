//===- DeviceKernels.h - Helper kernels for spconv-bench --------*- C++ -*-===//
//
// Small CUDA kernels the benchmark needs around the contenders: seeded random input,
// NaN poisoning, the bias/residual/ReLU epilogue for the library baselines and the
// reference, im2col for the cuSPARSE baseline, explicit zero padding for cuDNN, and an
// on-device error reduction (outputs reach ~1 GB at batch 64, too much to copy back and
// compare on the host).
//
//===----------------------------------------------------------------------===//
#ifndef SPCONV_BENCH_DEVICEKERNELS_H
#define SPCONV_BENCH_DEVICEKERNELS_H

#include <cuda_runtime.h>

#include <cstdint>
#include <string>

namespace spconv {
namespace bench {

struct Im2colShape {
  int N, C, H, W, R, S, P, Q;
  int strideH, strideW, padTop, padLeft, dilH, dilW;
};

// x[i] ~ N(0, 1), a pure function of (seed, i): reruns see the same input.
void fillNormal(float *x, int64_t n, uint64_t seed, cudaStream_t s);
void fillNaN(float *x, int64_t n, cudaStream_t s);
// y[n][k][*] = act(y[n][k][*] + bias[k] + residual[n][k][*]); bias and residual (NKPQ, as
// y) may be null; activation is the sidecar's "none", "relu" or "relu6". The residual sits
// between the bias and the activation, where a residual kernel adds it (docs/launch-abi.md);
// the library baselines pass none (they are timed without the add).
void biasActivation(float *y, const float *bias, const float *residual, int N, int K,
                    int64_t PQ, const std::string &activation, cudaStream_t s);
// cols[n][(c*R + r)*S + s][p*Q + q] = x[n][c][p*sh - pt + r*dh][q*sw - pl + s*dw] (0 outside).
void im2col(const float *x, float *cols, const Im2colShape &sh, cudaStream_t s);
// xp[nc][h][w] = x[nc][h - top][w - left] (0 outside x), xp of NC x Hp x Wp: explicit
// zero padding for the cuDNN baselines when the padding is asymmetric.
void padInput(const float *x, float *xp, int64_t NC, int H, int W, int Hp, int Wp, int top,
              int left, cudaStream_t s);

// Reads n16 16-byte words of buf through L2 (ld.global.cg) and writes *sink only on a sum
// that no buffer of spconv-bench's holds: a pass over a buffer several times the L2 leaves
// the L2 holding it and none of what a contender read before, its code included
// (--cold-l2).
void readThroughL2(const int4 *buf, int64_t n16, int *sink, cudaStream_t s);

struct CompareResult {
  double maxAbsDiff = 0;   // max |a - ref|
  double maxAbsRef = 0;    // max |ref|
  double maxElemRel = 0;   // max |a - ref| / max(|ref|, 1e-3 * max|ref|)
  double relL2 = 0;        // ||a - ref|| / ||ref||
  uint64_t nonFinite = 0;  // NaN/Inf in a: unwritten (poisoned) or broken elements
  uint64_t refNonFinite = 0; // the same in ref: a reference that is not fully written
  // The project's pass/fail number: max|a - ref| / max(max|ref|, tiny); infinite when either
  // buffer has a non-finite element (the other numbers then cover the finite pairs only).
  double maxRel() const;
};
// Compares a against ref element by element on the device. Both must have been poisoned
// (fillNaN) before their producers ran, so that an element nobody wrote is NaN: it is then
// counted (nonFinite, refNonFinite), never compared, and fails the check; under
// compute-sanitizer's initcheck every element read has been written. Throws when ref has
// non-finite elements: nothing can be verified against such a reference.
CompareResult compare(const float *a, const float *ref, int64_t n, cudaStream_t s);

} // namespace bench
} // namespace spconv

#endif // SPCONV_BENCH_DEVICEKERNELS_H
