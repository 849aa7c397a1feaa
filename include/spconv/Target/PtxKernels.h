//===- PtxKernels.h - compiling convs by folding weights into PTX -*- C++ -*-===//
//
// The default path of spconv-translate. Per conv shape, a one-channel-block template is
// lowered and run through NVPTX once, and its PTX is cached (TemplateCache, `.ptx`
// entries). Per conv, the kernel is stamped out of that PTX with the conv's weights
// (PtxBlockTemplate), so a compile that hits the cache runs neither the MLIR lowering nor
// LLVM's backend.
//
//===----------------------------------------------------------------------===//
#ifndef SPCONV_TARGET_PTXKERNELS_H
#define SPCONV_TARGET_PTXKERNELS_H

#include "spconv/Target/KernelArtifacts.h"

#include "llvm/ADT/STLFunctionalExtras.h"

namespace spconv {
/// Name of the kernel in a block template's PTX.
constexpr llvm::StringLiteral kBlockTemplateFunc = "spconv_block_template";

/// Lowers the one-channel-block template of (shape, tiling) and runs NVPTX on it (adding the
/// time spent in NVPTX to `nvptxSeconds`).
mlir::FailureOr<std::string> buildBlockTemplatePTX(mlir::MLIRContext *ctx,
                                                   const ConvShape &shape,
                                                   const Tiling &tiling,
                                                   const ArtifactOptions &options,
                                                   double &nvptxSeconds);

/// Compiles every conv of `module` not compiled yet and returns the PTX units of one
/// kernel per conv (several units for a kernel whose code exceeds options.codeBudget). Each conv is tagged like spconv-compile-kernels tags it
/// (spconv.kernel, spconv.launch) plus spconv.fmas_kept / spconv.fmas_deleted /
/// spconv.dead_loads_dropped. Convs an earlier pass already lowered are an error: their
/// kernels are LLVM IR, which only the LLVM-level fold handles.
/// `onUnits`, when given, is called after each conv with the program so far and the index of
/// the conv's first unit, so that its units can be assembled while later convs are folded;
/// a failure stops the compile.
using UnitSink = llvm::function_ref<mlir::LogicalResult(const PtxProgram &, size_t)>;
mlir::FailureOr<PtxProgram> emitPTXFoldedInPTX(mlir::ModuleOp module,
                                                const ArtifactOptions &options,
                                                CompileTimes *times, UnitSink onUnits = {});
} // namespace spconv

#endif
