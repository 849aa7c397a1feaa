//===- KernelArtifacts.cpp - PTX through NVPTX, cubin through ptxas -------===//
#include "spconv/Target/KernelArtifacts.h"
#include "spconv/Target/PtxKernels.h"
#include "spconv/Target/PtxAssembler.h"
#include "spconv/Transforms/TemplateCache.h"
#include "spconv/Conversion/ConvTemplate/KernelInfo.h"
#include "spconv/Dialect/Spconv/IR/SpconvOps.h"
#include "spconv/Transforms/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include <chrono>
#include <cstdlib>
#include <thread>

using namespace mlir;
using namespace spconv;

namespace {
double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}
} // namespace

FailureOr<std::string> spconv::serializeToPTX(gpu::GPUModuleOp kernels) {
  MLIRContext *ctx = kernels.getContext();
  // Serialise a copy so the caller's module keeps its NVVM IR (for the sidecar and for
  // inspection).
  OwningOpRef<ModuleOp> holder = ModuleOp::create(kernels.getLoc());
  holder->getBody()->push_back(kernels->clone());
  (*holder)->setAttr(gpu::GPUDialect::getContainerModuleAttrName(), UnitAttr::get(ctx));
  PassManager pm(ctx);
  GpuModuleToBinaryPassOptions toBinary;
  toBinary.compilationTarget = "isa";
  pm.addPass(createGpuModuleToBinaryPass(toBinary));
  if (failed(pm.run(*holder)))
    return failure();
  auto binary = holder->lookupSymbol<gpu::BinaryOp>(kernels.getSymName());
  if (!binary || binary.getObjects().empty())
    return kernels.emitError("gpu-module-to-binary produced no object");
  return cast<gpu::ObjectAttr>(binary.getObjects()[0]).getObject().getValue().str();
}

/// The LLVM-level fold: spconv-compile-kernels, then NVPTX on the folded kernels.
static FailureOr<std::string> emitPTXFoldedInLLVM(ModuleOp module,
                                                  const ArtifactOptions &options,
                                                  CompileTimes *times) {
  MLIRContext *ctx = module.getContext();
  auto start = std::chrono::steady_clock::now();
  {
    PassManager pm(ctx);
    SpconvCompileKernelsOptions compile;
    compile.chip = options.chip;
    compile.cacheDir = options.cacheDir;
    compile.strictIEEE = options.strictIEEE;
    compile.optLevel = options.llvmOptLevel;
    compile.minBlocksPerSM = options.minBlocksPerSM;
    compile.blockK = options.tiling.blockK;
    compile.outputsPerThread = options.tiling.outputsPerThread;
    compile.tileP = options.tiling.tileP;
    compile.threadsQ = options.tiling.threadsQ;
    compile.chunkC = options.tiling.chunkC;
    pm.addPass(createSpconvCompileKernels(compile));
    if (failed(pm.run(module)))
      return failure();
  }
  if (times)
    times->lowerAndFold = secondsSince(start);

  auto kernels = module.lookupSymbol<gpu::GPUModuleOp>(kKernelModuleName);
  if (!kernels)
    return module.emitError("no spconv.conv2d to compile (no gpu.module @")
           << kKernelModuleName << ")";
  start = std::chrono::steady_clock::now();
  FailureOr<std::string> ptx = serializeToPTX(kernels);
  if (times)
    times->nvptx = secondsSince(start);
  return ptx;
}

FailureOr<PtxProgram> spconv::emitPTXProgram(ModuleOp module,
                                             const ArtifactOptions &options,
                                             CompileTimes *times) {
  if (options.foldAt == FoldLevel::PTX)
    return emitPTXFoldedInPTX(module, options, times);
  FailureOr<std::string> ptx = emitPTXFoldedInLLVM(module, options, times);
  if (failed(ptx))
    return failure();
  PtxProgram program;
  program.whole = std::move(*ptx);
  return program;
}

FailureOr<std::string> spconv::emitPTX(ModuleOp module, const ArtifactOptions &options,
                                       CompileTimes *times) {
  FailureOr<PtxProgram> program = emitPTXProgram(module, options, times);
  if (failed(program))
    return failure();
  return program->text();
}

/// ptxas from the option, $SPCONV_PTXAS, $CUDA_PATH/bin, $CUDA_HOME/bin, /usr/local/cuda/bin.
static std::string findPtxas(const ArtifactOptions &options) {
  if (!options.ptxasPath.empty())
    return options.ptxasPath;
  if (const char *p = std::getenv("SPCONV_PTXAS"); p && *p)
    return p;
  for (const char *var : {"CUDA_PATH", "CUDA_HOME"})
    if (const char *root = std::getenv(var); root && *root) {
      llvm::SmallString<256> path(root);
      llvm::sys::path::append(path, "bin", "ptxas");
      if (llvm::sys::fs::can_execute(path))
        return std::string(path);
    }
  return "/usr/local/cuda/bin/ptxas";
}

FailureOr<std::string> spconv::assembleCubin(Location loc, const PtxProgram &program,
                                             const ArtifactOptions &options,
                                             CompileTimes *times) {
  PtxasSettings settings;
  settings.ptxas = findPtxas(options);
  settings.chip = options.chip;
  settings.optLevel = options.ptxasOptLevel;
  settings.jobs = options.jobs ? options.jobs : std::max(1u, std::thread::hardware_concurrency());
  settings.memoryBudget = options.ptxasMemoryBudget;
  settings.progress = options.progress;
  PtxasReport report;
  llvm::Expected<std::string> cubin = [&]() -> llvm::Expected<std::string> {
    if (program.units.size() > 1) {
      std::string dir = TemplateCache::resolveDir(options.cacheDir);
      if (!dir.empty())
        settings.cacheDir = dir + "/objects";
      std::vector<PtxasJob> jobs;
      for (auto [unit, unitLoc] : llvm::zip_equal(program.units, program.unitLocations)) {
        // Refused here rather than by assembleAndLink so the error points at the conv.
        uint64_t need = estimatePtxasBytes(unit.instructions);
        if (settings.memoryBudget && need > settings.memoryBudget) {
          emitError(unitLoc) << "kernel piece " << unit.symbol << " has "
                             << unit.instructions << " PTX instructions: ptxas would need about "
                             << (need >> 20) << " MiB, over the memory budget of "
                             << (settings.memoryBudget >> 20)
                             << " MiB (--ptxas-memory-budget); lower --code-budget or --block-k";
          return llvm::createStringError(llvm::inconvertibleErrorCode(), "");
        }
        jobs.push_back({unit.label, ptxUnitModule(program.header, unit), unit.instructions,
                        unit.maxRegisters});
      }
      return assembleAndLink(jobs, settings, report);
    }
    llvm::Expected<std::string> single = assembleModule(program.text(), settings, report);
    if (!single && program.units.size() == 1)
      report.failedJob = 0;
    return single;
  }();
  if (times) {
    times->ptxas = report.seconds;
    times->ptxasUnits = report.assembled;
    times->objectCacheHits = report.cacheHits;
    times->ptxasPeakEstimate = report.peakEstimate;
  }
  if (!cubin) {
    std::string message = llvm::toString(cubin.takeError());
    if (message.empty()) // already reported at the conv
      return failure();
    if (report.failedJob)
      return emitError(program.unitLocations[*report.failedJob])
             << "kernel " << program.units[*report.failedJob].symbol << ": " << message;
    return emitError(loc) << message;
  }
  return std::move(*cubin);
}
