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

/// Half precision (f16x2 / bf16x2 kernels): a placeholder is one 32-bit word, a pair of
/// halves (lo, hi) that one paired FMA carries for its two outputs; the real weight w becomes
/// (w, w). The index is split over both halves, 14 bits each, stored as payload + 0x400, so
/// that either half, read as an f16, is normal (exponent field 1..16) and either read as a
/// bf16 is a normal number too: no flush of subnormals or NaN canonicalisation can touch
/// it. The hi half of a weight is below 0x3C00 (1.0 in f16) and biases set its sign bit,
/// so the template's own constants, (0, 0), (6, 6) or any (1, 1), never decode.
constexpr uint32_t kHalfPayloadBits = 14;
constexpr uint32_t kHalfPayloadBase = 0x400;
constexpr uint32_t kHalfBiasSign = 0x8000;
/// hi payloads stay under 0x3C00 - 0x400.
constexpr int64_t kHalfMaxIndex = (int64_t(0x3C00 - kHalfPayloadBase) << kHalfPayloadBits) - 1;

inline uint32_t halfWord(int64_t index, bool isBias) {
  uint32_t lo = uint32_t(index & ((1 << kHalfPayloadBits) - 1)) + kHalfPayloadBase;
  uint32_t hi = uint32_t(index >> kHalfPayloadBits) + kHalfPayloadBase;
  if (isBias)
    hi |= kHalfBiasSign;
  return hi << 16 | lo;
}
inline uint32_t halfWeightWord(int64_t index) { return halfWord(index, false); }
inline uint32_t halfBiasWord(int64_t index) { return halfWord(index, true); }

/// The index a placeholder word encodes, and whether it is a bias.
struct HalfPlaceholder {
  int64_t index;
  bool isBias;
};
inline std::optional<HalfPlaceholder> decodeHalfWord(uint32_t word) {
  uint32_t lo = word & 0xFFFF, hi = word >> 16;
  bool isBias = hi & kHalfBiasSign;
  hi &= ~kHalfBiasSign;
  if ((lo & 0x8000) || lo < kHalfPayloadBase ||
      lo >= kHalfPayloadBase + (1u << kHalfPayloadBits) || hi < kHalfPayloadBase ||
      hi >= 0x3C00)
    return std::nullopt;
  return HalfPlaceholder{int64_t(hi - kHalfPayloadBase) << kHalfPayloadBits |
                             int64_t(lo - kHalfPayloadBase),
                         isBias};
}
} // namespace spconv::placeholder

#endif
