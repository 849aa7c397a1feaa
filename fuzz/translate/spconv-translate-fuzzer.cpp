//===- spconv-translate-fuzzer.cpp - .mlir text to PTX and the sidecar -----===//
//
// Input: a .mlir file, as spconv-translate reads it. When its convs are small
// (withinFuzzBudget), a copy of the module goes through what
//   spconv-translate --spconv-to-ptx --cache-dir=none --fold-at=ptx
//   spconv-translate --spconv-to-launch-json --cache-dir=none --fold-at=ptx
// run (emitPTX, then launchSidecar on the same module), and another copy through the same
// with --fold-at=llvm. No ptxas runs. The template cache is the process-wide memory tier,
// so inputs of one shape after the first take the cache-hit path, as a compile of a second
// weight pattern does. A small code budget makes kernels split into pieces more often.
//
//===----------------------------------------------------------------------===//
#include "../common/MLIRInput.h"

#include "spconv/Target/KernelArtifacts.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <cstddef>
#include <cstdint>

using namespace mlir;
using namespace spconv;

static void translate(ModuleOp module, FoldLevel foldAt) {
  OwningOpRef<ModuleOp> copy(module.clone());
  ArtifactOptions options;
  options.cacheDir = "none";
  options.foldAt = foldAt;
  options.codeBudget = 2048;
  options.jobs = 1;
  FailureOr<std::string> ptx = emitPTX(*copy, options);
  if (failed(ptx))
    return;
  FailureOr<llvm::json::Object> json = launchSidecar(*copy, options, "", "", nullptr);
  if (failed(json))
    return;
  llvm::nulls() << *ptx << llvm::formatv("{0:2}", llvm::json::Value(std::move(*json)));
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::unique_ptr<MLIRContext> ctx = fuzz::makeContext();
  OwningOpRef<ModuleOp> module =
      fuzz::parseInput(llvm::StringRef(reinterpret_cast<const char *>(data), size), *ctx);
  if (!module || !fuzz::withinFuzzBudget(*module))
    return 0;
  translate(*module, FoldLevel::PTX);
  translate(*module, FoldLevel::LLVM);
  return 0;
}
