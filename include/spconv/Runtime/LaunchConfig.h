//===- LaunchConfig.h - The compiler's JSON launch sidecar ------*- C++ -*-===//
//
// Typed view of the sidecar described in docs/launch-abi.md. Parsing validates what a
// launch depends on (entry, grid, block, params) so that a malformed file fails here with
// a message naming the field, not later as a CUDA_ERROR_INVALID_VALUE.
//
//===----------------------------------------------------------------------===//
#ifndef SPCONV_RUNTIME_LAUNCHCONFIG_H
#define SPCONV_RUNTIME_LAUNCHCONFIG_H

#include "spconv/Runtime/Json.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace spconv {
namespace runtime {

struct ParamDesc {
  std::string name;
  std::string role;  // "input" | "output" (others are passed through untouched)
  std::string dtype; // "f32" | "f16" | "bf16"
  // How the tensor is stored: "nchw" (row-major in `shape`'s order), or "image_pairs" (half
  // precision: images n and n + N/2 of one element share a 32-bit word; docs/launch-abi.md).
  std::string layout = "nchw";
  std::vector<int64_t> shape;
  int64_t numElements() const;
  int64_t numBytes() const; // only f32 today: 4 bytes per element
};

struct ConvDesc {
  int64_t N = 0, C = 0, H = 0, W = 0, K = 0, R = 0, S = 0, P = 0, Q = 0;
  std::array<int64_t, 2> stride{1, 1};
  std::array<int64_t, 4> padding{0, 0, 0, 0}; // top, left, bottom, right
  std::array<int64_t, 2> dilation{1, 1};
  int64_t groups = 1;
  std::string activation = "none"; // "none" | "relu"
  bool hasBias = false;
  // K * (C / groups) * R * S: the length of a KCRS weight file.
  int64_t weightCount() const { return K * (C / groups) * R * S; }
};

struct KernelDesc {
  std::string entry;
  std::array<unsigned, 3> grid{1, 1, 1};
  std::array<unsigned, 3> block{1, 1, 1};
  unsigned dynamicSharedBytes = 0;
  std::vector<ParamDesc> params;
  bool hasConv = false;
  ConvDesc conv;
  int64_t weightsNnz = -1;   // -1 when the sidecar omits it
  int64_t weightsTotal = -1;
  // Byte alignment every tensor pointer must have: 4 where a half-precision kernel loads and
  // stores whole 32-bit words (numerics.pairing "adjacent", or a param in the "image_pairs"
  // layout), else the element size's (which any pointer to the data already has).
  unsigned pointerAlignment = 1;
  json::Value tiling;        // copied through to reports as-is
  json::Value raw;           // the whole kernel object

  // Index of the first parameter with this role, or -1.
  int findParam(const std::string &role) const;
};

struct LaunchFile {
  std::string format;
  int64_t version = 0;
  std::string chip;
  std::vector<KernelDesc> kernels;

  // The kernel with this entry; an empty name picks the first. Throws when absent.
  const KernelDesc &kernel(const std::string &entry) const;
};

LaunchFile parseLaunchFile(const json::Value &doc);
LaunchFile loadLaunchFile(const std::string &path);

} // namespace runtime
} // namespace spconv

#endif // SPCONV_RUNTIME_LAUNCHCONFIG_H
