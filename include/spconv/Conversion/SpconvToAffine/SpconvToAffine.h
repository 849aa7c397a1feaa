//===- SpconvToAffine.h - spconv.conv2d to a gpu.func with affine nests -*- C++ -*-===//
#ifndef SPCONV_CONVERSION_SPCONVTOAFFINE_SPCONVTOAFFINE_H
#define SPCONV_CONVERSION_SPCONVTOAFFINE_SPCONVTOAFFINE_H

#include "spconv/Conversion/ConvTemplate/ConvShape.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"

namespace spconv {
/// What a template kernel holds.
enum class KernelForm {
  /// Every channel block's code, selected by a switch on blockIdx.y; its placeholders are
  /// the conv's global weight indices (what spconv-fold-weights folds).
  AllChannelBlocks,
  /// Only channel block 0's code, storing to the channels of the block given by blockIdx.y
  /// at run time (kBlockTemplateAttr). The PTX-level fold (Target/PtxBlockTemplate.h)
  /// stamps one copy of its PTX per channel block with that block's weights.
  OneChannelBlock,
};

/// Emits the template kernel for a conv of `shape` tiled by `tiling` (already complete, see
/// chooseTiling) at the end of `gpuModule`, named `name`, with the FMAs of each staged chunk
/// as an affine nest (ConvTemplateEmitter::emitChunkNest) that unrollTemplateNests turns
/// into straight-line code.
mlir::gpu::GPUFuncOp emitAffineGPUKernel(const ConvShape &shape, const Tiling &tiling,
                                         mlir::gpu::GPUModuleOp gpuModule,
                                         llvm::StringRef name, mlir::Location loc,
                                         KernelForm form = KernelForm::AllChannelBlocks);
/// Returns the module's `gpu.module @spconv_kernels`, creating it (and marking `module` as a
/// GPU container) if needed.
mlir::gpu::GPUModuleOp getOrCreateKernelModule(mlir::ModuleOp module);
/// Lowers every conv of `module` not yet compiled to a template kernel (tiling `requested`,
/// zeros picked by the heuristic for `gpu`), tagging the conv with it; `unroll` runs
/// unrollTemplateNests on each kernel (convert-spconv-to-gpu) or leaves the nests
/// (convert-spconv-to-affine).
mlir::LogicalResult lowerConvsToGPU(mlir::ModuleOp module, const Tiling &requested,
                                    const TargetGPU &gpu, bool unroll);
} // namespace spconv

#endif
