//===- Runtime.h - Load and launch spconv kernels (Driver API) --*- C++ -*-===//
//
// CUDA Driver API only, no MLIR/LLVM: this library runs on the GPU machine, which has
// no compiler toolchain. Everything works in the device's *primary* context, so code
// that also uses the CUDA runtime API (cuDNN, cuSPARSE, cudaMalloc) shares buffers and
// streams with it.
//
//===----------------------------------------------------------------------===//
#ifndef SPCONV_RUNTIME_RUNTIME_H
#define SPCONV_RUNTIME_RUNTIME_H

#include "spconv/Runtime/LaunchConfig.h"

#include <cuda.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace spconv {
namespace runtime {

// A failed Driver API call: what() reads "cuLaunchKernel failed: CUDA_ERROR_xxx (text)".
class CudaError : public std::runtime_error {
public:
  CudaError(CUresult code, const std::string &call);
  CUresult code() const { return code_; }

private:
  CUresult code_;
};

// Throws CudaError when `r` is not CUDA_SUCCESS.
void check(CUresult r, const char *call);
#define SPCONV_CU(expr) ::spconv::runtime::check((expr), #expr)

// Retains the primary context of one device and makes it current on this thread.
class Context {
public:
  explicit Context(int ordinal = 0);
  ~Context();
  Context(const Context &) = delete;
  Context &operator=(const Context &) = delete;

  CUdevice device() const { return dev_; }
  CUcontext get() const { return ctx_; }
  std::string deviceName() const;
  int driverVersion() const; // e.g. 13000
  int computeCapability() const; // e.g. 90

private:
  CUdevice dev_ = 0;
  CUcontext ctx_ = nullptr;
};

// Owning device allocation.
class DeviceBuffer {
public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer &&o) noexcept;
  DeviceBuffer &operator=(DeviceBuffer &&o) noexcept;
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;

  CUdeviceptr ptr() const { return ptr_; }
  size_t bytes() const { return bytes_; }
  void upload(const void *host, size_t bytes);
  void download(void *host, size_t bytes) const;

private:
  CUdeviceptr ptr_ = 0;
  size_t bytes_ = 0;
};

// A loaded PTX or cubin image. PTX is JIT-compiled by the driver; a failed JIT
// reports the driver's error log in the exception message.
class Module {
public:
  // Reads the file; the format is detected from its contents (ELF magic = cubin).
  static Module loadFile(const std::string &path);
  static Module loadImage(const std::string &image, bool isPtx);
  ~Module();
  Module(Module &&o) noexcept;
  Module &operator=(Module &&o) noexcept;
  Module(const Module &) = delete;
  Module &operator=(const Module &) = delete;

  CUmodule get() const { return mod_; }
  CUfunction function(const std::string &entry) const;

private:
  Module() = default;
  CUmodule mod_ = nullptr;
};

// One ready-to-launch kernel: its function and the sidecar's launch geometry.
class Kernel {
public:
  Kernel(const Module &module, const KernelDesc &desc);

  const KernelDesc &desc() const { return desc_; }
  CUfunction function() const { return fn_; }
  // Registers, static shared bytes, local (spill) bytes: handy for reports.
  int attribute(CUfunction_attribute attr) const;

  // Enqueues one launch; `args` are the device pointers in the order of desc().params.
  // A kernel whose sidecar tiling says sm_affine keeps its work queues in the module: two
  // launches of it must not overlap (order them in one stream or with an event; load the
  // module once per concurrent stream otherwise). docs/launch-abi.md.
  void launch(const std::vector<CUdeviceptr> &args, CUstream stream = nullptr) const;

private:
  KernelDesc desc_;
  CUfunction fn_ = nullptr;
};

} // namespace runtime
} // namespace spconv

#endif // SPCONV_RUNTIME_RUNTIME_H
