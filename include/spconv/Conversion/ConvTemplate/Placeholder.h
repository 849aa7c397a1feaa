//===- Placeholder.h - placeholder weight encoding --------------*- C++ -*-===//
//
// A template is lowered with placeholder weights instead of real ones, so the lowered IR
// depends only on shape, tiling and target. A placeholder is an f32 whose bits encode the
// weight's flat KCRS index: nonzero, pairwise distinct, normal (no denormal flushing or NaN
// canonicalisation can touch it) and invertible. Weights use [2, 3), the lower half of the
// binade [2, 4), and biases [4, 6), so the two never collide and no placeholder is 1.0 (which
// LLVM could fold away). The upper halves stay free for the template's own constants: 6.0,
// the ReLU6 clamp, is bias binade mantissa 0x400000 and must not decode as a placeholder.
//
//===----------------------------------------------------------------------===//
#ifndef SPCONV_CONVERSION_CONVTEMPLATE_PLACEHOLDER_H
#define SPCONV_CONVERSION_CONVTEMPLATE_PLACEHOLDER_H

#include <cstdint>
#include <cstring>
#include <optional>

namespace spconv::placeholder {
constexpr uint32_t kWeightBits = 0x40000000u; // 2.0f
constexpr uint32_t kBiasBits = 0x40800000u;   // 4.0f
constexpr uint32_t kExponentMask = 0xFF800000u;
constexpr uint32_t kMantissaMask = 0x007FFFFFu;
/// Mantissas from here up are ordinary constants (3.x, 6.x, 7.x), not placeholders.
constexpr uint32_t kMantissaLimit = 0x00400000u;
/// Index i is stored as i + 1 so that no placeholder is a power of two.
constexpr int64_t kMaxIndex = (int64_t)kMantissaLimit - 2;

inline float fromBits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}
inline uint32_t toBits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}
inline float weight(int64_t index) { return fromBits(kWeightBits | uint32_t(index + 1)); }
inline float bias(int64_t index) { return fromBits(kBiasBits | uint32_t(index + 1)); }

inline std::optional<int64_t> decode(float f, uint32_t binade) {
  uint32_t b = toBits(f);
  if ((b & kExponentMask) != binade || (b & kMantissaMask) == 0 ||
      (b & kMantissaMask) >= kMantissaLimit)
    return std::nullopt;
  return int64_t(b & kMantissaMask) - 1;
}
inline std::optional<int64_t> decodeWeight(float f) { return decode(f, kWeightBits); }
inline std::optional<int64_t> decodeBias(float f) { return decode(f, kBiasBits); }
} // namespace spconv::placeholder

#endif
