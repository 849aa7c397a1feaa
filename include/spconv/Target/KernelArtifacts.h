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

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/JSON.h"

#include <string>

namespace spconv {
struct ArtifactOptions {
  std::string chip = "sm_90";
  std::string cacheDir;      // see spconv-compile-kernels
  bool strictIEEE = false;
  std::string ptxasPath;     // '' = $SPCONV_PTXAS, $CUDA_PATH/bin, /usr/local/cuda/bin
  std::string ptxasOptLevel = "3";
  int llvmOptLevel = 3;
  int64_t minBlocksPerSM = 4;  // see spconv-compile-kernels
  Tiling tiling;               // overrides; 0 fields = heuristic (see chooseTiling)       // LLVM -O level of the NVVM target (opt pipeline + NVPTX)
};

/// Seconds spent in each phase, reported in the sidecar.
struct CompileTimes {
  double lowerAndFold = 0, nvptx = 0, ptxas = 0;
};

/// Compiles every uncompiled conv (spconv-compile-kernels) and returns the PTX of
/// `gpu.module @spconv_kernels`.
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
