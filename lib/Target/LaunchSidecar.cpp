//===- LaunchSidecar.cpp - JSON launch configuration (docs/launch-abi.md) -===//
#include "spconv/Conversion/ConvTemplate/ConvShape.h"
#include "spconv/Conversion/ConvTemplate/KernelInfo.h"
#include "spconv/Conversion/ConvTemplate/Numerics.h"
#include "spconv/Dialect/Spconv/IR/SpconvOps.h"
#include "spconv/Target/KernelArtifacts.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace spconv;

static llvm::json::Array toJson(ArrayRef<int64_t> values) {
  llvm::json::Array a;
  for (int64_t v : values)
    a.push_back(v);
  return a;
}

/// An integer attribute of `op`, or null when the compile did not record it.
/// The numerics contract of a half-precision kernel (Numerics.h; docs/design.md, "Half
/// precision").
static llvm::json::Object numericsJson(const ConvShape &words, const Tiling &t,
                                       ArrayRef<float> weights) {
  HalfNumerics n = halfNumerics(words, t, weights);
  return llvm::json::Object{{"dtype", precisionName(words.precision)},
                            {"accumulate", precisionName(words.accumulate)},
                            {"pairing", pairingName(words.pairing)},
                            {"unit_roundoff", n.unitRoundoff},
                            {"tiny", n.tiny},
                            {"longest_half_run", n.longestRun},
                            {"error_terms", n.errorTerms}};
}

static llvm::json::Value intAttr(Operation *op, StringRef name) {
  if (auto a = op->getAttrOfType<IntegerAttr>(name))
    return a.getInt();
  return nullptr;
}

