//===- spconv-mlir-fuzzer.cpp - .mlir text through spconv-opt's passes ----===//
//
// Input: a .mlir file, as spconv-opt reads it (spconv::terminateParserInput and
// checkParserInput, then placed against a guard page). Parsed and verified; when its convs
// are small (withinFuzzBudget), each of the pipelines a user runs on a conv with
// spconv-opt runs on a copy of the module:
//   spconv-import-linalg, then on its result:
//   spconv-sparsity-stats
//   convert-spconv-to-cpu (the serial host twin)
//   spconv-compile-kernels{cache-dir=none} (template, NVVM lowering, weight fold)
//   convert-spconv-to-gpu, the NVVM lowering and spconv-fold-weights (the same steps as
//     separate passes, as in the README)
//   spconv-fold-weights alone (on whatever LLVM-dialect IR the input holds)
// Failures are expected and ignored; crashes and sanitizer reports are findings.
//
//===----------------------------------------------------------------------===//
#include "../common/MLIRInput.h"

#include "spconv/Conversion/Passes.h"
#include "spconv/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cstddef>
#include <cstdint>
#include <string>

using namespace mlir;

namespace {
/// Where spconv-sparsity-stats writes its report: a scratch file, so the fuzzer's output
/// stays readable (ToolOutputFile would delete a device such as /dev/null on failure).
std::string statsPath;

void runPipeline(ModuleOp module, llvm::StringRef pipeline) {
  OwningOpRef<ModuleOp> copy(module.clone());
  PassManager pm(copy->getContext());
  if (failed(parsePassPipeline(pipeline, pm, llvm::errs())))
    __builtin_trap(); // the pipelines below are fixed; a typo must not pass silently
  (void)pm.run(*copy);
  // Printing walks every attribute the passes made; keep it in the run.
  copy->print(llvm::nulls());
}
} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  spconv::registerSpconvTransformsPasses();
  spconv::registerSpconvConversionPasses();
  mlir::registerConversionPasses();
  llvm::SmallString<128> dir;
  if (llvm::sys::fs::createUniqueDirectory("spconv-mlir-fuzzer", dir))
    __builtin_trap();
  llvm::sys::path::append(dir, "stats.txt");
  statsPath = std::string(dir);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::unique_ptr<MLIRContext> ctx = spconv::fuzz::makeContext();
  OwningOpRef<ModuleOp> parsed = spconv::fuzz::parseInput(
      llvm::StringRef(reinterpret_cast<const char *>(data), size), *ctx);
  if (!parsed || !spconv::fuzz::withinFuzzBudget(*parsed))
    return 0;
  PassManager import(ctx.get());
  if (failed(parsePassPipeline("builtin.module(spconv-import-linalg)", import, llvm::errs())))
    __builtin_trap();
  if (failed(import.run(*parsed)) || !spconv::fuzz::withinFuzzBudget(*parsed))
    return 0;
  runPipeline(*parsed, "builtin.module(spconv-sparsity-stats{output=" + statsPath + "})");
  runPipeline(*parsed, "builtin.module(convert-spconv-to-cpu)");
  runPipeline(*parsed, "builtin.module(spconv-compile-kernels{cache-dir=none})");
  runPipeline(*parsed, "builtin.module(convert-spconv-to-gpu, gpu.module(convert-scf-to-cf, "
                       "convert-gpu-to-nvvm{index-bitwidth=32 use-bare-ptr-memref-call-conv}), "
                       "spconv-fold-weights)");
  runPipeline(*parsed, "builtin.module(spconv-fold-weights)");
  return 0;
}
