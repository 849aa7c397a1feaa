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
#include "spconv/Dialect/Spconv/IR/SpconvOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/SmallVector.h"

namespace spconv {
class Conv2DOp;
/// On a conv op: SymbolRefAttr of its kernel.
constexpr llvm::StringLiteral kKernelAttr = "spconv.kernel";
/// On a conv op: DictionaryAttr {grid, block, shared_bytes, tiling, ...} (docs/launch-abi.md).
constexpr llvm::StringLiteral kLaunchAttr = "spconv.launch";
/// On a symbol table: DictionaryAttr {kernel name -> {weights, bias?}}.
constexpr llvm::StringLiteral kWeightsAttr = "spconv.weights";
/// On a kernel: it still holds placeholder weights (removed once folded).
constexpr llvm::StringLiteral kTemplateAttr = "spconv.template";
/// On a kernel: a one-channel-block template (KernelForm::OneChannelBlock), folded only at
/// the PTX level, never by spconv-fold-weights.
constexpr llvm::StringLiteral kBlockTemplateAttr = "spconv.block_template";
/// Name of the gpu.module that holds every kernel of a module.
constexpr llvm::StringLiteral kKernelModuleName = "spconv_kernels";

/// The conv's launch attribute: grid, block, shared bytes, tiling, the blocks per SM
/// ptxas was asked to fit (`min_blocks_per_sm`, when `minBlocksPerSM` > 0), and whether the
/// blocks take their work from queues by SM (`sm_affine`, a unit attribute, when set).
mlir::DictionaryAttr makeLaunchAttr(mlir::MLIRContext *ctx, const ConvShape &shape,
                                    const Tiling &tiling, int64_t minBlocksPerSM = 0,
                                    bool smAffine = false);
/// Records that `kernel` in `symbolTable` computes `op`, whose weights it must get folded.
void addWeightsEntry(mlir::Operation *symbolTable, llvm::StringRef kernel, Conv2DOp op);
/// The convs under `root` that no lowering has tagged with a kernel yet, in walk order.
llvm::SmallVector<Conv2DOp> collectUncompiledConvs(mlir::Operation *root);
/// The next free `spconv_conv2d_<i>` in `symbols`, starting the search at `next`.
std::string nextKernelName(mlir::SymbolTable &symbols, int64_t &next);
/// Reads the tiling back from a launch attribute.
Tiling tilingFromLaunchAttr(mlir::DictionaryAttr launch);
} // namespace spconv

#endif
