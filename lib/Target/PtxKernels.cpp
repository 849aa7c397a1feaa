//===- PtxKernels.cpp - compiling convs by folding weights into PTX -------===//
#include "spconv/Target/PtxKernels.h"
#include "spconv/Conversion/ConvTemplate/ConvTemplate.h"
#include "spconv/Conversion/ConvTemplate/KernelInfo.h"
#include "spconv/Conversion/ConvTemplate/Placeholder.h"
#include "spconv/Dialect/Spconv/IR/SpconvOps.h"
#include "spconv/Target/PtxBlockTemplate.h"
#include "spconv/Transforms/BuildTemplate.h"
#include "spconv/Transforms/Passes.h"
#include "spconv/Transforms/TemplateCache.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"

#include <chrono>

using namespace mlir;
using namespace spconv;

namespace {
using Clock = std::chrono::steady_clock;
double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}
} // namespace

/// The element type of `shape`'s template arithmetic.
static TemplateType templateType(const ConvShape &shape) {
  switch (shape.precision) {
  case Precision::f16:
    return TemplateType::f16;
  case Precision::bf16:
    return TemplateType::bf16;
  case Precision::f32:
    break;
  }
  return TemplateType::f32;
}

/// What the PTX-level fold's template of a half-precision conv adds to the cache key: the
/// bias form below.
static constexpr llvm::StringLiteral kHalfBiasForm = "bias-f32-placeholder";

/// A half-precision template whose sums are f32 starts them from the bias word, widened:
/// `llvm.fpext (b, b)`. LLVM folds that into two f32 constants that no longer name their
/// channel (0x0400 + k as an f16 is just a small number), so the PTX would hold the bias
/// where the fold cannot find it. The widened bias becomes the f32 bias placeholder
/// (Placeholder.h, bias(k)) in both lanes instead: NVPTX keeps it as an `add.rn.f32`
/// immediate that stamping replaces with the bias rounded to the half type, the value the
/// LLVM-level fold computes (fpext of (b, b)). Returns how many were rewritten.
static int64_t widenBiasPlaceholders(gpu::GPUModuleOp kernels) {
  SmallVector<LLVM::FPExtOp> widened;
  kernels.walk([&](LLVM::FPExtOp ext) { widened.push_back(ext); });
  int64_t rewritten = 0;
  for (LLVM::FPExtOp ext : widened) {
    auto c = ext.getArg().getDefiningOp<LLVM::ConstantOp>();
    auto attr = c ? llvm::dyn_cast<DenseFPElementsAttr>(c.getValue()) : DenseFPElementsAttr();
    auto vector = llvm::dyn_cast<VectorType>(ext.getType());
    if (!attr || attr.getNumElements() != 2 || !vector || !vector.getElementType().isF32())
      continue;
    auto halves = attr.getValues<APFloat>();
    uint32_t word = uint32_t(halves[0].bitcastToAPInt().getZExtValue()) |
                    uint32_t(halves[1].bitcastToAPInt().getZExtValue()) << 16;
    std::optional<placeholder::HalfPlaceholder> p = placeholder::decodeHalfWord(word);
    if (!p || !p->isBias)
      continue;
    OpBuilder b(ext);
    Value f32 = LLVM::ConstantOp::create(
        b, ext.getLoc(), vector,
        DenseElementsAttr::get(vector, b.getF32FloatAttr(placeholder::bias(p->index))));
    ext.getResult().replaceAllUsesWith(f32);
    ext->erase();
    ++rewritten;
  }
  return rewritten;
}

