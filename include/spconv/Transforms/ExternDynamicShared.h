//===- ExternDynamicShared.h - dynamic shared memory as an extern -*- C++ -*-===//
//
// convert-gpu-to-nvvm lowers gpu.dynamic_shared_memory to an internal zero-length global
// in the shared address space. NVPTX demotes an internal global that one function uses into
// that function, as a one-byte static `.shared` variable: a kernel that addresses past it
// runs into the dynamic region by accident of placement. Made external, the same global is
// what NVPTX declares as the launch's dynamic shared memory:
// `.extern .shared .align 16 .b8 NAME[];` (docs/design.md, "Dynamic shared memory").
//
//===----------------------------------------------------------------------===//
#ifndef SPCONV_TRANSFORMS_EXTERNDYNAMICSHARED_H
#define SPCONV_TRANSFORMS_EXTERNDYNAMICSHARED_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

namespace spconv {
/// Makes every zero-length shared-memory global of `gpuModule` (what convert-gpu-to-nvvm
/// lowers gpu.dynamic_shared_memory to) external; renames it `<name>_dynamic_shared` where
/// `name` is not empty (the PTX-level fold renames what carries the template's name, so two
/// kernels of one module declare two names). Returns how many it changed.
int64_t declareDynamicSharedExtern(mlir::gpu::GPUModuleOp gpuModule, llvm::StringRef name = "");
} // namespace spconv

#endif
