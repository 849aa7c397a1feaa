//===- CudaCheck.h - Error checks for the CUDA runtime and libraries -*- C++ -*-===//
//
// Same contract as spconv::runtime::check for the Driver API: a failed call throws,
// and the message names the call and the library's own error name.
//
//===----------------------------------------------------------------------===//
#ifndef SPCONV_BENCH_CUDACHECK_H
#define SPCONV_BENCH_CUDACHECK_H

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace spconv {
namespace bench {

inline void cudartCheck(cudaError_t e, const char *call) {
  if (e != cudaSuccess)
    throw std::runtime_error(std::string(call) + " failed: " + cudaGetErrorName(e) + " (" +
                             cudaGetErrorString(e) + ")");
}

} // namespace bench
} // namespace spconv

#define CUDART_CHECK(expr) ::spconv::bench::cudartCheck((expr), #expr)

#endif // SPCONV_BENCH_CUDACHECK_H
