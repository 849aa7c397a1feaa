//===- TranslateRegistration.cpp - spconv translations --------------------===//
#include "spconv/Target/TranslateRegistration.h"
#include "spconv/Dialect/Spconv/IR/SpconvDialect.h"
#include "spconv/Conversion/ConvTemplate/ConvTemplate.h"
#include "spconv/Dialect/Spconv/IR/SpconvOps.h"
#include "spconv/Target/ImportOnnx.h"
#include "spconv/Target/KernelArtifacts.h"
#include "spconv/Target/PtxKernels.h"
#include "spconv/Transforms/LoweringInterfaces.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/ManagedStatic.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/ToolOutputFile.h"


using namespace mlir;
using namespace spconv;

void spconv::registerSpconvToolDialects(DialectRegistry &registry) {
  registry.insert<SpconvDialect, affine::AffineDialect, arith::ArithDialect,
                  cf::ControlFlowDialect,
                  func::FuncDialect, gpu::GPUDialect, LLVM::LLVMDialect, NVVM::NVVMDialect,
                  linalg::LinalgDialect, memref::MemRefDialect, nvgpu::NVGPUDialect,
                  scf::SCFDialect, tensor::TensorDialect>();
  registerLoweringInterfaces(registry);
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  registerAllToLLVMIRTranslations(registry);
}