FailureOr<std::string> spconv::buildBlockTemplatePTX(MLIRContext *ctx, const ConvShape &shape,
                                                     const Tiling &tiling,
                                                     const ArtifactOptions &options,
                                                     double &nvptxSeconds) {
  // Shared by every conv of this shape, across files: its own location, never a user's.
  OwningOpRef<ModuleOp> tmpl =
      buildNVVMTemplate(ctx, shape, tiling, KernelForm::OneChannelBlock, kBlockTemplateFunc,
                        NameLoc::get(StringAttr::get(ctx, "spconv.template")));
  if (!tmpl)
    return failure();
  auto kernels = tmpl->lookupSymbol<gpu::GPUModuleOp>(kKernelModuleName);
  if (shape.promotesRuns() && shape.hasBias)
    widenBiasPlaceholders(kernels);
  kernels.setTargetsAttr(ArrayAttr::get(
      ctx,
      {NVVM::NVVMTargetAttr::get(ctx, options.llvmOptLevel, "nvptx64-nvidia-cuda", options.chip)}));
  auto start = Clock::now();
  FailureOr<std::string> ptx = serializeToPTX(kernels);
  nvptxSeconds += secondsSince(start);
  if (failed(ptx))
    return failure();
  // What the placeholders number, so that stamping checks it is given matching weights.
  BlockTemplateInfo info{shape.k, tiling.blockK, shape.cpg() * shape.r * shape.s,
                         shape.hasBias};
  info.channelBlockDim = tiling.channelBlockMajor() ? 2 : 1;
  info.type = templateType(shape);
  return info.str() + *ptx;
}

/// Registers a thread may use so that `minBlocksPerSM` blocks of `threads` fit an SM: the
/// cap ptxas derives for the entry from .maxntid and .minnctapersm, which nvlink enforces on
/// every function the entry calls. sm_90's 64K registers are four sub-partitions of 16K, the
/// warps of the resident blocks are spread over them, and a warp's registers come from its
/// sub-partition, in units of 8 per thread, at most 255: the cap is 16384 / (32 x the warps
/// on the fullest sub-partition). Checked against ptxas 13.0 for 13 block sizes by
/// bench/ptxas/register_cap.py: e.g. 288 threads x 1 block are 9 warps, 3 on the fullest,
/// so 168; the whole-SM division gave 224 and a piece that took 220 failed to link.
static int maxRegistersFor(int64_t threads, int64_t minBlocksPerSM) {
  if (minBlocksPerSM <= 0)
    return 0;
  constexpr int64_t kSubPartitions = 4, kRegistersPerSubPartition = 16384;
  int64_t warps = (threads + 31) / 32 * minBlocksPerSM;
  int64_t fullest = (warps + kSubPartitions - 1) / kSubPartitions;
  int64_t regs = kRegistersPerSubPartition / (fullest * 32) / 8 * 8;
  return int(std::clamp<int64_t>(regs, 16, 255));
}

/// Lower bounds on the PTX instructions of a channel block of `tiling`, from the weights
/// alone.
struct BlockCodeEstimate {
  int64_t largest = 0, mean = 0;
};

/// The PTX instructions of `tiling`'s channel blocks at least, from the weights alone:
/// each block keeps an FMA per nonzero weight (every weight with strict
/// IEEE) and a shared load per (input channel, r, s) that feeds one, per output column of a
/// thread (the fold drops the other loads; the loads stay scalar, their base's alignment is
/// unknown). Staging and control come on top. A tiling whose bound exceeds the block code
/// budget cannot fit, straight-line or in a loop, so the budget retry skips building its template
/// (at batch 64 ResNet-50's layer4 3x3 convs built block-k 64 and 32 templates only to find
/// them too large).
static BlockCodeEstimate blockInstructionsAtLeast(ArrayRef<float> weights,
                                                  const ConvShape &shape, const Tiling &tiling,
                                                  bool strictIEEE) {
  int64_t cpg = shape.cpg(), kpg = shape.kpg(), rs = shape.r * shape.s;
  KernelGeometry g(shape, tiling);
  std::vector<char> fed(g.windowC * rs);
  BlockCodeEstimate estimate;
  int64_t total = 0;
  for (int64_t kb = 0; kb < g.kBlocks; ++kb) {
    int64_t k0 = kb * tiling.blockK, k1 = std::min(shape.k, k0 + tiling.blockK);
    int64_t firstGroup = k0 / kpg, fmas = 0, loads = 0;
    std::fill(fed.begin(), fed.end(), 0);
    for (int64_t k = k0; k < k1; ++k) {
      int64_t window = (k / kpg - firstGroup) * cpg * rs; // the group's place in the window
      const float *w = weights.data() + k * cpg * rs;
      for (int64_t i = 0; i < cpg * rs; ++i) {
        if (!strictIEEE && w[i] == 0.0f)
          continue;
        ++fmas;
        char &f = fed[window + i];
        loads += !f;
        f = 1;
      }
    }
    // Adjacent columns (Tiling::columnOrder 2) share loads between outputs: an upper bound.
    // A half-precision weight is also a mov of its word, once per weight.
    int64_t instructions =
        (fmas + loads) * tiling.outputsPerThread + (shape.isHalf() ? fmas : 0);
    estimate.largest = std::max(estimate.largest, instructions);
    total += instructions;
  }
  estimate.mean = total / g.kBlocks;
  return estimate;
}

