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
#include "spconv/Conversion/ConvTemplate/TuningTable.h"
#include "spconv/Target/PtxAssembler.h"
#include "spconv/Target/PtxBlockTemplate.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/JSON.h"

#include <memory>
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
  /// ptxas --Ofast-compile level: "0" (off), "min", "mid" or "max" (docs/compile-time.md,
  /// "ptxas fast-compile"); needs ptxasOptLevel "3".
  std::string ptxasFastCompile = "0";
  int llvmOptLevel = 3;      // LLVM -O level of the NVVM target (opt pipeline + NVPTX)
  int64_t minBlocksPerSM = 0;  // 0 = heuristic, -1 = no cap; see minBlocksPerSMFor
  // 2: blocks take their work from per-channel-block queues by SM (AssemblyOptions::smAffine);
  // 0 (heuristic) and 1: from their grid position. PTX-level fold only.
  int64_t smAffinity = 0;
  // > 1: clusters of that many blocks along the grid's x (AssemblyOptions::clusterSize);
  // 0 and 1: none. PTX-level fold only.
  int64_t clusterSize = 0;
  Tiling tiling;               // overrides; 0 fields = heuristic (see chooseTiling)
  /// SMs of the target GPU for the heuristic (TargetGPU); 0 = the tuning table's "sms",
  /// else TargetGPU::kDefaultSMs. See targetGPU.
  int64_t numSMs = 0;
  /// Measured tilings (--tuning-table): a conv with an entry takes its tiling, minBlocksPerSM
  /// and smAffinity wherever the options above leave them to the heuristic. PTX-level fold.
  std::shared_ptr<const TuningTable> tuningTable;
  /// PTX instructions one ptxas run may assemble: a kernel over it is split into pieces
  /// (docs/design.md, "Code-size budget").
  int64_t codeBudget = 16384;
  /// PTX instructions one channel block may have: a block over it makes the heuristic put
  /// its chunks in a loop or halve block-k; a block over codeBudget alone is a unit of its
  /// own. Separate from codeBudget because the two cost differently: halving block-k made
  /// ResNet-50's 3x3 convs at batch 64 1.5-2.1x slower, while packing units of 32768
  /// (many small blocks, each with its branch tables) made ptxas at batch 1 more than 2x
  /// slower (docs/tuning-log.md, "Block code budget").
  int64_t blockCodeBudget = 32768;
  /// One copy of the staging code per kernel unit for all its channel blocks, which then
  /// branch to their own FMAs at each chunk (docs/design.md, "Shared staging"); off: a
  /// whole body per channel block, as before.
  bool shareStaging = true;
  unsigned jobs = 0;            // concurrent ptxas runs (0 = the machine's cores)
  uint64_t ptxasMemoryBudget = 2048ull << 20; // bytes for the concurrent ptxas runs
  ProgressMode progress = ProgressMode::None; // ptxas units on stderr (PtxAssembler.h)
};

/// The PTX of a compile: units that ptxas can assemble one by one (the PTX-level fold), or
/// one whole module (the LLVM-level fold).
struct PtxProgram {
  std::string header;
  std::vector<PtxUnit> units;
  std::vector<mlir::Location> unitLocations; // the conv of each unit, for diagnostics
  std::string whole;
  std::string text() const { return units.empty() ? whole : ptxModule(header, units); }
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
  int64_t ptxasUnits = 0, objectCacheHits = 0;
  uint64_t ptxasPeakEstimate = 0;
  double ptxasProcessSeconds = 0;       // every ptxas process's wall time, summed
  int64_t ptxasInstructions = 0;        // PTX instructions those processes assembled
};

/// The GPU `options` tile for: --num-sms, else the tuning table's device, else the default.
TargetGPU targetGPU(const ArtifactOptions &options);

/// PTX of `kernels` (a gpu.module with an NVVM target) from gpu-module-to-binary.
mlir::FailureOr<std::string> serializeToPTX(mlir::gpu::GPUModuleOp kernels);

/// Compiles every uncompiled conv, folding at `options.foldAt`, and returns the PTX of
/// their kernels.
/// Where `module`'s weights are folded: `options.foldAt`, for f32 and half-precision convs
/// alike (docs/design.md, "Half precision in PTX").
FoldLevel effectiveFoldLevel(mlir::ModuleOp module, const ArtifactOptions &options);

mlir::FailureOr<PtxProgram> emitPTXProgram(mlir::ModuleOp module,
                                           const ArtifactOptions &options,
                                           CompileTimes *times = nullptr);
/// emitPTXProgram as one PTX module.
mlir::FailureOr<std::string> emitPTX(mlir::ModuleOp module, const ArtifactOptions &options,
                                     CompileTimes *times = nullptr);
/// The cubin of `program`: one ptxas run for a single unit or a whole module; otherwise
/// each unit assembled on its own, in parallel within the budgets, and linked by nvlink
/// (PtxAssembler.h). Errors carry ptxas's own output and the unit's conv.
mlir::FailureOr<std::string> assembleCubin(mlir::Location loc, const PtxProgram &program,
                                           const ArtifactOptions &options,
                                           CompileTimes *times = nullptr);
/// emitPTXProgram then assembleCubin, overlapped: with the PTX-level fold and several convs,
/// each conv's units go to ptxas (PtxasPool) as soon as they are stamped, while later convs
/// are lowered and folded. `program` receives the PTX; CompileTimes::ptxas is then the wall
/// time from the first unit queued to the link.
mlir::FailureOr<std::string> compileToCubin(mlir::ModuleOp module, const ArtifactOptions &options,
                                            PtxProgram &program, CompileTimes *times = nullptr);
/// The launch sidecar for every compiled conv of `module`.
mlir::FailureOr<llvm::json::Object> launchSidecar(mlir::ModuleOp module,
                                                  const ArtifactOptions &options,
                                                  llvm::StringRef ptxFile,
                                                  llvm::StringRef cubinFile,
                                                  const CompileTimes *times);
} // namespace spconv

#endif