namespace {
struct TranslateFlags {
  llvm::cl::opt<std::string> chip{"chip", llvm::cl::desc("Target SM for PTX and cubin"),
                                  llvm::cl::init("sm_90")};
  llvm::cl::opt<std::string> cacheDir{
      "cache-dir",
      llvm::cl::desc("Template cache directory ('' = $SPCONV_CACHE_DIR or ~/.cache/spconv, "
                     "'none' = memory only)"),
      llvm::cl::init("")};
  llvm::cl::opt<bool> strictIEEE{
      "strict-ieee", llvm::cl::desc("Keep zero-weight FMAs so NaN/Inf inputs propagate"),
      llvm::cl::init(false)};
  llvm::cl::opt<FoldLevel> foldAt{
      "fold-at", llvm::cl::desc("Where weights are folded into the code"),
      llvm::cl::values(
          clEnumValN(FoldLevel::PTX, "ptx",
                     "into the cached PTX of a one-channel-block template (default; a "
                     "cache hit runs neither the lowering nor NVPTX)"),
          clEnumValN(FoldLevel::LLVM, "llvm",
                     "in LLVM IR (spconv-compile-kernels), then NVPTX on every compile")),
      llvm::cl::init(FoldLevel::PTX)};
  llvm::cl::opt<std::string> ptxasPath{
      "ptxas-path", llvm::cl::desc("ptxas to assemble cubins with (default: $SPCONV_PTXAS, "
                                   "$CUDA_PATH/bin/ptxas, /usr/local/cuda/bin/ptxas)"),
      llvm::cl::init("")};
  llvm::cl::opt<int> llvmOptLevel{
      "opt-level", llvm::cl::desc("LLVM optimisation level for NVPTX emission (0-3)"),
      llvm::cl::init(3)};
  llvm::cl::opt<std::string> ptxasOptLevel{
      "ptxas-opt-level", llvm::cl::desc("ptxas -O level (0-3)"), llvm::cl::init("3")};
  llvm::cl::opt<std::string> ptxasFastCompile{
      "ptxas-fast-compile",
      llvm::cl::desc("ptxas --Ofast-compile level in place of -O3: 0 (off), min, mid or max. "
                     "For quick iteration, not deployment: min assembled ResNet-50 at batch "
                     "64 in 30% less time and its kernels ran 18% slower in sum (up to 1.9x "
                     "per conv); max ran kernels 3-5x slower (docs/compile-time.md, \"ptxas "
                     "fast-compile\")"),
      llvm::cl::init("0")};
  llvm::cl::OptionCategory tilingCat{"spconv tiling (0 = heuristic, docs/design.md)"};
  llvm::cl::opt<int64_t> minBlocksPerSM{
      "min-blocks-per-sm",
      llvm::cl::desc("Blocks per SM ptxas must fit, which caps registers per thread (0 = "
                     "heuristic: 128 registers, -1 = no cap; at most 2048 threads and 32 "
                     "blocks)"),
      llvm::cl::init(0), llvm::cl::cat(tilingCat)};
  llvm::cl::opt<int64_t> blockK{"block-k", llvm::cl::desc("Output channels per thread"),
                                llvm::cl::init(0), llvm::cl::cat(tilingCat)};
  llvm::cl::opt<int64_t> outputsPerThread{
      "outputs-per-thread", llvm::cl::desc("Output columns per thread"), llvm::cl::init(0),
      llvm::cl::cat(tilingCat)};
  llvm::cl::opt<int64_t> tileP{"tile-p", llvm::cl::desc("Output rows per block"),
                               llvm::cl::init(0), llvm::cl::cat(tilingCat)};
  llvm::cl::opt<int64_t> threadsQ{"threads-q", llvm::cl::desc("Threads along output columns"),
                                  llvm::cl::init(0), llvm::cl::cat(tilingCat)};
  llvm::cl::opt<int64_t> chunkC{"chunk-c", llvm::cl::desc("Input channels staged at a time"),
                                llvm::cl::init(0), llvm::cl::cat(tilingCat)};
  llvm::cl::opt<int64_t> splitC{
      "split-c",
      llvm::cl::desc("Warp groups that split a block's chunks (0 = heuristic, 1 = no split)"),
      llvm::cl::init(0), llvm::cl::cat(tilingCat)};
  llvm::cl::opt<int64_t> chunkLoop{
      "chunk-loop", llvm::cl::desc("How a group walks its chunks (0 = heuristic: a loop for 4 warp groups at block-k <= 16 with 2+ chunks each or any group with 8+ chunks, 1 = straight-line, 2 = loop)"),
      llvm::cl::init(0), llvm::cl::cat(tilingCat)};
  llvm::cl::opt<int64_t> imagesPerBlock{
      "images-per-block",
      llvm::cl::desc("Images a thread block computes side by side, in lock-step (0 = "
                     "heuristic: blocks of <= 2 warps pack up to 256 threads, 4-warp blocks "
                     "of filters over 1x1 with 8+ channel blocks 2 images; 1 = one image; "
                     "not with split-c > 1)"),
      llvm::cl::init(0), llvm::cl::cat(tilingCat)};
  llvm::cl::opt<int64_t> blockOrder{
      "block-order",
      llvm::cl::desc("Grid order (0 = heuristic: 1; 1 = (tiles, channel blocks, images); 2 = "
                     "(tiles, images, channel blocks): each wave runs fewer channel blocks' "
                     "code, docs/design.md \"Instruction fetch\")"),
      llvm::cl::init(0), llvm::cl::cat(tilingCat)};
  llvm::cl::opt<int64_t> asyncStaging{
      "async-staging",
      llvm::cl::desc("How chunks are staged (0 = heuristic: 2 for a chunk loop over packed "
                     "images with an unstrided filter over 1x1, in half precision where its "
                     "words lie whole (the image-pair layout), else 1; 1 = loads and "
                     "stores through registers; 2 = cp.async copies, double-buffered in a "
                     "chunk loop, in half precision of whole words only, docs/design.md "
                     "\"Asynchronous staging\")"),
      llvm::cl::init(0), llvm::cl::cat(tilingCat)};
  llvm::cl::opt<int64_t> columnOrder{
      "column-order",
      llvm::cl::desc("Which output columns a thread computes with outputs-per-thread > 1 (0 = "
                     "heuristic: 1; 1 = strided by threads-q; 2 = adjacent, sharing their "
                     "inputs along the filter width, docs/design.md \"Adjacent outputs\")"),
      llvm::cl::init(0), llvm::cl::cat(tilingCat)};
  llvm::cl::opt<int64_t> directInputs{
      "direct-inputs",
      llvm::cl::desc("Where a thread's inputs come from (0 = heuristic; 1 = staged through "
                     "shared memory; 2 = read directly into registers where the filter is "
                     "1x1 and a thread has one output, docs/design.md \"Direct inputs\")"),
      llvm::cl::init(0), llvm::cl::cat(tilingCat)};
  llvm::cl::opt<int64_t> channelVector{
      "channel-vector",
      llvm::cl::desc("Input channels one shared load reads (0 = heuristic: 1; 1, 2 or 4: "
                     "with 2 or 4 the staged tile interleaves the chunk's channels so a "
                     "thread reads them with one ld.shared.v2/.v4; staged inputs with one "
                     "output per thread only, docs/design.md \"Channel vectors\")"),
      llvm::cl::init(0), llvm::cl::cat(tilingCat)};
  llvm::cl::opt<int64_t> loadAhead{
      "load-ahead",
      llvm::cl::desc("Global loads of the next straight-line chunk a thread issues before "
                     "this chunk's FMAs (0 = none, or a tuning table entry's; 1-64 input "
                     "words, held in registers through the FMAs; register staging of "
                     "straight-line chunks only, docs/design.md \"Loads ahead\")"),
      llvm::cl::init(0), llvm::cl::cat(tilingCat)};
  llvm::cl::opt<int64_t> dynamicShared{
      "dynamic-shared",
      llvm::cl::desc("Where the staged tiles live (0 = heuristic: 1; 1 = static shared "
                     "memory, at most 48 KB; 2 = dynamic shared memory up to 227 KB, opted "
                     "in by the runtimes, so a double-buffered chunk loop keeps whole "
                     "chunks, docs/design.md \"Dynamic shared memory\")"),
      llvm::cl::init(0), llvm::cl::cat(tilingCat)};
  llvm::cl::opt<int64_t> clusterSplit{
      "cluster-split",
      llvm::cl::desc("Blocks of a cluster that split a tile's input channels, each on its own "
                     "SM (0 = heuristic: 1; 2-8: each block runs 1/N of the chunks with its "
                     "split-c warp groups, and the partial sums meet in distributed shared "
                     "memory; not with sm-affinity=2, images-per-block or cluster-size; "
                     "docs/design.md \"Cluster split\")"),
      llvm::cl::init(0), llvm::cl::cat(tilingCat)};
  llvm::cl::opt<int64_t> smAffinity{
      "sm-affinity",
      llvm::cl::desc("Where a block finds its work (0 = heuristic: 1; 1 = its grid position; "
                     "2 = per-channel-block queues, starting with channel block %smid mod "
                     "channel blocks, so the blocks sharing an SM run one channel block's "
                     "code: docs/design.md \"SM affinity\")"),
      llvm::cl::init(0), llvm::cl::cat(tilingCat)};
  llvm::cl::opt<int64_t> clusterSize{
      "cluster-size",
      llvm::cl::desc("Blocks a cluster along the grid's x (0 or 1 = no cluster; 2-8: "
                     "`.reqnctapercluster`, scheduled together on one GPC, so that neighbouring "
                     "blocks of one channel block's code run side by side; the grid's x must "
                     "be a multiple; not with sm-affinity=2; docs/design.md \"Clusters\")"),
      llvm::cl::init(0), llvm::cl::cat(tilingCat)};
  llvm::cl::opt<int64_t> numSMs{
      "num-sms",
      llvm::cl::desc("SMs of the target GPU, over which the heuristic counts waves of blocks "
                     "(0 = the tuning table's \"sms\", else 132: an H100 SXM's or H200's; "
                     "114 for an H100 PCIe, 108 for an A100: docs/design.md \"Target GPU\")"),
      llvm::cl::init(0), llvm::cl::cat(tilingCat)};
  llvm::cl::opt<std::string> tuningTable{
      "tuning-table",
      llvm::cl::desc("A table of tilings measured on the target GPU (bench/tuning_table.py; "
                     "docs/design.md \"Tuning table\"): a conv with an entry takes its tiling "
                     "where the flags above leave it to the heuristic, and a half-precision "
                     "conv without a pairing that of a choose_pairing entry. Default: "
                     "$SPCONV_TUNING_TABLE; 'none': no table. PTX-level fold only"),
      llvm::cl::init(""), llvm::cl::cat(tilingCat)};
  llvm::cl::OptionCategory budgetCat{"spconv compile budgets (docs/design.md, \"Code-size budget\")"};
  llvm::cl::opt<int64_t> codeBudget{
      "code-budget",
      llvm::cl::desc("PTX instructions one ptxas run may assemble; bigger kernels are split "
                     "into pieces linked by nvlink (default 16384)"),
      llvm::cl::init(16384), llvm::cl::cat(budgetCat)};
  llvm::cl::opt<int64_t> blockCodeBudget{
      "block-code-budget",
      llvm::cl::desc("PTX instructions one channel block may have before the heuristic puts "
                     "its chunks in a loop or halves block-k; a block over --code-budget is "
                     "a ptxas unit of its own (default 32768)"),
      llvm::cl::init(32768), llvm::cl::cat(budgetCat)};
  llvm::cl::opt<bool> shareStaging{
      "share-staging",
      llvm::cl::desc("Share a kernel's staging code between its channel blocks, each "
                     "branching to its own FMAs per chunk (default on; off: one whole body "
                     "per channel block)"),
      llvm::cl::init(true), llvm::cl::cat(budgetCat)};
  llvm::cl::opt<unsigned> jobs{
      "jobs", llvm::cl::desc("Concurrent ptxas runs (0 = the machine's cores)"),
      llvm::cl::init(0), llvm::cl::cat(budgetCat)};
  llvm::cl::opt<uint64_t> ptxasMemoryBudget{
      "ptxas-memory-budget",
      llvm::cl::desc("MiB the concurrent ptxas runs may use together (estimated before each "
                     "starts; a unit that cannot fit is refused)"),
      llvm::cl::init(2048), llvm::cl::cat(budgetCat)};
  llvm::cl::opt<ProgressMode> progress{
      "progress",
      llvm::cl::desc("Report the ptxas units on stderr as they finish (bare --progress: "
                     "=bar on a terminal, =log otherwise)"),
      llvm::cl::ValueOptional, llvm::cl::init(ProgressMode::None),
      llvm::cl::values(
          clEnumValN(ProgressMode::Auto, "", "bar on a terminal, log otherwise"),
          clEnumValN(ProgressMode::Auto, "auto", "the same"),
          clEnumValN(ProgressMode::Bar, "bar", "one line redrawn with '\\r'"),
          clEnumValN(ProgressMode::Log, "log",
                     "lines for logs and CI, no '\\r': one per tenth of the units, 5 s "
                     "apart at least, 60 s at most, and the last"),
          clEnumValN(ProgressMode::Units, "units", "a line per finished unit, for programs"),
          clEnumValN(ProgressMode::None, "none", "nothing (the default)")),
      llvm::cl::cat(budgetCat)};
  llvm::cl::opt<std::string> artifactPrefix{
      "artifact-prefix",
      llvm::cl::desc("--spconv-compile writes <prefix>.ptx and <prefix>.cubin; the sidecar "
                     "names them by file name"),
      llvm::cl::init("kernels")};

