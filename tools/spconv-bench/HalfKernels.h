//===- HalfKernels.h - Half-precision helpers for spconv-bench --*- C++ -*-===//
//
// What spconv-bench needs around an f16 or bf16 kernel (docs/launch-abi.md, "numerics"):
// rounding the random input and the weights to the kernel's type (round to nearest even),
// NaN poisoning of half outputs, the bias/activation epilogue and layout changes for the
// half cuDNN contenders, and the element-wise check of a half output against the stated
// bound |y - ref| <= u * T * absref + T * tiny.
//
// Half data travels as raw 16-bit words (uint16_t): the host code needs no CUDA half
// headers, and one entry point serves both types.
//
//===----------------------------------------------------------------------===//
#ifndef SPCONV_BENCH_HALFKERNELS_H
#define SPCONV_BENCH_HALFKERNELS_H

#include <cuda_runtime.h>

#include <cstdint>
#include <string>

namespace spconv {
namespace bench {

enum class HalfType { F16, BF16 };

// "f16" -> F16, "bf16" -> BF16; false for anything else.
bool parseHalfType(const std::string &dtype, HalfType &t);
const char *halfTypeName(HalfType t);
// Unit roundoff (2^-11, 2^-8) and subnormal granularity (2^-24, 2^-133) of the type.
double halfUnitRoundoff(HalfType t);
double halfTiny(HalfType t);

// h[i] = rne(x[i]) in type t; when r is non-null, r[i] = (float)h[i] (r may alias x).
void roundToHalf(const float *x, uint16_t *h, float *r, int64_t n, HalfType t, cudaStream_t s);
// y[i] = |x[i]| (y may alias x).
void absolute(const float *x, float *y, int64_t n, cudaStream_t s);
// Every element a quiet NaN of type t.
void fillNaNHalf(uint16_t *y, int64_t n, HalfType t, cudaStream_t s);

// Layout of a 4-d half tensor: NCHW (dims N, C, H, W as given), NHWC (the same logical
// tensor stored channel-last) or ImagePairs (a kernel's "image_pairs" params: images n and
// n + N/2 of one element share a 32-bit word; docs/launch-abi.md; N even).
enum class HalfLayout { NCHW, NHWC, ImagePairs };

// dst (image pairs) = src (NCHW), N images of perImage elements. Used before timing.
void nchwToImagePairsHalf(const uint16_t *src, uint16_t *dst, int64_t N, int64_t perImage,
                          cudaStream_t s);

// dst (NHWC) = src (NCHW), both N x C x HW logically. Used before timing, never inside it.
void nchwToNhwcHalf(const uint16_t *src, uint16_t *dst, int64_t N, int64_t C, int64_t HW,
                    cudaStream_t s);
// xp = x zero-padded by (top, left) to Hp x Wp, in layout l (x is N x C x H x W).
void padInputHalf(const uint16_t *x, uint16_t *xp, int64_t N, int64_t C, int H, int W, int Hp,
                  int Wp, int top, int left, HalfLayout l, cudaStream_t s);
// y = act(y + bias[k]) on an N x K x PQ half output in layout l, computed in f32 and
// rounded once to type t; bias (f32) may be null; activation "none" | "relu" | "relu6".
void biasActivationHalf(uint16_t *y, const float *bias, int64_t N, int64_t K, int64_t PQ,
                        const std::string &activation, HalfLayout l, HalfType t,
                        cudaStream_t s);

// The check of one half output y (layout l, N x K x PQ) against ref and absref (f32, NKPQ).
struct HalfCheckResult {
  int64_t elements = 0;
  uint64_t violations = 0;   // elements outside the bound (non-finite ones included)
  uint64_t nonFinite = 0;    // NaN/Inf in y: unwritten (poisoned) or broken elements
  double maxErrOverBound = 0; // max |y - ref| / bound (inf when y has a non-finite element)
  int64_t worstIndex = -1;   // an NKPQ index where that maximum is reached
  double worstY = 0, worstRef = 0, worstAbsRef = 0, worstBound = 0;
  int64_t firstViolation = -1; // smallest NKPQ index outside the bound, or -1
  double maxAbsDiff = 0;     // max |y - ref| over finite y
  double maxAbsRef = 0;      // max |ref|
  double maxElemRel = 0;     // max |y - ref| / max(|ref|, 1e-3 max|ref|)
  double relL2 = 0;          // ||y - ref|| / ||ref|| over finite y
  // The f32 checker's number, max|y - ref| / max|ref| (infinite with non-finite y).
  double maxRel() const;
  bool ok() const { return violations == 0 && nonFinite == 0; }
};

struct HalfBound {
  double unitRoundoff = 0; // u
  double errorTerms = 0;   // T
  double tiny = 0;
};

HalfCheckResult checkHalf(const uint16_t *y, HalfLayout l, HalfType t, const float *ref,
                          const float *absref, int64_t N, int64_t K, int64_t PQ,
                          const HalfBound &bound, cudaStream_t s);

} // namespace bench
} // namespace spconv

#endif // SPCONV_BENCH_HALFKERNELS_H
