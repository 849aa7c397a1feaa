//===- spconv-cpu-check.cpp - run the CPU template and check it numerically ---===//
//
// For every spconv.conv2d of a .mlir file: lowers it with convert-spconv-to-cpu (the same
// placeholder template as the GPU kernel, run serially), lowers that to the LLVM dialect,
// folds the real weights in with spconv-fold-weights, JIT-compiles the result and runs it on
// a random normal input, then compares the output with a direct convolution computed in
// double from the op's attributes. The output is poisoned with a NaN first (so elements the
// kernel never writes fail), and both buffers carry guard zones of that NaN (so out-of-bounds
// reads poison the result and out-of-bounds writes are seen). Non-finite reference values
// (NaN or Inf weights) must be matched exactly.
//
//   spconv-cpu-check conv.mlir [--seed S] [--block-k B --outputs-per-thread O --tile-p P
//                    --threads-q T --chunk-c C] [--strict-ieee] [--tolerance E]
//                    [--affine-pipeline PIPELINE]
//
// Prints per conv
//   PASS conv N: shape <ConvShape::str> tiling <Tiling::str> max-rel-err E fmas-kept K
//                fmas-deleted D
// (or FAIL ..., exit 1). max-rel-err = max|out - ref| / max(max|ref|, 1e-30). Besides the
// numbers it checks the fold's structure: every weight is one FMA per output column of a
// thread, so kept = nnz * outputs-per-thread and deleted = zeros * outputs-per-thread
// (kept = all, deleted = 0 with --strict-ieee), and no FMA by a constant 0 survives.
//
//===----------------------------------------------------------------------===//
#include "llvm/ADT/bit.h"
#include "spconv/Conversion/ConvTemplate/ConvShape.h"
#include "spconv/Conversion/ConvTemplate/KernelInfo.h"
#include "spconv/Conversion/ConvTemplate/Numerics.h"
#include "spconv/Conversion/Passes.h"
#include "spconv/Dialect/Spconv/IR/SpconvDialect.h"
#include "spconv/Dialect/Spconv/IR/SpconvOps.h"
#include "spconv/Runtime/ImagePairs.h"
#include "spconv/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Affine/Transforms/Passes.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/ExecutionEngine/CRunnerUtils.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"

#include <sys/mman.h>

#include <cmath>
#include <cstring>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

using namespace mlir;
using namespace spconv;

namespace cl = llvm::cl;

static cl::OptionCategory checkCategory("spconv-cpu-check options");

static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<input .mlir>"),
                                      cl::init("-"), cl::cat(checkCategory));
static cl::opt<uint64_t> seed("seed", cl::desc("Seed of the random normal input (default 1)"),
                              cl::init(1), cl::cat(checkCategory));
static cl::opt<int64_t> blockK("block-k", cl::desc("convert-spconv-to-cpu block-k (0 = heuristic)"),
                               cl::init(0), cl::cat(checkCategory));
static cl::opt<int64_t> outputsPerThread(
    "outputs-per-thread", cl::desc("convert-spconv-to-cpu outputs-per-thread (0 = heuristic)"),
    cl::init(0), cl::cat(checkCategory));
static cl::opt<int64_t> tileP("tile-p", cl::desc("convert-spconv-to-cpu tile-p (0 = heuristic)"),
                              cl::init(0), cl::cat(checkCategory));
static cl::opt<int64_t> threadsQ("threads-q",
                                 cl::desc("convert-spconv-to-cpu threads-q (0 = heuristic)"),
                                 cl::init(0), cl::cat(checkCategory));
static cl::opt<int64_t> chunkC("chunk-c", cl::desc("convert-spconv-to-cpu chunk-c (0 = heuristic)"),
                               cl::init(0), cl::cat(checkCategory));
static cl::opt<int64_t> splitC("split-c",
                               cl::desc("convert-spconv-to-cpu split-c (0 = heuristic)"),
                               cl::init(0), cl::cat(checkCategory));
static cl::opt<int64_t> chunkLoop("chunk-loop",
                                  cl::desc("convert-spconv-to-cpu chunk-loop (0 = heuristic, "
                                           "1 = straight-line, 2 = loop)"),
                                  cl::init(0), cl::cat(checkCategory));
static cl::opt<int64_t> imagesPerBlock(
    "images-per-block",
    cl::desc("convert-spconv-to-cpu images-per-block (0 = heuristic, 1 = one image)"),
    cl::init(0), cl::cat(checkCategory));