  // The table last read, kept for the translations of one run.
  mutable std::shared_ptr<const TuningTable> table;
  mutable std::string tablePath;

  /// The options, with the tuning table read; errors (an unreadable or malformed table, or
  /// one given with --fold-at=llvm) are reported at `loc`.
  FailureOr<ArtifactOptions> options(Location loc) const {
    ArtifactOptions o = plainOptions();
    bool fromFlag = tuningTable.getNumOccurrences() > 0;
    std::string path = TuningTable::resolvePath(
        fromFlag ? std::optional<llvm::StringRef>(tuningTable.getValue()) : std::nullopt);
    if (path.empty())
      return o;
    if (o.foldAt == FoldLevel::LLVM) {
      if (fromFlag)
        return emitError(loc, "--tuning-table applies to the PTX-level fold (the default); "
                              "with --fold-at=llvm give the tiling flags instead");
      emitWarning(loc, "SPCONV_TUNING_TABLE is not applied with --fold-at=llvm (the "
                       "heuristic's tilings are used)");
      return o;
    }
    if (!table || tablePath != path) {
      llvm::Expected<TuningTable> loaded = TuningTable::load(path);
      if (!loaded)
        return emitError(loc, llvm::toString(loaded.takeError()));
      table = std::make_shared<const TuningTable>(std::move(*loaded));
      tablePath = path;
    }
    o.tuningTable = table;
    // Its entries apply whatever the target: they were measured on the table's device, whose
    // SM count may not be the one asked for.
    if (o.numSMs > 0 && table->numSMs() > 0 && o.numSMs != table->numSMs())
      emitWarning(loc) << "--num-sms=" << o.numSMs << " is not the " << table->numSMs()
                       << " SMs of the tuning table's device (" << table->device()
                       << "): its entries, measured there, still apply to the convs they match";
    return o;
  }

