//===- SpconvToCPU.h - spconv.conv2d to a serial host template --*- C++ -*-===//
#ifndef SPCONV_CONVERSION_SPCONVTOCPU_SPCONVTOCPU_H
#define SPCONV_CONVERSION_SPCONVTOCPU_SPCONVTOCPU_H

#include "spconv/Conversion/ConvTemplate/ConvShape.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace spconv {
/// Emits `func.func @name(%input: memref<NCHW>, %output: memref<NKPQ>)` running the GPU
/// template's blocks, threads and barrier-separated phases one after another. Its FMAs are
/// unrolled (unrollTemplateNests) unless `unroll` is false. Returns null after an error at
/// the offending op.
mlir::func::FuncOp emitCPUKernel(const ConvShape &shape, const Tiling &tiling,
                                 mlir::ModuleOp module, llvm::StringRef name,
                                 mlir::Location loc, bool unroll = true);
} // namespace spconv

#endif
