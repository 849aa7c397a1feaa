//===- SpconvToGPU.h - spconv.conv2d to a gpu.func template -----*- C++ -*-===//
#ifndef SPCONV_CONVERSION_SPCONVTOGPU_SPCONVTOGPU_H
#define SPCONV_CONVERSION_SPCONVTOGPU_SPCONVTOGPU_H

#include "spconv/Conversion/ConvTemplate/ConvShape.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

namespace spconv {
/// Emits the placeholder template kernel for a conv of `shape` tiled by `tiling` (already
/// complete, see chooseTiling) at the end of `gpuModule`, named `name`.
mlir::gpu::GPUFuncOp emitGPUKernel(const ConvShape &shape, const Tiling &tiling,
                                   mlir::gpu::GPUModuleOp gpuModule, llvm::StringRef name,
                                   mlir::Location loc);
/// Returns the module's `gpu.module @spconv_kernels`, creating it (and marking `module` as a
/// GPU container) if needed.
mlir::gpu::GPUModuleOp getOrCreateKernelModule(mlir::ModuleOp module);
} // namespace spconv

#endif
