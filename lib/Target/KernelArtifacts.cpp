//===- KernelArtifacts.cpp - PTX through NVPTX, cubin through ptxas -------===//
#include "spconv/Target/KernelArtifacts.h"
#include "spconv/Target/PtxKernels.h"
#include "spconv/Conversion/ConvTemplate/KernelInfo.h"
#include "spconv/Dialect/Spconv/IR/SpconvOps.h"
#include "spconv/Transforms/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include <chrono>
#include <cstdlib>

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

FailureOr<std::string> spconv::emitPTX(ModuleOp module, const ArtifactOptions &options,
                                       CompileTimes *times) {
  if (options.foldAt == FoldLevel::LLVM)
    return emitPTXFoldedInLLVM(module, options, times);
  return emitPTXFoldedInPTX(module, options, times);
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

FailureOr<std::string> spconv::assembleCubin(Location loc, StringRef ptx,
                                             const ArtifactOptions &options,
                                             CompileTimes *times) {
  std::string ptxas = findPtxas(options);
  if (!llvm::sys::fs::can_execute(ptxas))
    return emitError(loc, "ptxas not found at '")
           << ptxas
           << "': install the CUDA toolkit or pass --ptxas-path (or set SPCONV_PTXAS / "
              "CUDA_PATH)";
  llvm::SmallString<128> ptxFile, cubinFile, logFile;
  int fd;
  if (llvm::sys::fs::createTemporaryFile("spconv", "ptx", fd, ptxFile) ||
      llvm::sys::fs::createTemporaryFile("spconv", "cubin", cubinFile) ||
      llvm::sys::fs::createTemporaryFile("spconv", "log", logFile))
    return emitError(loc, "cannot create temporary files for ptxas");
  auto cleanup = llvm::make_scope_exit([&] {
    llvm::sys::fs::remove(ptxFile);
    llvm::sys::fs::remove(cubinFile);
    llvm::sys::fs::remove(logFile);
  });
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << ptx;
  }
  std::string arch = "-arch=" + options.chip;
  std::string opt = "-O" + options.ptxasOptLevel;
  SmallVector<StringRef> args{ptxas, arch, opt, ptxFile, "-o", cubinFile};
  std::optional<StringRef> redirects[] = {std::nullopt, StringRef(logFile), StringRef(logFile)};
  std::string execError;
  auto start = std::chrono::steady_clock::now();
  int rc = llvm::sys::ExecuteAndWait(ptxas, args, std::nullopt, redirects, 0, 0, &execError);
  if (times)
    times->ptxas = secondsSince(start);
  if (rc != 0) {
    auto log = llvm::MemoryBuffer::getFile(logFile);
    return emitError(loc, "ptxas failed (exit ")
           << rc << ")" << (execError.empty() ? "" : ": " + execError) << "\n"
           << (log ? (*log)->getBuffer() : "");
  }
  auto cubin = llvm::MemoryBuffer::getFile(cubinFile, /*IsText=*/false);
  if (!cubin)
    return emitError(loc, "cannot read the cubin ptxas wrote");
  return (*cubin)->getBuffer().str();
}
