//===- BuildTemplate.h - lowering a template to NVVM ------------*- C++ -*-===//
//
// Shared by the two folds: spconv-compile-kernels (fold in LLVM IR) lowers an
// all-channel-block template; the PTX-level fold (Target/PtxKernels) lowers a
// one-channel-block template and runs NVPTX on it once per shape.
//
//===----------------------------------------------------------------------===//
#ifndef SPCONV_TRANSFORMS_BUILDTEMPLATE_H
#define SPCONV_TRANSFORMS_BUILDTEMPLATE_H

#include "spconv/Conversion/ConvTemplate/ConvShape.h"
#include "spconv/Conversion/SpconvToGPU/SpconvToGPU.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <string>

namespace spconv {
/// The cache key of a template: what it is (`kind`), the template version, the LLVM
/// version, the target chip, shape and tiling, and any further setting it depends on.
std::string templateKey(llvm::StringRef kind, const ConvShape &shape, const Tiling &tiling,
                        llvm::StringRef chip, llvm::StringRef extra = "");

/// A fresh module holding `gpu.module @spconv_kernels` with the template kernel `funcName`
/// of `form`, lowered to NVVM-dialect LLVM IR (scf-to-cf, gpu-to-nvvm with 32-bit indices
/// and bare pointers). Null on failure (diagnostics go to the context).
mlir::OwningOpRef<mlir::ModuleOp> buildNVVMTemplate(mlir::MLIRContext *ctx,
                                                    const ConvShape &shape,
                                                    const Tiling &tiling, KernelForm form,
                                                    llvm::StringRef funcName,
                                                    mlir::Location loc);

} // namespace spconv

#endif