FailureOr<llvm::json::Object> spconv::launchSidecar(ModuleOp module,
                                                    const ArtifactOptions &options,
                                                    StringRef ptxFile, StringRef cubinFile,
                                                    const CompileTimes *times) {
  llvm::json::Array kernels;
  WalkResult walk = module.walk([&](Conv2DOp op) -> WalkResult {
    auto kernel = op->getAttrOfType<SymbolRefAttr>(kKernelAttr);
    auto launch = op->getAttrOfType<DictionaryAttr>(kLaunchAttr);
    if (!kernel || !launch) {
      op.emitError("conv has not been compiled (no '") << kKernelAttr << "')";
      return WalkResult::interrupt();
    }
    ConvShape words = ConvShape::fromOp(op);
    // The tensors' shape (half precision: not the kernel's word shape).
    ConvShape s = words.logical();
    Tiling t = tilingFromLaunchAttr(launch);
    FailureOr<std::vector<float>> w = readF32Elements(op.getWeights());
    int64_t nnz = 0;
    if (succeeded(w))
      for (float v : *w)
        nnz += v != 0.0f;
    const char *dtype = precisionName(s.precision);
    std::string loc;
    llvm::raw_string_ostream locOs(loc);
    op.getLoc().print(locOs);
    auto ints = [&](StringRef name) {
      auto a = launch.getAs<DenseI64ArrayAttr>(name);
      return a ? toJson(a.asArrayRef()) : llvm::json::Array();
    };
    auto shared = launch.getAs<IntegerAttr>("shared_bytes");
    int64_t sharedBytes = shared ? shared.getInt() : 0;
    bool dynamicShared = t.usesDynamicShared();
    auto minBlocks = launch.getAs<IntegerAttr>("min_blocks_per_sm");
    // The kernel's pointers, in order: input, the residual where the op has one (the
    // output's shape and layout), output.
    auto param = [&](StringRef name, ArrayRef<int64_t> shape) {
      return llvm::json::Object{{"name", name},
                                {"role", name},
                                {"dtype", dtype},
                                {"layout", layoutName(words.layout)},
                                {"shape", toJson(shape)}};
    };
    llvm::json::Array params{param("input", {s.n, s.c, s.h, s.w})};
    if (s.residual)
      params.push_back(param("residual", {s.n, s.k, s.p, s.q}));
    params.push_back(param("output", {s.n, s.k, s.p, s.q}));
    llvm::json::Object entry{
        {"entry", kernel.getLeafReference().getValue().str()},
        {"source_location", loc},
        {"grid", ints("grid")},
        {"block", ints("block")},
        // The staged tiles: in dynamic shared memory, which the launch sizes, where the
        // tiling asks for it (Tiling::dynamicShared), else declared static.
        {"dynamic_shared_bytes", dynamicShared ? sharedBytes : 0},
        {"static_shared_bytes", dynamicShared ? 0 : sharedBytes},
        {"params", std::move(params)},
        {"conv",
         llvm::json::Object{{"N", s.n},
                            {"C", s.c},
                            {"H", s.h},
                            {"W", s.w},
                            {"K", s.k},
                            {"R", s.r},
                            {"S", s.s},
                            {"P", s.p},
                            {"Q", s.q},
                            {"stride", toJson({s.sh, s.sw})},
                            {"padding", toJson({s.pt, s.pl, s.pb, s.pr})},
                            {"dilation", toJson({s.dh, s.dw})},
                            {"groups", op.getGroups()},
                            {"activation", epilogueName(s.activation)},
                            {"has_bias", s.hasBias},
                            {"has_residual", s.residual}}},
        {"weights_nnz", nnz},
        {"fmas_kept", intAttr(op, "spconv.fmas_kept")},
        {"fmas_deleted", intAttr(op, "spconv.fmas_deleted")},
        {"weights_total", s.numWeights()},
        {"kernel_pieces", intAttr(op, "spconv.kernel_pieces")},
        {"tiling", llvm::json::Object{{"block_k", t.blockK},
                                      {"outputs_per_thread", t.outputsPerThread},
                                      {"tile_p", t.tileP},
                                      {"threads_q", t.threadsQ},
                                      {"chunk_c", t.chunkC},
                                      {"split_c", std::max<int64_t>(1, t.splitC)},
                                      {"chunk_loop", t.chunkLoop == 2},
                                      {"images_per_block",
                                       std::max<int64_t>(1, t.imagesPerBlock)},
                                      {"channel_block_major", t.channelBlockMajor()},
                                      {"min_blocks_per_sm",
                                       minBlocks ? minBlocks.getInt() : 0},
                                      {"sm_affine", launch.contains("sm_affine")},
                                      {"async_staging", t.asyncStaging != 1},
                                      {"adjacent_columns", t.adjacentColumns()},
                                      {"direct_inputs", t.readsInputsDirectly()},
                                      {"channel_vector",
                                       std::max<int64_t>(1, t.channelVector)},
                                      {"load_ahead", t.loadAhead},
                                      {"dynamic_shared", t.usesDynamicShared()},
                                      {"cluster_split",
                                       std::max<int64_t>(1, t.clusterSplit)}}},
    };
    if (s.isHalf() && succeeded(w))
      entry["numerics"] = numericsJson(words, t, *w);
    if (auto tunedBy = op->getAttrOfType<StringAttr>("spconv.tuned_by"))
      entry["tuned_by"] = tunedBy.getValue().str();
    // Informative: the cluster shape is the entry's (.reqnctapercluster), which a plain
    // cuLaunchKernel follows. A cluster split has one either fold (the LLVM-level fold sets
    // no spconv.cluster_size).
    if (auto cluster = op->getAttrOfType<IntegerAttr>("spconv.cluster_size"))
      entry["cluster"] = toJson({cluster.getInt(), 1, 1});
    else if (t.clusterSplit > 1)
      entry["cluster"] = toJson({t.clusterSplit, 1, 1});
    // Only where spconv-choose-pairing set the op's pairing: `numerics.pairing` alone cannot
    // tell a table's choice from the user's or the heuristic's.
    if (s.isHalf() && op->hasAttr("spconv.pairing_by"))
      entry["pairing_from"] = "tuning-table";
    kernels.push_back(std::move(entry));
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  llvm::json::Object root{{"format", "spconv-launch"},
                          {"version", 1},
                          {"chip", options.chip},
                          {"num_sms", targetGPU(options).numSMs},
                          {"strict_ieee", options.strictIEEE},
                          {"kernels", std::move(kernels)}};
  if (!ptxFile.empty())
    root["ptx"] = ptxFile.str();
  if (!cubinFile.empty())
    root["cubin"] = cubinFile.str();
  FoldLevel foldAt = effectiveFoldLevel(module, options);
  root["fold_at"] = foldAt == FoldLevel::PTX ? "ptx" : "llvm";
  if (times) {
    root["compile_seconds"] = llvm::json::Object{{"lower_and_fold", times->lowerAndFold},
                                                 {"nvptx", times->nvptx},
                                                 {"ptxas", times->ptxas}};
    root["ptxas"] = llvm::json::Object{
        {"units_assembled", times->ptxasUnits},
        {"object_cache_hits", times->objectCacheHits},
        {"peak_memory_estimate_mib", int64_t(times->ptxasPeakEstimate >> 20)}};
    // ptxas's own rate on this compile (a warm compile is bounded by it: every new weight
    // is new code for ptxas). Only where the units' sizes are known.
    if (times->ptxasInstructions > 0) {
      llvm::json::Object &ptxas = *root.getObject("ptxas");
      ptxas["instructions_assembled"] = times->ptxasInstructions;
      ptxas["process_seconds"] = std::round(times->ptxasProcessSeconds * 1000) / 1000;
      if (times->ptxasProcessSeconds > 0)
        ptxas["instructions_per_process_second"] =
            int64_t(times->ptxasInstructions / times->ptxasProcessSeconds);
    }
    // Counted by the PTX-level fold; spconv-compile-kernels reports its own as pass
    // statistics.
    if (foldAt == FoldLevel::PTX)
      root["template_cache"] =
          llvm::json::Object{{"hits", times->cacheHits}, {"misses", times->cacheMisses}};
  }
  return root;
}