static cl::opt<int64_t> blockOrder(
    "block-order",
    cl::desc("convert-spconv-to-cpu block-order (0 = heuristic, 1 = (tiles, channel blocks, "
             "images), 2 = (tiles, images, channel blocks))"),
    cl::init(0), cl::cat(checkCategory));
static cl::opt<int64_t> asyncStaging(
    "async-staging",
    cl::desc("convert-spconv-to-cpu async-staging (0 = heuristic, 1 = one buffer, 2 = the "
             "GPU's cp.async form: the twin still loads and stores, but a chunk loop is "
             "double-buffered as on the GPU)"),
    cl::init(0), cl::cat(checkCategory));
static cl::opt<int64_t> columnOrder(
    "column-order",
    cl::desc("convert-spconv-to-cpu column-order (0 = heuristic, 1 = a thread's output "
             "columns strided by threads-q, 2 = adjacent, sharing their inputs)"),
    cl::init(0), cl::cat(checkCategory));
static cl::opt<int64_t> directInputs(
    "direct-inputs",
    cl::desc("convert-spconv-to-cpu direct-inputs (0 = heuristic, 1 = staged, 2 = read "
             "directly where the filter is 1x1 and a thread has one output)"),
    cl::init(0), cl::cat(checkCategory));
static cl::opt<int64_t> channelVector(
    "channel-vector",
    cl::desc("convert-spconv-to-cpu channel-vector (0 = heuristic, 1, 2 or 4 input channels "
             "interleaved in the staged tile and read together)"),
    cl::init(0), cl::cat(checkCategory));
static cl::opt<int64_t> dynamicShared(
    "dynamic-shared",
    cl::desc("convert-spconv-to-cpu dynamic-shared (0 = heuristic: 1; 2 = the GPU kernel's tiles "
             "in dynamic shared memory, up to 227 KB, which sets the chunks a GPU tiling keeps)"),
    cl::init(0), cl::cat(checkCategory));
static cl::opt<int64_t> clusterSplit(
    "cluster-split",
    cl::desc("convert-spconv-to-cpu cluster-split (0 = heuristic: 1; 2-8 blocks of a cluster "
             "splitting a tile's channels: the twin runs their groups in one block, in order)"),
    cl::init(0), cl::cat(checkCategory));
static cl::opt<int64_t> numSMs(
    "num-sms",
    cl::desc("convert-spconv-to-cpu num-sms: SMs of the GPU whose tiling the twin runs (0 = "
             "132, an H100 SXM's or H200's)"),
    cl::init(0), cl::cat(checkCategory));
static cl::opt<std::string> affinePipeline(
    "affine-pipeline",
    cl::desc("Leave the template's FMAs as affine nests (convert-spconv-to-cpu unroll=false), "
             "run this pass pipeline on the module (e.g. "
             "'func.func(affine-loop-unroll{unroll-factor=2})'), then spconv-unroll-template"),
    cl::init(""), cl::cat(checkCategory));
static cl::opt<bool> strictIEEE("strict-ieee",
                                cl::desc("spconv-fold-weights strict-ieee: keep zero FMAs"),
                                cl::init(false), cl::cat(checkCategory));
static cl::opt<double> tolerance("tolerance",
                                 cl::desc("Largest accepted max-rel-err (default 1e-5)"),
                                 cl::init(1e-5), cl::cat(checkCategory));
static cl::opt<unsigned> optLevel("O", cl::desc("LLVM optimisation level of the JIT (0-3)"),
                                  cl::init(2), cl::Prefix, cl::cat(checkCategory));
static cl::opt<bool> printIR("print-folded-ir",
                             cl::desc("Print the LLVM-dialect module after the fold to stderr"),
                             cl::init(false), cl::cat(checkCategory));

// Fault injection, to prove in tests that the check can fail.
static cl::opt<int64_t> testPerturbWeight(
    "test-perturb-weight",
    cl::desc("Testing: add 1 to this flat KCRS weight in the reference only (a wrong fold)"),
    cl::init(-1), cl::Hidden, cl::cat(checkCategory));
static cl::opt<int64_t> testPoisonOutput(
    "test-poison-output",
    cl::desc("Testing: re-poison this flat output element after the run (an unwritten one)"),
    cl::init(-1), cl::Hidden, cl::cat(checkCategory));

