//===- MLIRInput.cpp - MLIR text from a fuzzer, parsed as the tools do ----===//
#include "MLIRInput.h"
#include "GuardedBuffer.h"

#include "spconv/Conversion/ConvTemplate/ConvShape.h"
#include "spconv/Dialect/Spconv/IR/SpconvOps.h"
#include "spconv/Support/ParserInput.h"
#include "spconv/Target/TranslateRegistration.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

using namespace mlir;
using namespace spconv;

static bool verbose() {
  static const bool value = [] {
    const char *env = std::getenv("SPCONV_FUZZ_VERBOSE");
    return env && *env && *env != '0';
  }();
  return value;
}

std::unique_ptr<MLIRContext> fuzz::makeContext() {
  DialectRegistry registry;
  registerSpconvToolDialects(registry);
  auto ctx = std::make_unique<MLIRContext>(registry, MLIRContext::Threading::DISABLED);
  ctx->getDiagEngine().registerHandler([](Diagnostic &diag) {
    if (verbose())
      llvm::errs() << diag.getLocation() << ": " << diag << "\n";
    return success();
  });
  return ctx;
}

OwningOpRef<ModuleOp> fuzz::parseInput(llvm::StringRef bytes, MLIRContext &ctx) {
  std::unique_ptr<llvm::MemoryBuffer> terminated =
      terminateParserInput(llvm::MemoryBuffer::getMemBufferCopy(bytes, "fuzz-input"));
  // The tools refuse what MLIR would abort on (openParserInput); so does the fuzzer.
  if (!checkParserInput(*terminated, nullptr))
    return nullptr;
  GuardedBuffer guarded(terminated->getBuffer(), /*nulTerminated=*/true);
  auto sourceMgr = std::make_shared<llvm::SourceMgr>();
  sourceMgr->AddNewSourceBuffer(guarded.memoryBuffer("fuzz-input"), llvm::SMLoc());
  ParserConfig config(&ctx);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, config);
  // Resource blobs and attributes are copied into the context while parsing; what stays in
  // the module never points into the guarded bytes, which are unmapped on return. (MLIR's
  // text parser copies dense_resource blobs; dense<> literals become uniqued attributes.)
  return module;
}

/// Elements of a statically shaped tensor type, or -1 (dynamic, or not a tensor).
static int64_t numElements(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return -1;
  return tensor.getNumElements();
}

bool fuzz::withinFuzzBudget(ModuleOp module) {
  constexpr int64_t kMaxWeights = 1024, kMaxOutputs = 4096, kMaxTensor = 16384;
  WalkResult result = module.walk([&](Operation *op) {
    if (auto conv = dyn_cast<Conv2DOp>(op)) {
      ConvShape s = ConvShape::fromOp(conv);
      if (s.n > 2 || s.c > 64 || s.k > 64 || s.r > 7 || s.s > 7 || s.h > 64 || s.w > 64 ||
          s.c * s.r * s.s * s.k > kMaxWeights || s.n * s.k * s.p * s.q > kMaxOutputs)
        return WalkResult::interrupt();
      return WalkResult::advance();
    }
    // Anything that spconv-import-linalg could turn into a conv, and any constant it would
    // fold, is bounded by the size of the tensors involved.
    for (Type type : op->getResultTypes())
      if (numElements(type) > kMaxTensor)
        return WalkResult::interrupt();
    for (Type type : op->getOperandTypes())
      if (numElements(type) > kMaxTensor)
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return !result.wasInterrupted();
}
