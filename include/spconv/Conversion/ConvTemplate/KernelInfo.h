//===- KernelInfo.h - attributes linking convs, kernels and weights -*- C++ -*-===//
//
// A lowered conv op is tagged with the kernel that computes it and how to launch it; the
// symbol table holding the kernels carries, per kernel, the real weights that
// spconv-fold-weights folds in. Templates themselves never carry weights.
//
//===----------------------------------------------------------------------===//
#ifndef SPCONV_CONVERSION_CONVTEMPLATE_KERNELINFO_H
#define SPCONV_CONVERSION_CONVTEMPLATE_KERNELINFO_H

#include "spconv/Conversion/ConvTemplate/ConvShape.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Operation.h"

namespace spconv {
/// On a conv op: SymbolRefAttr of its kernel.
constexpr llvm::StringLiteral kKernelAttr = "spconv.kernel";
/// On a conv op: DictionaryAttr {grid, block, shared_bytes, tiling, ...} (docs/launch-abi.md).
constexpr llvm::StringLiteral kLaunchAttr = "spconv.launch";
/// On a symbol table: DictionaryAttr {kernel name -> {weights, bias?}}.
constexpr llvm::StringLiteral kWeightsAttr = "spconv.weights";
/// Name of the gpu.module that holds every kernel of a module.
constexpr llvm::StringLiteral kKernelModuleName = "spconv_kernels";

mlir::DictionaryAttr makeLaunchAttr(mlir::MLIRContext *ctx, const ConvShape &shape,
                                    const Tiling &tiling);
/// Records that `kernel` in `symbolTable` computes `op`, whose weights it must get folded.
void addWeightsEntry(mlir::Operation *symbolTable, llvm::StringRef kernel, class Conv2DOp op);
/// Reads the tiling back from a launch attribute.
Tiling tilingFromLaunchAttr(mlir::DictionaryAttr launch);
} // namespace spconv

#endif