namespace {
/// What the check needs of one conv once its op is gone.
struct ConvCase {
  Location loc;
  ConvShape shape;
  Tiling tiling;
  std::string kernel;
  std::vector<float> weights; // KCRS
  std::vector<float> bias;    // K, or empty
  int64_t fmasBefore = 0, fmasKept = 0, fmasDeleted = 0, zeroFMAsLeft = 0;
};

/// The poison: a quiet NaN with a payload arithmetic never produces, so an unwritten output
/// is told apart from a NaN the kernel computed (from a NaN or Inf weight, say).
constexpr uint32_t kPoisonBits = 0x7FE5A5A5u;
/// Half precision's: a NaN both as an f16 and as a bf16.
constexpr uint16_t kHalfPoisonBits = 0x7FA5u;
template <typename T> static T poisonOf();
template <> float poisonOf<float>() { return llvm::bit_cast<float>(kPoisonBits); }
template <> uint16_t poisonOf<uint16_t>() { return kHalfPoisonBits; }
static bool isPoison(float f) { return llvm::bit_cast<uint32_t>(f) == kPoisonBits; }
static bool isPoison(uint16_t h) { return h == kHalfPoisonBits; }

/// A buffer with poisoned guard zones on both sides of the data, which catch stray writes,
/// placed so that its end touches an inaccessible page: a kernel reading more than kGuard
/// elements past the end (say, input channels past C) faults instead of reading whatever
/// the heap holds there. The page before the buffer is inaccessible too.
template <typename T> struct GuardedBuffer {
  static constexpr int64_t kGuard = 64;
  // llvm::sys::Memory cannot make a page inaccessible (it requires read or write), hence
  // plain mmap/mprotect.
  char *base = nullptr;
  size_t mappedBytes = 0;
  T *storage = nullptr;
  int64_t size;
  explicit GuardedBuffer(int64_t size) : size(size) {
    size_t page = llvm::sys::Process::getPageSizeEstimate();
    size_t bytes = (size + 2 * kGuard) * sizeof(T);
    size_t dataPages = (bytes + page - 1) / page;
    mappedBytes = (dataPages + 2) * page;
    void *p = mmap(nullptr, mappedBytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
      llvm::report_fatal_error("cannot map the check's buffers");
    base = static_cast<char *>(p);
    if (mprotect(base + page, dataPages * page, PROT_READ | PROT_WRITE) != 0)
      llvm::report_fatal_error("cannot map the check's buffers");
    storage = reinterpret_cast<T *>(base + (dataPages + 1) * page - bytes);
    std::fill(storage, storage + size + 2 * kGuard, poisonOf<T>());
  }
  GuardedBuffer(const GuardedBuffer &) = delete;
  GuardedBuffer &operator=(const GuardedBuffer &) = delete;
  ~GuardedBuffer() { munmap(base, mappedBytes); }
  T *data() { return storage + kGuard; }
  const T *data() const { return storage + kGuard; }
  bool guardsIntact() const {
    for (int64_t i = 0; i < kGuard; ++i)
      if (!isPoison(storage[i]) || !isPoison(storage[kGuard + size + i]))
        return false;
    return true;
  }
  StridedMemRefType<T, 4> descriptor(int64_t d0, int64_t d1, int64_t d2, int64_t d3) {
    StridedMemRefType<T, 4> m;
    m.basePtr = m.data = data();
    m.offset = 0;
    int64_t sizes[4] = {d0, d1, d2, d3};
    int64_t stride = 1;
    for (int i = 3; i >= 0; --i) {
      m.sizes[i] = sizes[i];
      m.strides[i] = stride;
      stride *= sizes[i];
    }
    return m;
  }
};
} // namespace

static int64_t countFMAs(Operation *kernel) {
  int64_t n = 0;
  kernel->walk([&](LLVM::FMAOp) { ++n; });
  return n;
}

/// FMAs with a constant +-0.0 multiplicand, which the fold should have deleted.
static int64_t countZeroFMAs(Operation *kernel) {
  int64_t n = 0;
  kernel->walk([&](LLVM::FMAOp fma) {
    for (Value v : {fma.getA(), fma.getB()}) {
      auto c = v.getDefiningOp<LLVM::ConstantOp>();
      auto f = c ? llvm::dyn_cast<FloatAttr>(c.getValue()) : FloatAttr();
      // Half precision: the word (w, w) of a zero weight.
      auto word = c ? llvm::dyn_cast<DenseFPElementsAttr>(c.getValue()) : DenseFPElementsAttr();
      bool zeroWord = word && llvm::all_of(word.getValues<APFloat>(),
                                           [](const APFloat &h) { return h.isZero(); });
      if ((f && f.getValue().isZero()) || zeroWord) {
        ++n;
        return;
      }
    }
  });
  return n;
}

/// The direct convolution in double over the zero-padded input, NCHW x K(C/groups)RS -> NKPQ,
/// bias then the activation. Output channel k reads the input channels of its group only.
/// The conv in double from its attributes, plus `residual` (NCHW, the output's shape) where
/// the op has one, then the activation; with `absolute`, the same of |input|, |weights|,
/// |bias| and |residual| (the bound's scale), without the activation.
static std::vector<double> reference(const ConvCase &cc, const float *in,
                                     const float *residual, bool absolute = false) {
  const ConvShape s = cc.shape.logical();
  std::vector<double> out(s.n * s.k * s.p * s.q);
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t k = 0; k < s.k; ++k)
      for (int64_t p = 0; p < s.p; ++p)
        for (int64_t q = 0; q < s.q; ++q) {
          double acc = cc.bias.empty() ? 0.0 : double(cc.bias[k]);
          if (absolute)
            acc = std::fabs(acc);
          int64_t cFirst = k / s.kpg() * s.cpg();
          for (int64_t cg = 0; cg < s.cpg(); ++cg)
            for (int64_t r = 0; r < s.r; ++r)
              for (int64_t x0 = 0; x0 < s.s; ++x0) {
                int64_t y = p * s.sh - s.pt + r * s.dh;
                int64_t x = q * s.sw - s.pl + x0 * s.dw;
                // The padding is multiplied in as 0.0, not skipped: the same for finite
                // weights, and Inf * padding = NaN as in a dense conv over the padded input.
                bool inside = y >= 0 && y < s.h && x >= 0 && x < s.w;
                int64_t c = cFirst + cg;
                double v = inside ? double(in[((n * s.c + c) * s.h + y) * s.w + x]) : 0.0;
                double w = cc.weights[((k * s.cpg() + cg) * s.r + r) * s.s + x0];
                acc += absolute ? std::fabs(w * v) : w * v;
              }
          int64_t at = ((n * s.k + k) * s.p + p) * s.q + q;
          if (residual)
            acc += absolute ? std::fabs(double(residual[at])) : double(residual[at]);
          if (absolute) {
            out[at] = acc;
            continue;
          }
          if (s.activation != Epilogue::none && !std::isnan(acc)) // maximumf: NaN propagates
            acc = std::max(acc, 0.0);
          if (s.activation == Epilogue::relu6 && !std::isnan(acc))
            acc = std::min(acc, 6.0);
          out[((n * s.k + k) * s.p + p) * s.q + q] = acc;
        }
  return out;
}