/// A short name of the conv for progress lines and errors: its location.
static std::string describe(Conv2DOp op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  op.getLoc().print(os);
  return text;
}

/// The block template of (shape, tiling): from this compile's table, the cache (a damaged
/// entry is reported and rebuilt), or lowered and run through NVPTX and cached.
static const PtxBlockTemplate *
findOrBuildTemplate(Conv2DOp op, const ConvShape &shape, const Tiling &tiling,
                    const ArtifactOptions &options, TemplateCache &cache,
                    llvm::StringMap<std::unique_ptr<PtxBlockTemplate>> &templates,
                    double &nvptxSeconds, CompileTimes *times) {
  MLIRContext *ctx = op.getContext();
  std::string extra = "O" + std::to_string(options.llvmOptLevel);
  if (shape.isHalf())
    extra += ";" + kHalfBiasForm.str();
  std::string key = templateKey("ptx-block", shape, tiling, options.chip, extra);
  auto found = templates.find(key);
  if (found == templates.end()) {
    std::unique_ptr<PtxBlockTemplate> tmpl;
    std::string stale;
    if (std::optional<std::string> bytes = cache.lookupBytes(key, &stale)) {
      llvm::Expected<PtxBlockTemplate> parsed =
          PtxBlockTemplate::parse(std::move(*bytes), kBlockTemplateFunc);
      if (parsed)
        tmpl = std::make_unique<PtxBlockTemplate>(std::move(*parsed));
      else
        stale = llvm::toString(parsed.takeError());
    }
    if (tmpl) {
      if (times)
        ++times->cacheHits;
    } else {
      if (!stale.empty())
        emitWarning(op.getLoc(), "discarding template cache entry ")
            << cache.entryPath(key) << ": " << stale;
      FailureOr<std::string> ptx = buildBlockTemplatePTX(ctx, shape, tiling, options, nvptxSeconds);
      if (failed(ptx)) {
        op.emitError("lowering the template to PTX failed");
        return nullptr;
      }
      std::string bytes = *ptx;
      llvm::Expected<PtxBlockTemplate> parsed =
          PtxBlockTemplate::parse(std::move(*ptx), kBlockTemplateFunc);
      if (!parsed) {
        op.emitError("NVPTX produced a template the PTX-level fold cannot patch (")
            << llvm::toString(parsed.takeError()) << "); --fold-at=llvm folds in LLVM IR instead";
        return nullptr;
      }
      tmpl = std::make_unique<PtxBlockTemplate>(std::move(*parsed));
      if (times)
        ++times->cacheMisses;
      if (std::optional<std::string> err = cache.storeBytes(key, bytes))
        emitWarning(op.getLoc(), "template cache: ") << *err;
    }
    found = templates.try_emplace(key, std::move(tmpl)).first;
  }
  return found->second.get();
}

