//===- Numerics.h - the error bound of a half-precision kernel --*- C++ -*-===//
//
// A half-precision kernel (ConvShape::isHalf) promises, for every output y:
//
//   |y - ref| <= unitRoundoff * errorTerms * absref + errorTerms * tiny
//
// where ref is the exact conv of the input, weights and bias as rounded to the kernel's
// type, absref the same conv of their absolute values, unitRoundoff 2^-11 (f16) or 2^-8
// (bf16) and tiny the type's subnormal step. The sidecar states it (docs/launch-abi.md), the
// CPU twin's check and spconv-bench hold every output to it (docs/design.md, "Half
// precision").
//
//===----------------------------------------------------------------------===//
#ifndef SPCONV_CONVERSION_CONVTEMPLATE_NUMERICS_H
#define SPCONV_CONVERSION_CONVTEMPLATE_NUMERICS_H

#include "spconv/Conversion/ConvTemplate/ConvShape.h"

#include "llvm/ADT/ArrayRef.h"

namespace spconv {
struct HalfNumerics {
  double unitRoundoff = 0, tiny = 0;
  int64_t errorTerms = 0;
  // The longest run of products accumulated in half precision (a channel's nonzero weights
  // in one staged chunk with promoted runs; all of them otherwise).
  int64_t longestRun = 0;
};

/// The bound of the kernel for `words` (the kernel's word shape) tiled by `tiling`, with
/// KCRS `weights` (f32 values; zeros are deleted, so they add no rounding). A run of L
/// products rounded in half precision is off by at most gamma_L = L u / (1 - L u) of its
/// absolute sum; then one rounding per split group's partial sum, and one to the output.
HalfNumerics halfNumerics(const ConvShape &words, const Tiling &tiling,
                          llvm::ArrayRef<float> weights);
} // namespace spconv

#endif