/// Calls a JIT'd kernel (the C interface of its memrefs): (input, output), or (input,
/// residual, output) where the conv has a residual.
template <typename T>
static void callKernel(void *fn, StridedMemRefType<T, 4> *in, StridedMemRefType<T, 4> *residual,
                       StridedMemRefType<T, 4> *out) {
  using Fn2 = void (*)(StridedMemRefType<T, 4> *, StridedMemRefType<T, 4> *);
  using Fn3 =
      void (*)(StridedMemRefType<T, 4> *, StridedMemRefType<T, 4> *, StridedMemRefType<T, 4> *);
  if (residual)
    reinterpret_cast<Fn3>(fn)(in, residual, out);
  else
    reinterpret_cast<Fn2>(fn)(in, out);
}

/// Where element e (row-major NCHW index) of a tensor of n images of `perImage` elements
/// lies in a buffer of layout l (ConvShape.h, Layout).
static int64_t storedAt(Layout l, int64_t e, int64_t n, int64_t perImage) {
  return l == Layout::imagePairs ? runtime::imagePairsIndex(e, n, perImage) : e;
}

static const llvm::fltSemantics &halfSemantics(Precision p) {
  return p == Precision::bf16 ? llvm::APFloat::BFloat() : llvm::APFloat::IEEEhalf();
}
/// f32 to f16/bf16 bits, to nearest, ties to even (what the kernel's input holds), and back.
static uint16_t toHalfBits(float v, const llvm::fltSemantics &sem) {
  llvm::APFloat f(v);
  bool lost;
  f.convert(sem, llvm::APFloat::rmNearestTiesToEven, &lost);
  return uint16_t(f.bitcastToAPInt().getZExtValue());
}
static float fromHalfBits(uint16_t bits, const llvm::fltSemantics &sem) {
  llvm::APFloat f(sem, llvm::APInt(16, bits));
  bool lost;
  f.convert(llvm::APFloat::IEEEsingle(), llvm::APFloat::rmNearestTiesToEven, &lost);
  return f.convertToFloat();
}