FailureOr<PtxProgram> spconv::emitPTXFoldedInPTX(ModuleOp module, const ArtifactOptions &options,
                                                 CompileTimes *times, UnitSink onUnits) {
  MLIRContext *ctx = module.getContext();
  auto start = Clock::now();
  double nvptxSeconds = 0, sinkSeconds = 0;
  WalkResult lowered = module.walk([&](Conv2DOp op) {
    if (!op->hasAttr(kKernelAttr))
      return WalkResult::advance();
    op.emitError("this conv was already lowered to a kernel in LLVM IR; fold its weights "
                 "there (--fold-at=llvm)");
    return WalkResult::interrupt();
  });
  if (lowered.wasInterrupted())
    return failure();
  // The table's pairings first (spconv-choose-pairing): a pairing changes the word shape
  // that every ConvShape::fromOp below, and the sidecar's afterwards, derives from the op.
  if (options.tuningTable) {
    PassManager pm(ctx, module->getName().getStringRef());
    pm.addPass(createSpconvChoosePairingWithTable(options.tuningTable));
    if (failed(pm.run(module)))
      return failure();
  }
  SmallVector<Conv2DOp> convs = collectUncompiledConvs(module);
  if (convs.empty())
    return module.emitError("no spconv.conv2d to compile");
  // The options are wrong, not the module: at its location, without printing it.
  if (std::string why = invalidTilingRequest(options.tiling, options.numSMs); !why.empty())
    return emitError(module.getLoc(), why);
  if (std::string why = invalidSmAffinityRequest(options.smAffinity); !why.empty())
    return emitError(module.getLoc(), why);
  if (std::string why = invalidClusterSizeRequest(options.clusterSize); !why.empty())
    return emitError(module.getLoc(), why);
  // SM affinity hands a block work by the SM it runs on, which a cluster's placement would
  // then decide: the two are not combined (nothing measured them together).
  if (options.clusterSize > 1 && options.smAffinity == 2)
    return emitError(module.getLoc(), "cluster-size and sm-affinity=2 are not combined: a "
                                      "block of a cluster takes its grid position's work");
  const TargetGPU gpu = targetGPU(options);

  TemplateCache cache(TemplateCache::resolveDir(options.cacheDir), "ptx");
  llvm::StringMap<std::unique_ptr<PtxBlockTemplate>> templates;
  PtxProgram program;
  std::string &header = program.header;
  int64_t index = 0;
  for (Conv2DOp op : convs) {
    if (failed(checkLowerable(op)))
      return failure();
    // The weights first: a conv with unreadable weights should not cost a template build.
    FailureOr<std::vector<float>> weights = readF32Elements(op.getWeights());
    if (failed(weights))
      return op.emitError("cannot read the f32 weights to fold into this kernel (missing or "
                          "truncated dense_resource blob?)");
    std::vector<float> bias;
    if (op.getBiasAttr()) {
      FailureOr<std::vector<float>> b = readF32Elements(op.getBiasAttr());
      if (failed(b))
        return op.emitError("cannot read the f32 bias to fold into this kernel");
      bias = std::move(*b);
    }
    ConvShape shape = ConvShape::fromOp(op);
    // Half precision: the words hold the weights and bias rounded to the kernel's type, by
    // the LLVM-level fold's rule (no nonzero value becomes zero, none finite infinite).
    if (shape.isHalf()) {
      Type halfType = op.getInputType().getElementType();
      for (auto [values, what] : {std::make_pair(&*weights, "weight"),
                                  std::make_pair(&bias, "bias value")}) {
        int64_t crossed;
        FailureOr<std::vector<float>> rounded = roundToPrecision(*values, halfType, crossed);
        if (failed(rounded))
          return op.emitError("") << what << " " << crossed << " (" << (*values)[crossed]
                                  << ") would round to zero or overflow in " << halfType
                                  << "; rescale the layer or keep it in f32";
        *values = std::move(*rounded);
      }
    }
    // A measured tiling (--tuning-table) fills what the user left to the heuristic.
    ArtifactOptions convOptions = options;
    std::string tunedBy;
    if (options.tuningTable) {
      int64_t nnz = llvm::count_if(*weights, [](float v) { return v != 0.0f; });
      if (const TunedTiling *tuned = options.tuningTable->lookup(shape, nnz)) {
        convOptions.tiling = fillFromTuned(options.tiling, tuned->tiling);
        std::vector<std::string> overrides = requestOverrides(options.tiling, tuned->tiling);
        if (convOptions.minBlocksPerSM == 0)
          convOptions.minBlocksPerSM = tuned->minBlocksPerSM;
        else if (convOptions.minBlocksPerSM != tuned->minBlocksPerSM)
          overrides.push_back("min-blocks-per-sm");
        if (convOptions.smAffinity == 0)
          convOptions.smAffinity = tuned->smAffinity;
        else if (convOptions.smAffinity != tuned->smAffinity)
          overrides.push_back("sm-affinity");
        tunedBy = tuned->source.empty() ? std::string("tuning table") : tuned->source;
        // A cluster launch takes its work by grid position: an entry's SM affinity yields.
        if (options.clusterSize > 1 && options.smAffinity == 0 && tuned->smAffinity == 2) {
          convOptions.smAffinity = 1;
          overrides.push_back("cluster-size");
        }
        if (!overrides.empty())
          tunedBy += "; the request's " + llvm::join(overrides, ", ") + " over it";
      }
    }
    if (convOptions.clusterSize > 1 && convOptions.smAffinity == 0)
      convOptions.smAffinity = 1; // the heuristic's SM affinity neither
    // A cluster split's blocks take their tile and channels by grid position and cluster
    // rank: not combined with SM affinity (an entry's yields to a requested split) nor with
    // another cluster shape.
    if (convOptions.tiling.clusterSplit > 1) {
      if (options.smAffinity == 2)
        return op.emitError("cluster-split and sm-affinity=2 are not combined: a block of a "
                            "cluster split takes its tile and channels by its grid position");
      if (options.clusterSize > 1)
        return op.emitError("cluster-split and cluster-size are not combined: the split "
                            "sets the cluster, one block per group of channels");
      if (convOptions.smAffinity == 2)
        tunedBy += "; the request's cluster-split over its sm-affinity";
      convOptions.smAffinity = 1;
    }
    Tiling requested = convOptions.tiling;
    std::string name = "spconv_conv2d_" + std::to_string(index++);
    // Retried with a smaller block-k while one channel block's code exceeds the block code
    // budget and block-k is the heuristic's to choose.
    // Whether the retry may put an over-budget tiling's chunks in a loop: the chunk loop is
    // the heuristic's to choose and every group would walk two or more chunks.
    // A kernel that reads its inputs directly has no chunks to loop over (chooseTiling
    // keeps its chunk loop at 1 whatever is asked): retrying it "in a loop" would rebuild
    // the same block for ever where block-k may not halve either (an explicit --block-k).
    auto mayLoop = [&](const Tiling &tiling) {
      KernelGeometry g(shape, tiling);
      return convOptions.tiling.chunkLoop == 0 && !tiling.readsInputsDirectly() &&
             g.numChunks >= 2 * g.numGroups();
    };
    // Whether the retry may halve block-k, and the request that does: half the block-k, in
    // the form the heuristic (or the user) picks for it: straight-line where the heuristic
    // would be, since at block-k 32 and 4 images ResNet-50's layer4 3x3 convs run 15-20%
    // faster straight-line than in the loop (docs/tuning-log.md, "Block code budget"); the
    // retry loops it if that is over.
    auto mayHalve = [&](const Tiling &tiling) {
      return convOptions.tiling.blockK == 0 && tiling.blockK > 1;
    };
    // Whether the retries below may take the occupancy rule's tiling (block-k 32 at 8 blocks
    // per SM) for this one: everything it touches is the heuristic's.
    auto mayTradeRegistersForWarps = [&](const Tiling &tiling) {
      return convOptions.minBlocksPerSM == 0 && mayTakeOccupancyTiling(requested, tiling);
    };
    auto halve = [&](const Tiling &tiling) {
      requested.chunkLoop = convOptions.tiling.chunkLoop;
      requested.blockK = tiling.blockK / 2;
    };
    while (true) {
      Tiling tiling = chooseTiling(shape, requested, gpu);
      BlockCodeEstimate code =
          blockInstructionsAtLeast(*weights, shape, tiling, convOptions.strictIEEE);
      if (mayHalve(tiling) && code.largest > convOptions.blockCodeBudget) {
        // Neither form of this block-k fits.
        halve(tiling);
        continue;
      }
      if (occupancyForCodeHeavyBlocks(shape, code.mean) && mayTradeRegistersForWarps(tiling)) {
        // The occupancy rule's tiling where its shape test (128+ input channels) misses but
        // the weights make each block-k 64 channel block more code than an SM streams well:
        // at p = 0.5, batch 64, resnet-conv1 0.3457 -> 0.2393 ms and vgg-conv2 6.556 -> 3.974
        // (docs/tuning-log.md, "SM affinity and the work-order rule").
        requestOccupancyTiling(requested);
        continue;
      }
      // Decided before the template is built: the grid order is part of it.
      WorkOrder order =
          chooseWorkOrder(shape, tiling, code.mean,
                          minBlocksPerSMFor(tiling, convOptions.minBlocksPerSM),
                          convOptions.tiling.blockOrder, convOptions.smAffinity, gpu);
      tiling.blockOrder = order.blockOrder;
      if (order.smAffine && convOptions.smAffinity == 0 && mayTradeRegistersForWarps(tiling)) {
        // An SM running one channel block's code can take twice the blocks of half the
        // channels without fetching more distinct code: alexnet-conv2 at batch 64 ran 0.151
        // ms at block-k 64 / 4 blocks per SM and 0.128 ms at block-k 32 / 8 (1.32x cuDNN
        // FP32); without SM affinity that tiling lost on 5x5 convs (docs/tuning-log.md,
        // "SM affinity").
        requestOccupancyTiling(requested);
        continue;
      }
      if (std::string why = noRoomForWorkSlot(shape, tiling); order.smAffine && !why.empty())
        return op.emitError(why);
      const PtxBlockTemplate *found =
          findOrBuildTemplate(op, shape, tiling, options, cache, templates, nvptxSeconds, times);
      if (!found)
        return failure();
      const PtxBlockTemplate &tmpl = *found;
      if (header.empty())
        header = tmpl.moduleHeader().str();
      else if (header != tmpl.moduleHeader())
        return op.emitError("block templates disagree on the PTX header");

      KernelGeometry geometry(shape, tiling);
      BlockWeights blockWeights{*weights,          bias, shape.k, tiling.blockK, geometry.kBlocks,
                                convOptions.strictIEEE};
      PtxFoldCounts counts;
      // Staging shared by the channel blocks when the template allows it: then a unit
      // pays the staging once and each block only its FMA regions. A kernel that reads its
      // inputs directly stages nothing, so sharing would only add a dispatch and live-out
      // movs per chunk; worse, in a .func piece with a barrier after those dispatches
      // ptxas reloads the global-memory descriptor before every load (two R2URs per LDG:
      // docs/compile-time.md, "Direct inputs"). Such blocks are stamped whole.
      bool shared =
          convOptions.shareStaging && tmpl.sharesStaging() && !tiling.readsInputsDirectly();
      std::vector<std::string> blocks;
      std::vector<std::vector<std::string>> blockRegions;
      int64_t largestBlock = 0;
      for (int64_t kb = 0; kb < geometry.kBlocks; ++kb) {
        llvm::Error err = llvm::Error::success();
        if (shared) {
          llvm::Expected<std::vector<std::string>> regions =
              tmpl.stampRegions(name, blockWeights, kb, counts);
          if (regions) {
            int64_t size = tmpl.sharedInstructions();
            for (const std::string &r : *regions)
              size += countPtxInstructions(r);
            largestBlock = std::max(largestBlock, size);
            blockRegions.push_back(std::move(*regions));
          } else {
            err = regions.takeError();
          }
        } else {
          llvm::Expected<std::string> block = tmpl.stampBlock(name, blockWeights, kb, counts);
          if (block) {
            largestBlock = std::max(largestBlock, countPtxInstructions(*block));
            blocks.push_back(std::move(*block));
          } else {
            err = block.takeError();
          }
        }
        if (err)
          return op.emitError("folding the weights into the template PTX failed: ")
                 << llvm::toString(std::move(err));
      }
      if (largestBlock > convOptions.blockCodeBudget) {
        // First the chunk loop (its staging code exists once per group, not once per chunk),
        // at the same block-k if the block would then fit, else with smaller blocks: halving
        // block-k doubles the blocks that stage the same input (ResNet-50's layer4 3x3 convs
        // at batch 64 fell to block-k 8 and ran 4x slower than at block-k 16 in a loop;
        // docs/tuning-log.md, "Chunk loop"). The fit is estimated from this stamping (the
        // shared code once per group instead of once per chunk) rather than by building
        // another template of the same block-k.
        KernelGeometry g(shape, tiling);
        bool tryLoop = tiling.chunkLoop != 2 && mayLoop(tiling);
        if (tryLoop) {
          requested.chunkLoop = 2;
          int64_t perGroup = g.numChunks / g.numGroups();
          int64_t staging = shared ? tmpl.sharedInstructions() : 0;
          if (largestBlock - staging + staging / perGroup <= convOptions.blockCodeBudget)
            continue;
        }
        if (mayHalve(tiling)) {
          halve(tiling);
          continue;
        }
        if (tryLoop)
          continue;
      }
      if (std::string why = invalidMinBlocksRequest(tiling, convOptions.minBlocksPerSM);
          !why.empty())
        return op.emitError(why);
      int64_t minBlocks = minBlocksPerSMFor(tiling, convOptions.minBlocksPerSM);
      if (std::string why =
              clusterMismatch(convOptions.clusterSize, KernelGeometry(shape, tiling).grid);
          !why.empty())
        return op.emitError(why);
      AssemblyOptions assembly;
      assembly.budget = convOptions.codeBudget;
      assembly.minBlocksPerSM = minBlocks;
      assembly.smAffine = order.smAffine;
      assembly.clusterSize =
          std::max(convOptions.clusterSize, KernelGeometry(shape, tiling).clusterSplit);
      std::vector<PtxUnit> units = shared ? tmpl.assembleShared(name, blockRegions, assembly)
                                          : tmpl.assemble(name, blocks, assembly);
      std::string what = describe(op);
      for (PtxUnit &unit : units) {
        unit.label = unit.isEntry ? what : what + " " + unit.symbol;
        if (!unit.isEntry)
          unit.maxRegisters = maxRegistersFor(tiling.blockThreads(), minBlocks);
      }
      int64_t pieces = units.size() == 1 ? 1 : units.size() - 1;
      size_t firstUnit = program.units.size();
      for (PtxUnit &unit : units) {
        program.units.push_back(std::move(unit));
        program.unitLocations.push_back(op.getLoc());
      }
      if (onUnits) {
        // Not counted as folding: the sink's time is the assembler's.
        auto sinkStart = Clock::now();
        LogicalResult sunk = onUnits(program, firstUnit);
        sinkSeconds += secondsSince(sinkStart);
        if (failed(sunk))
          return failure();
      }

      Builder b(ctx);
      op->setAttr(kKernelAttr, SymbolRefAttr::get(StringAttr::get(ctx, kKernelModuleName),
                                                  {FlatSymbolRefAttr::get(ctx, name)}));
      op->setAttr(kLaunchAttr, makeLaunchAttr(ctx, shape, tiling, minBlocks, assembly.smAffine));
      op->setAttr("spconv.fmas_kept", b.getI64IntegerAttr(counts.kept));
      op->setAttr("spconv.fmas_deleted", b.getI64IntegerAttr(counts.deleted));
      op->setAttr("spconv.dead_loads_dropped", b.getI64IntegerAttr(counts.deadLoads));
      op->setAttr("spconv.kernel_pieces", b.getI64IntegerAttr(pieces));
      if (assembly.clusterSize > 1)
        op->setAttr("spconv.cluster_size", b.getI64IntegerAttr(assembly.clusterSize));
      if (!tunedBy.empty())
        op->setAttr("spconv.tuned_by", b.getStringAttr(tunedBy));
      // Against what was asked (flags, or a table entry's fields), not the retries' requests.
      // At the conv's location, not on the op: the op, which now carries its launch
      // attributes, would be printed beside every such note.
      for (const std::string &why : unhonouredTilingRequests(shape, convOptions.tiling, tiling))
        emitWarning(op.getLoc(), why);
      break;
    }
  }
  if (times) {
    times->nvptx = nvptxSeconds;
    times->lowerAndFold = secondsSince(start) - nvptxSeconds - sinkSeconds;
  }
  return program;
}
