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
#include "llvm/ADT/MapVector.h"
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

TargetGPU spconv::targetGPU(const ArtifactOptions &options) {
  return TargetGPU::fromRequest(options.numSMs,
                                options.tuningTable ? options.tuningTable->numSMs() : 0);
}

/// The LLVM-level fold: spconv-compile-kernels, then NVPTX on the folded kernels.
static FailureOr<std::string> emitPTXFoldedInLLVM(ModuleOp module,
                                                  const ArtifactOptions &options,
                                                  CompileTimes *times) {
  MLIRContext *ctx = module.getContext();
  if (options.smAffinity == 2)
    return module.emitError("--sm-affinity=2 needs the PTX-level fold (--fold-at=ptx): only "
                            "it builds the work queues");
  if (options.clusterSize > 1)
    return module.emitError("--cluster-size needs the PTX-level fold (--fold-at=ptx): only "
                            "it writes the kernel's entry directives");
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
    compile.splitC = options.tiling.splitC;
    compile.chunkLoop = options.tiling.chunkLoop;
    compile.imagesPerBlock = options.tiling.imagesPerBlock;
    compile.blockOrder = options.tiling.blockOrder;
    compile.asyncStaging = options.tiling.asyncStaging;
    compile.columnOrder = options.tiling.columnOrder;
    compile.directInputs = options.tiling.directInputs;
    compile.channelVector = options.tiling.channelVector;
    compile.loadAhead = options.tiling.loadAhead;
    compile.dynamicShared = options.tiling.dynamicShared;
    compile.clusterSplit = options.tiling.clusterSplit;
    compile.numSMs = options.numSMs;
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

FoldLevel spconv::effectiveFoldLevel(ModuleOp, const ArtifactOptions &options) {
  // Every conv, f32 or half precision, folds where the options say.
  return options.foldAt;
}

FailureOr<PtxProgram> spconv::emitPTXProgram(ModuleOp module,
                                             const ArtifactOptions &options,
                                             CompileTimes *times) {
  if (effectiveFoldLevel(module, options) == FoldLevel::PTX)
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

/// cuobjdump for the check of spilled objects (SassSpillCheck.h): $SPCONV_CUOBJDUMP ('none':
/// no check), beside ptxas, on PATH; '' where there is none.
static std::string findCuobjdump(StringRef ptxas) {
  if (const char *p = std::getenv("SPCONV_CUOBJDUMP"); p && *p)
    return StringRef(p) == "none" ? "" : p;
  llvm::SmallString<256> beside(llvm::sys::path::parent_path(ptxas));
  llvm::sys::path::append(beside, "cuobjdump");
  if (llvm::sys::fs::can_execute(beside))
    return std::string(beside);
  if (llvm::ErrorOr<std::string> found = llvm::sys::findProgramByName("cuobjdump"))
    return *found;
  return "";
}

static PtxasSettings ptxasSettingsFor(const ArtifactOptions &options) {
  PtxasSettings settings;
  settings.ptxas = findPtxas(options);
  settings.cuobjdump = findCuobjdump(settings.ptxas);
  settings.chip = options.chip;
  settings.optLevel = options.ptxasOptLevel;
  settings.fastCompile = options.ptxasFastCompile;
  settings.jobs = options.jobs ? options.jobs : std::max(1u, std::thread::hardware_concurrency());
  settings.memoryBudget = options.ptxasMemoryBudget;
  settings.progress = options.progress;
  if (std::string dir = TemplateCache::resolveDir(options.cacheDir); !dir.empty())
    settings.cacheDir = dir + "/objects";
  return settings;
}

/// ptxas's optimisation flags, checked before anything is lowered: ptxas itself refuses
/// --Ofast-compile next to an explicit -O1 to -O3, after the whole lowering.
static LogicalResult checkPtxasFlags(Location loc, const ArtifactOptions &options) {
  StringRef level = options.ptxasFastCompile;
  if (!llvm::is_contained({"0", "min", "mid", "max"}, level))
    return emitError(loc) << "ptxas fast-compile level must be 0, min, mid or max, got '"
                          << level << "'";
  if (level != "0" && options.ptxasOptLevel != "3")
    return emitError(loc) << "--ptxas-fast-compile=" << level
                          << " replaces ptxas's -O level and needs --ptxas-opt-level=3, got "
                          << options.ptxasOptLevel;
  return success();
}

/// Refused here rather than by the assembler so that the error points at the conv.
static LogicalResult checkUnitBudget(const PtxUnit &unit, Location loc,
                                     const PtxasSettings &settings) {
  uint64_t need = estimatePtxasBytes(unit.instructions);
  if (!settings.memoryBudget || need <= settings.memoryBudget)
    return success();
  return emitError(loc) << "kernel piece " << unit.symbol << " has " << unit.instructions
                        << " PTX instructions: ptxas would need about " << (need >> 20)
                        << " MiB, over the memory budget of " << (settings.memoryBudget >> 20)
                        << " MiB (--ptxas-memory-budget); lower --code-budget or --block-k";
}

static PtxasJob jobFor(const PtxProgram &program, const PtxUnit &unit) {
  return {unit.label, ptxUnitModule(program.header, unit), unit.instructions,
          unit.maxRegisters};
}

static void recordAssembly(const PtxasReport &report, CompileTimes *times) {
  if (!times)
    return;
  times->ptxas = report.seconds;
  times->ptxasUnits = report.assembled;
  times->objectCacheHits = report.cacheHits;
  times->ptxasPeakEstimate = report.peakEstimate;
  times->ptxasProcessSeconds = report.processSeconds;
  times->ptxasInstructions = report.instructionsAssembled;
}

/// One warning per kernel whose registers ptxas spilled to local memory, at its conv. A
/// spilled straight-line kernel stores and reloads values in its FMA stream: the FP16
/// direct-input 1x1 kernels at the 128-register cap spilled 160-552 bytes a thread in
/// ResNet-50 at batch 64, which cost 0-6% on the heuristic's tilings and 1.42x on a tuned one
/// (docs/design.md, "Things LLVM and ptxas do to straight-line code"). A kernel in pieces
/// has one ptxas function per piece; the warning counts them and gives the largest spill,
/// and says where a spilled object's SASS could not be checked (PtxasSettings::cuobjdump).
static void warnAboutSpills(Location loc, const PtxProgram &program,
                            const PtxasReport &report) {
  struct KernelSpills {
    Location at;
    int64_t functions = 0, storeBytes = 0, loadBytes = 0;
  };
  llvm::MapVector<StringRef, KernelSpills> kernels;
  for (const PtxasSpill &spill : report.spills) {
    bool known = spill.job < program.units.size() && spill.job < program.unitLocations.size();
    StringRef kernel = known ? kernelOfSymbol(program.units[spill.job].symbol) : StringRef();
    KernelSpills &k =
        kernels.try_emplace(kernel, KernelSpills{known ? program.unitLocations[spill.job] : loc})
            .first->second;
    ++k.functions;
    k.storeBytes = std::max(k.storeBytes, spill.storeBytes);
    k.loadBytes = std::max(k.loadBytes, spill.loadBytes);
  }
  for (auto &[kernel, k] : kernels) {
    InFlightDiagnostic diag = emitWarning(k.at);
    if (!kernel.empty())
      diag << "kernel " << kernel << ": ";
    diag << "ptxas spilled registers to local memory in " << k.functions
         << (k.functions == 1 ? " function" : " functions") << " (up to " << k.storeBytes
         << " bytes stored and " << k.loadBytes
         << " loaded a thread); a smaller --block-k or a smaller --min-blocks-per-sm leaves "
            "each thread more registers";
    if (!report.sassUnchecked.empty())
      diag << "; its SASS was not checked for partial spill reloads (a ptxas 13.0 "
              "miscompile, docs/tuning-log.md): "
           << report.sassUnchecked;
  }
}

/// An assembler error, at the conv of the unit that failed when there is one.
static LogicalResult reportAssemblyError(Location loc, const PtxProgram &program,
                                         const PtxasReport &report, llvm::Error err) {
  std::string message = llvm::toString(std::move(err));
  if (report.failedJob && *report.failedJob < program.units.size())
    return emitError(program.unitLocations[*report.failedJob])
           << "kernel " << program.units[*report.failedJob].symbol << ": " << message;
  return emitError(loc) << message;
}

FailureOr<std::string> spconv::assembleCubin(Location loc, const PtxProgram &program,
                                             const ArtifactOptions &options,
                                             CompileTimes *times) {
  if (failed(checkPtxasFlags(loc, options)))
    return failure();
  PtxasSettings settings = ptxasSettingsFor(options);
  PtxasReport report;
  llvm::Expected<std::string> cubin = [&]() -> llvm::Expected<std::string> {
    if (program.units.size() > 1) {
      std::vector<PtxasJob> jobs;
      for (auto [unit, unitLoc] : llvm::zip_equal(program.units, program.unitLocations)) {
        if (failed(checkUnitBudget(unit, unitLoc, settings)))
          return llvm::createStringError(llvm::inconvertibleErrorCode(), "");
        jobs.push_back(jobFor(program, unit));
      }
      return assembleAndLink(std::move(jobs), settings, report);
    }
    settings.cacheDir.clear(); // one whole module: no object to cache
    llvm::Expected<std::string> single = assembleModule(program.text(), settings, report);
    if (!single && program.units.size() == 1)
      report.failedJob = 0;
    return single;
  }();
  recordAssembly(report, times);
  if (!cubin) {
    std::string message = llvm::toString(cubin.takeError());
    if (message.empty()) // already reported at the conv
      return failure();
    return reportAssemblyError(loc, program, report,
                               llvm::createStringError(llvm::inconvertibleErrorCode(), message));
  }
  warnAboutSpills(loc, program, report);
  return std::move(*cubin);
}

FailureOr<std::string> spconv::compileToCubin(ModuleOp module, const ArtifactOptions &options,
                                              PtxProgram &program, CompileTimes *times) {
  if (failed(checkPtxasFlags(module.getLoc(), options)))
    return failure();
  // One conv (usually one ptxas run, no linking) or the LLVM-level fold (one whole module):
  // nothing to overlap.
  if (effectiveFoldLevel(module, options) != FoldLevel::PTX ||
      collectUncompiledConvs(module).size() < 2) {
    FailureOr<PtxProgram> built = emitPTXProgram(module, options, times);
    if (failed(built))
      return failure();
    program = std::move(*built);
    return assembleCubin(module.getLoc(), program, options, times);
  }
  PtxasSettings settings = ptxasSettingsFor(options);
  PtxasReport report;
  PtxasPool pool(settings, report);
  if (llvm::Error err = pool.start())
    return emitError(module.getLoc()) << llvm::toString(std::move(err));
  auto assembleUnits = [&](const PtxProgram &sofar, size_t first) -> LogicalResult {
    for (size_t i = first; i < sofar.units.size(); ++i) {
      if (failed(checkUnitBudget(sofar.units[i], sofar.unitLocations[i], settings)))
        return failure();
      if (llvm::Error err = pool.add(jobFor(sofar, sofar.units[i])))
        return reportAssemblyError(module.getLoc(), sofar, report, std::move(err));
    }
    return success();
  };
  FailureOr<PtxProgram> built = emitPTXFoldedInPTX(module, options, times, assembleUnits);
  if (failed(built))
    return failure(); // the pool stops its ptxas runs as it goes
  program = std::move(*built);
  llvm::Expected<std::string> cubin = pool.finish();
  recordAssembly(report, times);
  if (!cubin)
    return reportAssemblyError(module.getLoc(), program, report, cubin.takeError());
  warnAboutSpills(module.getLoc(), program, report);
  return std::move(*cubin);
}