static std::string fmt(double v) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << llvm::format("%.3e", v);
  return s;
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  cl::HideUnrelatedOptions(checkCategory);
  cl::ParseCommandLineOptions(
      argc, argv,
      "spconv-cpu-check: run every spconv.conv2d of a file through convert-spconv-to-cpu, "
      "spconv-fold-weights and the JIT, and compare with a double-precision reference\n");

  for (auto *opt : {&blockK, &outputsPerThread, &tileP, &threadsQ, &chunkC, &splitC, &chunkLoop,
                    &imagesPerBlock, &blockOrder, &asyncStaging, &columnOrder, &directInputs,
                    &channelVector, &dynamicShared, &clusterSplit, &numSMs})
    if (*opt < 0) {
      llvm::errs() << "spconv-cpu-check: error: --" << opt->ArgStr
                   << " must be >= 0 (0 = heuristic), got " << *opt << "\n";
      return 1;
    }
  if (optLevel > 3) {
    llvm::errs() << "spconv-cpu-check: error: -O must be 0..3\n";
    return 1;
  }

  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  // What --affine-pipeline may name: the affine transformations and spconv's passes.
  affine::registerAffinePasses();
  registerSpconvTransformsPasses();

  DialectRegistry registry;
  registry.insert<SpconvDialect, arith::ArithDialect, cf::ControlFlowDialect,
                  func::FuncDialect, LLVM::LLVMDialect, memref::MemRefDialect,
                  scf::SCFDialect, tensor::TensorDialect>();
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  MLIRContext context(registry);
  context.printOpOnDiagnostic(false);
  context.loadAllAvailableDialects();

  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagHandler(sourceMgr, &context);
  std::string errorMessage;
  auto file = openInputFile(inputFile, &errorMessage);
  if (!file) {
    llvm::errs() << "spconv-cpu-check: error: " << errorMessage << "\n";
    return 1;
  }
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1;

  SmallVector<Conv2DOp> convs;
  module->walk([&](Conv2DOp op) { convs.push_back(op); });
  if (convs.empty()) {
    emitError(module->getLoc(), "no spconv.conv2d op to check");
    return 1;
  }
  for (Conv2DOp op : convs)
    if (op->hasAttr(kKernelAttr)) {
      op.emitError("is already lowered (has '") << kKernelAttr << "')";
      return 1;
    }

  // 1. The placeholder template, with the tiling overrides.
  {
    PassManager pm(&context);
    ConvertSpconvToCPUOptions options;
    options.blockK = blockK;
    options.outputsPerThread = outputsPerThread;
    options.tileP = tileP;
    options.threadsQ = threadsQ;
    options.chunkC = chunkC;
    options.splitC = splitC;
    options.chunkLoop = chunkLoop;
    options.imagesPerBlock = imagesPerBlock;
    options.blockOrder = blockOrder;
    options.asyncStaging = asyncStaging;
    options.columnOrder = columnOrder;
    options.directInputs = directInputs;
    options.channelVector = channelVector;
    options.dynamicShared = dynamicShared;
    options.clusterSplit = clusterSplit;
    options.numSMs = numSMs;
    options.unroll = affinePipeline.empty();
    pm.addPass(createConvertSpconvToCPU(options));
    if (!affinePipeline.empty()) {
      if (failed(parsePassPipeline(affinePipeline, pm, llvm::errs())))
        return 1;
      pm.addPass(createSpconvUnrollTemplate());
    }
    if (failed(pm.run(*module)))
      return 1;
  }

  // Record what the check needs, then drop everything but the kernels: the host functions
  // holding the convs (tensors, which would not lower) and any other top-level op. The
  // module keeps its spconv.weights attribute for the fold.
  std::vector<ConvCase> cases;
  llvm::StringSet<> kernels;
  for (Conv2DOp op : convs) {
    auto kernel = op->getAttrOfType<FlatSymbolRefAttr>(kKernelAttr);
    auto launch = op->getAttrOfType<DictionaryAttr>(kLaunchAttr);
    if (!kernel || !launch) {
      op.emitError("convert-spconv-to-cpu did not tag this op with its kernel");
      return 1;
    }
    ConvCase cc{op.getLoc(), ConvShape::fromOp(op), tilingFromLaunchAttr(launch),
                kernel.getValue().str(), {}, {}};
    FailureOr<std::vector<float>> w = readF32Elements(op.getWeights());
    if (failed(w)) {
      op.emitError("cannot read the f32 weights (missing or truncated dense_resource?)");
      return 1;
    }
    cc.weights = std::move(*w);
    if (auto b = op.getBiasAttr()) {
      FailureOr<std::vector<float>> bv = readF32Elements(b);
      if (failed(bv)) {
        op.emitError("cannot read the f32 bias");
        return 1;
      }
      cc.bias = std::move(*bv);
    }
    kernels.insert(cc.kernel);
    cases.push_back(std::move(cc));
  }
  convs.clear();
  for (Operation &op : llvm::make_early_inc_range(module->getBody()->getOperations())) {
    auto fn = llvm::dyn_cast<func::FuncOp>(op);
    if (!fn || !kernels.contains(fn.getSymName()))
      op.erase();
  }

  // 2. Down to the LLVM dialect.
  {
    PassManager pm(&context);
    pm.addPass(createSCFToControlFlowPass());
    pm.addPass(createArithToLLVMConversionPass());
    pm.addPass(createConvertControlFlowToLLVMPass());
    pm.addPass(createFinalizeMemRefToLLVMConversionPass());
    pm.addPass(createConvertFuncToLLVMPass());
    pm.addPass(createReconcileUnrealizedCastsPass());
    if (failed(pm.run(*module)))
      return 1;
  }
  auto lookupKernel = [&](ConvCase &cc) -> Operation * {
    Operation *k = SymbolTable::lookupSymbolIn(*module, cc.kernel);
    if (!k)
      emitError(cc.loc, "kernel '") << cc.kernel << "' vanished during the lowering";
    return k;
  };
  for (ConvCase &cc : cases) {
    Operation *k = lookupKernel(cc);
    if (!k)
      return 1;
    cc.fmasBefore = countFMAs(k);
  }

  // 3. Fold the real weights in.
  {
    PassManager pm(&context);
    SpconvFoldWeightsOptions options;
    options.strictIEEE = strictIEEE;
    pm.addPass(createSpconvFoldWeights(options));
    if (failed(pm.run(*module)))
      return 1;
  }
  for (ConvCase &cc : cases) {
    Operation *k = lookupKernel(cc);
    if (!k)
      return 1;
    cc.fmasKept = countFMAs(k);
    cc.fmasDeleted = cc.fmasBefore - cc.fmasKept;
    cc.zeroFMAsLeft = countZeroFMAs(k);
  }
  if (printIR)
    module->print(llvm::errs());

  // 4. JIT.
  ExecutionEngineOptions engineOptions;
  auto transformer = makeOptimizingTransformer(optLevel, /*sizeLevel=*/0, nullptr);
  engineOptions.transformer = transformer;
  engineOptions.jitCodeGenOptLevel = static_cast<llvm::CodeGenOptLevel>(unsigned(optLevel));
  auto engine = ExecutionEngine::create(*module, engineOptions);
  if (!engine) {
    emitError(module->getLoc(), "cannot JIT the folded module: ")
        << llvm::toString(engine.takeError());
    return 1;
  }

  // 5. Run and compare.
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  bool allPass = true;
  for (size_t i = 0; i < cases.size(); ++i) {
    ConvCase &cc = cases[i];
    const ConvShape s = cc.shape.logical();
    std::string symbol = "_mlir_ciface_" + cc.kernel;
    auto fnOrErr = (*engine)->lookup(symbol);
    if (!fnOrErr) {
      emitError(cc.loc, "cannot find '") << symbol << "' in the JIT: "
                                         << llvm::toString(fnOrErr.takeError());
      return 1;
    }
    // The kernel's input and output: f32, or f16/bf16 bits (the logical shape: a
    // half-precision kernel's word shape is internal to it).
    bool half = cc.shape.isHalf();
    int64_t inSize = s.n * s.c * s.h * s.w, outSize = s.n * s.k * s.p * s.q;
    std::vector<float> inValues(inSize), outValues(outSize);
    std::vector<bool> unwrittenAt(outSize);
    for (float &v : inValues)
      v = normal(rng);
    // The residual (ConvShape::residual), the output's shape and layout, drawn after the
    // input so that convs without one see the inputs they saw before.
    bool hasResidual = cc.shape.residual;
    std::vector<float> resValues(hasResidual ? outSize : 0);
    for (float &v : resValues)
      v = normal(rng);
    bool guardsIntact;
    ConvCase refCase = cc;
    if (!half) {
      GuardedBuffer<float> in(inSize), out(outSize), res(resValues.size());
      std::copy(inValues.begin(), inValues.end(), in.data());
      std::copy(resValues.begin(), resValues.end(), res.data());
      auto inDesc = in.descriptor(s.n, s.c, s.h, s.w);
      auto outDesc = out.descriptor(s.n, s.k, s.p, s.q);
      auto resDesc = res.descriptor(s.n, s.k, s.p, s.q);
      callKernel(*fnOrErr, &inDesc, hasResidual ? &resDesc : nullptr, &outDesc);
      if (testPoisonOutput >= 0 && testPoisonOutput < out.size)
        out.data()[testPoisonOutput] = poisonOf<float>();
      for (int64_t e = 0; e < outSize; ++e) {
        outValues[e] = out.data()[e];
        unwrittenAt[e] = isPoison(out.data()[e]);
      }
      guardsIntact = in.guardsIntact() && out.guardsIntact() && res.guardsIntact();
    } else {
      const llvm::fltSemantics &sem = halfSemantics(cc.shape.precision);
      GuardedBuffer<uint16_t> in(inSize), out(outSize), res(resValues.size());
      // Logical NCHW element e lies at storedAt(...) of its buffer (the conv's layout).
      Layout layout = cc.shape.layout;
      for (int64_t e = 0; e < inSize; ++e) {
        uint16_t &h = in.data()[storedAt(layout, e, s.n, s.c * s.h * s.w)];
        h = toHalfBits(inValues[e], sem);
        inValues[e] = fromHalfBits(h, sem);
      }
      for (size_t e = 0; e < resValues.size(); ++e) {
        uint16_t &h = res.data()[storedAt(layout, e, s.n, s.k * s.p * s.q)];
        h = toHalfBits(resValues[e], sem);
        resValues[e] = fromHalfBits(h, sem);
      }
      auto inDesc = in.descriptor(s.n, s.c, s.h, s.w);
      auto outDesc = out.descriptor(s.n, s.k, s.p, s.q);
      auto resDesc = res.descriptor(s.n, s.k, s.p, s.q);
      callKernel(*fnOrErr, &inDesc, hasResidual ? &resDesc : nullptr, &outDesc);
      if (testPoisonOutput >= 0 && testPoisonOutput < out.size)
        out.data()[testPoisonOutput] = poisonOf<uint16_t>();
      for (int64_t e = 0; e < outSize; ++e) {
        uint16_t h = out.data()[storedAt(layout, e, s.n, s.k * s.p * s.q)];
        outValues[e] = fromHalfBits(h, sem);
        unwrittenAt[e] = isPoison(h);
      }
      guardsIntact = in.guardsIntact() && out.guardsIntact() && res.guardsIntact();
      // The reference computes with what the kernel computes with: the weights and bias
      // rounded to its type (spconv-fold-weights refused the compile otherwise).
      int64_t crossed;
      Type elem = cc.shape.precision == Precision::f16 ? Type(Float16Type::get(&context))
                                                       : Type(BFloat16Type::get(&context));
      refCase.weights = *roundToPrecision(cc.weights, elem, crossed);
      refCase.bias = *roundToPrecision(cc.bias, elem, crossed);
    }

    if (testPerturbWeight >= 0 && testPerturbWeight < int64_t(cc.weights.size()))
      refCase.weights[testPerturbWeight] += 1.0f;
    const float *resPtr = hasResidual ? resValues.data() : nullptr;
    std::vector<double> ref = reference(refCase, inValues.data(), resPtr);
    // Half precision: the stated bound (docs/design.md, "Half precision") instead of a
    // relative tolerance: unit roundoff x terms x the conv of the absolute values.
    std::vector<double> absRef;
    double unitRoundoff = 0, tiny = 0;
    int64_t terms = 0;
    if (half) {
      absRef = reference(refCase, inValues.data(), resPtr, /*absolute=*/true);
      HalfNumerics bound = halfNumerics(cc.shape, cc.tiling, cc.weights);
      unitRoundoff = bound.unitRoundoff;
      tiny = bound.tiny;
      terms = bound.errorTerms;

    }
    double maxRef = 0.0, maxErr = 0.0, maxBoundRatio = 0.0;
    int64_t worst = -1, unwritten = 0;
    for (int64_t e = 0; e < outSize; ++e) {
      double o = outValues[e], r = ref[e];
      if (std::isfinite(r))
        maxRef = std::max(maxRef, std::fabs(r));
      double err;
      if (unwrittenAt[e]) {
        ++unwritten;
        err = std::numeric_limits<double>::infinity();
      } else if (std::isnan(r) || std::isinf(r) || std::isnan(o) || std::isinf(o)) {
        // Non-finite values must match exactly (NaN matches NaN: NaN or Inf weights).
        bool same = (std::isnan(r) && std::isnan(o)) || o == r;
        err = same ? 0.0 : std::numeric_limits<double>::infinity();
      } else {
        err = std::fabs(o - r);
      }
      if (half) {
        double bound = unitRoundoff * terms * absRef[e] + terms * tiny;
        maxBoundRatio = std::max(maxBoundRatio, err / bound);
      }
      if (worst < 0 || err > maxErr) {
        maxErr = err;
        worst = e;
      }
    }
    double relErr = maxErr / std::max(maxRef, 1e-30);

    int64_t nnz = 0;
    for (float w : cc.weights)
      nnz += w != 0.0f;
    int64_t opt = cc.tiling.outputsPerThread;
    int64_t wantKept = (strictIEEE ? int64_t(cc.weights.size()) : nnz) * opt;
    int64_t wantDeleted = int64_t(cc.weights.size()) * opt - wantKept;

    std::vector<std::string> problems;
    if (!half && !(relErr <= tolerance))
      problems.push_back("max-rel-err above tolerance " + fmt(tolerance));
    if (half && !(maxBoundRatio <= 1.0))
      problems.push_back("an output is " + fmt(maxBoundRatio) + " x the stated error bound (" +
                         std::to_string(terms) + " terms)");
    if (unwritten)
      problems.push_back(std::to_string(unwritten) + " outputs never written (still poison)");
    if (!guardsIntact)
      problems.push_back("a guard zone around the buffers was overwritten");
    if (cc.fmasKept != wantKept || cc.fmasDeleted != wantDeleted)
      problems.push_back("expected fmas-kept " + std::to_string(wantKept) + " fmas-deleted " +
                         std::to_string(wantDeleted) + " (" + std::to_string(nnz) +
                         " nonzero weights x " + std::to_string(opt) +
                         " outputs per thread)");
    if (!strictIEEE && cc.zeroFMAsLeft)
      problems.push_back(std::to_string(cc.zeroFMAsLeft) + " FMAs by a constant 0 survived");
    bool pass = problems.empty();
    allPass &= pass;

    llvm::outs() << (pass ? "PASS" : "FAIL") << " conv " << i << ": shape " << cc.shape.str()
                 << " tiling " << cc.tiling.str() << " max-rel-err " << fmt(relErr)
                 << (half ? " of-bound " + fmt(maxBoundRatio) : std::string())
                 << " fmas-kept " << cc.fmasKept << " fmas-deleted " << cc.fmasDeleted << "\n";
    if (!pass) {
      int64_t e = worst;
      int64_t q = e % s.q, p = (e / s.q) % s.p, k = (e / (s.q * s.p)) % s.k,
              n = e / (s.q * s.p * s.k);
      llvm::outs() << "  worst at [" << n << "," << k << "," << p << "," << q << "]: got "
                   << fmt(outValues[e]) << " want " << fmt(ref[e]) << " (max|ref| "
                   << fmt(maxRef) << ")\n";
      for (const std::string &p : problems)
        llvm::outs() << "  " << p << "\n";
    }
  }
  llvm::outs().flush();
  return allPass ? 0 : 1;
}
