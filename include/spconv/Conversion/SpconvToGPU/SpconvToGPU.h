//===- SpconvToGPU.h - spconv.conv2d to a gpu.func template -----*- C++ -*-===//
#ifndef SPCONV_CONVERSION_SPCONVTOGPU_SPCONVTOGPU_H
#define SPCONV_CONVERSION_SPCONVTOGPU_SPCONVTOGPU_H

#include "spconv/Conversion/SpconvToAffine/SpconvToAffine.h"

namespace spconv {
/// Emits the placeholder template kernel for a conv of `shape` tiled by `tiling` (already
/// complete, see chooseTiling) at the end of `gpuModule`, named `name`: the affine kernel
/// of emitAffineGPUKernel with its nests unrolled to straight-line FMAs
/// (unrollTemplateNests). Returns null after an error at the offending op.
mlir::gpu::GPUFuncOp emitGPUKernel(const ConvShape &shape, const Tiling &tiling,
                                   mlir::gpu::GPUModuleOp gpuModule, llvm::StringRef name,
                                   mlir::Location loc,
                                   KernelForm form = KernelForm::AllChannelBlocks);
} // namespace spconv

#endif
