//===- CompileKernels.cpp - cached template lowering + weight folding -----===//
//
// The production path: lowering a template is the expensive part and depends only on the
// conv's shape, tiling and target, so it goes through TemplateCache; folding a weight
// pattern into a copy is one linear walk.
//
//===----------------------------------------------------------------------===//
#include "spconv/Conversion/ConvTemplate/ConvTemplate.h"
#include "spconv/Conversion/ConvTemplate/KernelInfo.h"
#include "spconv/Conversion/SpconvToGPU/SpconvToGPU.h"
#include "spconv/Conversion/TilingOptions.h"
#include "spconv/Dialect/Spconv/IR/SpconvOps.h"
#include "spconv/Transforms/BuildTemplate.h"
#include "spconv/Transforms/FoldWeights.h"
#include "spconv/Transforms/LoweringInterfaces.h"
#include "spconv/Transforms/Passes.h"
#include "spconv/Transforms/TemplateCache.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/SymbolTable.h"

namespace spconv {
#define GEN_PASS_DEF_SPCONVCOMPILEKERNELS
#include "spconv/Transforms/Passes.h.inc"
} // namespace spconv

using namespace mlir;
using namespace spconv;

static constexpr llvm::StringLiteral kTemplateFunc = "spconv_template";

/// Moves the template's kernel into `kernels` as `name`, with the globals it uses (its
/// workgroup buffer) renamed after it so that kernels of one module never share them.
static LLVM::LLVMFuncOp instantiate(ModuleOp tmpl, gpu::GPUModuleOp kernels,
                                    SymbolTable &symbols, StringRef name) {
  LLVM::LLVMFuncOp source;
  tmpl->walk([&](LLVM::LLVMFuncOp f) {
    if (f.getSymName() == kTemplateFunc)
      source = f;
  });
  if (!source)
    return nullptr;
  // The template module is a throw-away copy (parsed from the cache or just built): move the
  // kernel out of it instead of cloning a function of up to a million ops.
  auto *sourceTable = SymbolTable::getNearestSymbolTable(source);
  source->remove();
  auto kernel = source;
  kernel.setSymName(name);
  symbols.insert(kernel);
  llvm::StringMap<StringAttr> renamed;
  kernel.walk([&](LLVM::AddressOfOp addr) {
    StringRef old = addr.getGlobalName();
    auto it = renamed.find(old);
    if (it == renamed.end()) {
      auto global = dyn_cast_or_null<LLVM::GlobalOp>(
          SymbolTable::lookupSymbolIn(sourceTable, addr.getGlobalNameAttr()));
      if (!global)
        return;
      auto copy = cast<LLVM::GlobalOp>(global->clone());
      copy.setSymName((name + "_" + old).str());
      symbols.insert(copy, kernels.getBody()->begin());
      it = renamed.insert({old, copy.getSymNameAttr()}).first;
    }
    addr.setGlobalName(it->second.getValue());
  });
  return kernel;
}

namespace {
struct SpconvCompileKernelsPass
    : public TilingOptionsPass<spconv::impl::SpconvCompileKernelsBase<SpconvCompileKernelsPass>> {
  using TilingOptionsPass::TilingOptionsPass;

  void getDependentDialects(DialectRegistry &registry) const override {
    Base::getDependentDialects(registry);
    registerLoweringInterfaces(registry);
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    SmallVector<Conv2DOp> convs = collectUncompiledConvs(module);
    if (convs.empty())
      return;

    TemplateCache cache(TemplateCache::resolveDir(cacheDir));
    gpu::GPUModuleOp kernels = getOrCreateKernelModule(module);
    if (!kernels.getTargetsAttr())
      kernels.setTargetsAttr(ArrayAttr::get(
          ctx, {NVVM::NVVMTargetAttr::get(ctx, optLevel, "nvptx64-nvidia-cuda", chip)}));
    SymbolTable symbols(kernels);
    FailureOr<Tiling> request = requestedTiling();
    if (failed(request))
      return signalPassFailure();
    const Tiling &requested = *request;
    TargetGPU gpu = targetGPU();
    int64_t nextIndex = 0;

    for (Conv2DOp op : convs) {
      if (failed(checkLowerable(op)))
        return signalPassFailure();
      ConvShape shape = ConvShape::fromOp(op);
      Tiling tiling = chooseTiling(shape, requested, gpu);
      for (const std::string &why : unhonouredTilingRequests(shape, requested, tiling))
        emitWarning(op.getLoc(), why);
      std::string key = templateKey("nvvm", shape, tiling, chip);

      std::string stale;
      OwningOpRef<ModuleOp> tmpl = cache.lookup(key, ctx, &stale);
      if (tmpl) {
        ++numCacheHits;
        if (reportCache)
          op.emitRemark("template cache hit: ") << key;
      } else {
        if (!stale.empty())
          emitWarning(op.getLoc(), "discarding template cache entry ")
              << cache.entryPath(key) << ": " << stale;
        // The template is shared by every conv of this shape, across files: it gets a
        // location of its own, never the first user's.
        tmpl = buildNVVMTemplate(ctx, shape, tiling, KernelForm::AllChannelBlocks,
                                 kTemplateFunc,
                                 NameLoc::get(StringAttr::get(ctx, "spconv.template")));
        if (!tmpl) {
          op.emitError("lowering the template to NVVM failed");
          return signalPassFailure();
        }
        ++numCacheMisses;
        if (reportCache)
          op.emitRemark("template cache miss: ") << key;
        if (std::optional<std::string> err = cache.store(key, *tmpl))
          emitWarning(op.getLoc(), "template cache: ") << *err;
      }

      std::string name = nextKernelName(symbols, nextIndex);
      LLVM::LLVMFuncOp kernel = instantiate(*tmpl, kernels, symbols, name);
      if (!kernel) {
        op.emitError("template has no kernel '") << kTemplateFunc << "'";
        return signalPassFailure();
      }

      // Without a cap ptxas hoists loads into 255 registers per thread: 2 warps per
      // scheduler, which cannot hide shared-memory latency (ncu on vgg-conv3: 83% of cycles
      // with no eligible warp). Set on the copy, so it is not part of the template key.
      if (std::string why = invalidMinBlocksRequest(tiling, minBlocksPerSM); !why.empty()) {
        op.emitError(why);
        return signalPassFailure();
      }
      if (int64_t minBlocks = minBlocksPerSMFor(tiling, minBlocksPerSM); minBlocks > 0)
        kernel->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(),
                        IntegerAttr::get(IntegerType::get(ctx, 32), minBlocks));

      FailureOr<FoldCounts> counts =
          foldWeightsInto(kernel, op.getWeights(), op.getBiasAttr(), strictIEEE, op.getLoc());
      if (failed(counts))
        return signalPassFailure();
      numFMAsKept += counts->kept;
      numFMAsDeleted += counts->deleted;

      op->setAttr(kKernelAttr, SymbolRefAttr::get(kernels.getSymNameAttr(),
                                                  {FlatSymbolRefAttr::get(ctx, name)}));
      op->setAttr(kLaunchAttr,
                  makeLaunchAttr(ctx, shape, tiling, minBlocksPerSMFor(tiling, minBlocksPerSM)));
    }
  }
};
} // namespace