  ArtifactOptions plainOptions() const {
    ArtifactOptions o;
    o.chip = chip;
    o.cacheDir = cacheDir;
    o.strictIEEE = strictIEEE;
    o.foldAt = foldAt;
    o.ptxasPath = ptxasPath;
    o.llvmOptLevel = llvmOptLevel;
    o.ptxasOptLevel = ptxasOptLevel;
    o.ptxasFastCompile = ptxasFastCompile;
    o.minBlocksPerSM = minBlocksPerSM;
    o.smAffinity = smAffinity;
    o.clusterSize = clusterSize;
    o.numSMs = numSMs;
    o.tiling = Tiling{blockK, outputsPerThread, tileP,    threadsQ,
                      chunkC, splitC,           chunkLoop, imagesPerBlock, blockOrder,
                      asyncStaging, columnOrder, directInputs};
    o.tiling.channelVector = channelVector;
    o.tiling.loadAhead = loadAhead;
    o.tiling.dynamicShared = dynamicShared;
    o.tiling.clusterSplit = clusterSplit;
    o.codeBudget = codeBudget;
    o.blockCodeBudget = blockCodeBudget;
    o.shareStaging = shareStaging;
    o.jobs = jobs;
    o.ptxasMemoryBudget = ptxasMemoryBudget << 20;
    o.progress = progress;
    return o;
  }
};
llvm::ManagedStatic<TranslateFlags> flags;

LogicalResult writeFile(Location loc, StringRef path, StringRef bytes) {
  std::string error;
  auto file = openOutputFile(path, &error);
  if (!file)
    return emitError(loc, "cannot write '") << path << "': " << error;
  file->os() << bytes;
  file->keep();
  return success();
}

/// Wraps a translation of a builtin.module (the only op spconv's translations accept).
std::function<LogicalResult(Operation *, llvm::raw_ostream &)>
onModule(LogicalResult (*fn)(ModuleOp, llvm::raw_ostream &)) {
  return [fn](Operation *op, llvm::raw_ostream &os) -> LogicalResult {
    auto module = dyn_cast<ModuleOp>(op);
    if (!module)
      return op->emitError("expected a builtin.module");
    return fn(module, os);
  };
}

LogicalResult translateToPtx(ModuleOp module, llvm::raw_ostream &os) {
  FailureOr<ArtifactOptions> options = flags->options(module.getLoc());
  if (failed(options))
    return failure();
  FailureOr<std::string> ptx = emitPTX(module, *options);
  if (failed(ptx))
    return failure();
  os << *ptx;
  return success();
}

LogicalResult translateToCubin(ModuleOp module, llvm::raw_ostream &os) {
  PtxProgram ptx;
  FailureOr<ArtifactOptions> options = flags->options(module.getLoc());
  if (failed(options))
    return failure();
  FailureOr<std::string> cubin = compileToCubin(module, *options, ptx);
  if (failed(cubin))
    return failure();
  os << *cubin;
  return success();
}

LogicalResult translateToLaunchJson(ModuleOp module, llvm::raw_ostream &os) {
  // Compile if needed so the sidecar describes the kernels the PTX would hold.
  FailureOr<ArtifactOptions> options = flags->options(module.getLoc());
  if (failed(options) || failed(emitPTX(module, *options)))
    return failure();
  FailureOr<llvm::json::Object> json = launchSidecar(module, *options, "", "", nullptr);
  if (failed(json))
    return failure();
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(*json))) << "\n";
  return success();
}

