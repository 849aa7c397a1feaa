//===- ImagePairs.h - the image-pair layout's index map ---------*- C++ -*-===//
//
// Where an element of a half-precision tensor stored as image pairs lies (docs/launch-abi.md,
// "layout"): images n and n + N/2 of one element share a 32-bit word. Header-only and
// dependency-free so that host code (spconv-cpu-check), CUDA code (spconv-bench's checks)
// and users packing their own tensors compute it one way.
//
//===----------------------------------------------------------------------===//
#ifndef SPCONV_RUNTIME_IMAGEPAIRS_H
#define SPCONV_RUNTIME_IMAGEPAIRS_H

#include <cstdint>

#ifdef __CUDACC__
#define SPCONV_HOST_DEVICE __host__ __device__
#else
#define SPCONV_HOST_DEVICE
#endif

namespace spconv {
namespace runtime {

/// The half index, in an image-pair buffer of `n` images (n even) of `perImage` elements
/// each, of element `e` of the same tensor in row-major NCHW order:
/// ((e's image mod n/2) * perImage + e's offset in its image) * 2 + e's image div n/2.
SPCONV_HOST_DEVICE inline int64_t imagePairsIndex(int64_t e, int64_t n, int64_t perImage) {
  int64_t image = e / perImage, half = n / 2;
  return ((image % half) * perImage + e % perImage) * 2 + image / half;
}

} // namespace runtime
} // namespace spconv

#undef SPCONV_HOST_DEVICE

#endif // SPCONV_RUNTIME_IMAGEPAIRS_H
