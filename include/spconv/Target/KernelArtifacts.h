//===- KernelArtifacts.h - PTX, cubin and launch sidecar --------*- C++ -*-===//
//
// Turns a module holding spconv.conv2d ops (compiled or not yet) into the artifacts a runtime
// loads: PTX from LLVM's NVPTX backend (through gpu-module-to-binary), a cubin from ptxas,
// and the JSON launch sidecar described in docs/launch-abi.md.
//
//===----------------------------------------------------------------------===//
#ifndef SPCONV_TARGET_KERNELARTIFACTS_H
#define SPCONV_TARGET_KERNELARTIFACTS_H

#include "spconv/Conversion/ConvTemplate/ConvShape.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/JSON.h"

#include <string>

namespace spconv {
/// Where the weights meet the code.
enum class FoldLevel {
  /// Fold into a cached PTX block template (PtxKernels.h): NVPTX runs once per shape.
  PTX,
  /// spconv-compile-kernels + spconv-fold-weights in LLVM IR, then NVPTX on every compile.
  LLVM,
};

struct ArtifactOptions {
  std::string chip = "sm_90";
  std::string cacheDir;      // see spconv-compile-kernels
  bool strictIEEE = false;
  FoldLevel foldAt = FoldLevel::PTX;
  std::string ptxasPath;     // '' = $SPCONV_PTXAS, $CUDA_PATH/bin, /usr/local/cuda/bin
  std::string ptxasOptLevel = "3";
  int llvmOptLevel = 3;      // LLVM -O level of the NVVM target (opt pipeline + NVPTX)
  int64_t minBlocksPerSM = 4;  // see spconv-compile-kernels
  Tiling tiling;               // overrides; 0 fields = heuristic (see chooseTiling)
};

/// Seconds spent in each phase and how the templates were found, reported in the sidecar.
struct CompileTimes {
  /// MLIR side: lowering templates that missed the cache, reading the ones that hit, and
  /// folding the weights (in LLVM IR or in PTX).
  double lowerAndFold = 0;
  /// LLVM's NVPTX backend: on every compile when folding in LLVM IR; only for templates
  /// that missed the cache when folding in PTX.
  double nvptx = 0;
  double ptxas = 0;
  int64_t cacheHits = 0, cacheMisses = 0;
};

/// PTX of `kernels` (a gpu.module with an NVVM target) from gpu-module-to-binary.
mlir::FailureOr<std::string> serializeToPTX(mlir::gpu::GPUModuleOp kernels);

/// Compiles every uncompiled conv, folding at `options.foldAt`, and returns the PTX module
/// holding their kernels.
mlir::FailureOr<std::string> emitPTX(mlir::ModuleOp module, const ArtifactOptions &options,
                                     CompileTimes *times = nullptr);
/// Runs ptxas on `ptx`; errors carry ptxas's own output.
mlir::FailureOr<std::string> assembleCubin(mlir::Location loc, llvm::StringRef ptx,
                                           const ArtifactOptions &options,
                                           CompileTimes *times = nullptr);
/// The launch sidecar for every compiled conv of `module`.
mlir::FailureOr<llvm::json::Object> launchSidecar(mlir::ModuleOp module,
                                                  const ArtifactOptions &options,
                                                  llvm::StringRef ptxFile,
                                                  llvm::StringRef cubinFile,
                                                  const CompileTimes *times);
} // namespace spconv

#endif