/// The PTX of the one-channel-block template the module's single conv is stamped from: what
/// the cache stores, for inspection and for spconv-stamp-ptx.
LogicalResult translateToBlockTemplate(ModuleOp module, llvm::raw_ostream &os) {
  SmallVector<Conv2DOp> convs;
  module.walk([&](Conv2DOp op) { convs.push_back(op); });
  if (convs.size() != 1)
    return module.emitError("--spconv-to-block-template-ptx expects exactly one spconv.conv2d, "
                            "found ")
           << convs.size();
  if (failed(checkLowerable(convs[0])))
    return failure();
  // The template of the heuristic's tiling or the flags' (a tuning table needs the weights).
  ArtifactOptions options = flags->plainOptions();
  if (std::string why = invalidNumSMsRequest(options.numSMs); !why.empty())
    return emitError(module.getLoc(), why);
  ConvShape shape = ConvShape::fromOp(convs[0]);
  double nvptxSeconds = 0;
  FailureOr<std::string> ptx = buildBlockTemplatePTX(
      module.getContext(), shape, chooseTiling(shape, options.tiling, targetGPU(options)),
      options, nvptxSeconds);
  if (failed(ptx))
    return convs[0].emitError("lowering the template to PTX failed");
  os << *ptx;
  return success();
}

LogicalResult compileAll(ModuleOp module, llvm::raw_ostream &os) {
  FailureOr<ArtifactOptions> maybeOptions = flags->options(module.getLoc());
  if (failed(maybeOptions))
    return failure();
  ArtifactOptions options = std::move(*maybeOptions);
  CompileTimes times;
  PtxProgram ptx;
  FailureOr<std::string> cubin = compileToCubin(module, options, ptx, &times);
  if (failed(cubin))
    return failure();
  std::string prefix = flags->artifactPrefix;
  if (failed(writeFile(module.getLoc(), prefix + ".ptx", ptx.text())) ||
      failed(writeFile(module.getLoc(), prefix + ".cubin", *cubin)))
    return failure();
  std::string base = llvm::sys::path::filename(prefix).str();
  FailureOr<llvm::json::Object> json =
      launchSidecar(module, options, base + ".ptx", base + ".cubin", &times);
  if (failed(json))
    return failure();
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(*json))) << "\n";
  return success();
}
} // namespace

void spconv::registerSpconvTranslations() {
  *flags; // register the flags with the command line before it is parsed
  TranslateFromMLIRRegistration toPtx("spconv-to-ptx",
                                      "compile spconv.conv2d ops to PTX (NVPTX backend)",
                                      onModule(translateToPtx), registerSpconvToolDialects);
  TranslateFromMLIRRegistration toCubin(
      "spconv-to-cubin", "compile spconv.conv2d ops to a cubin (NVPTX backend + ptxas)",
      onModule(translateToCubin), registerSpconvToolDialects);
  TranslateFromMLIRRegistration toJson(
      "spconv-to-launch-json", "compile spconv.conv2d ops and print the launch sidecar",
      onModule(translateToLaunchJson), registerSpconvToolDialects);
  TranslateFromMLIRRegistration blockTemplate(
      "spconv-to-block-template-ptx",
      "print the PTX of the one-channel-block template of the module's conv (placeholder "
      "weights; the input of spconv-stamp-ptx)",
      onModule(translateToBlockTemplate), registerSpconvToolDialects);
  TranslateFromMLIRRegistration compile(
      "spconv-compile",
      "compile spconv.conv2d ops to <prefix>.ptx and <prefix>.cubin and print the sidecar",
      onModule(compileAll), registerSpconvToolDialects);
  registerImportOnnxTranslation();
}
