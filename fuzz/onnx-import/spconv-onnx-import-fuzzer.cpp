//===- spconv-onnx-import-fuzzer.cpp - ONNX model files through --import-onnx ---===//
//
// Input: the bytes of an ONNX model file, as `spconv-translate --import-onnx` reads it
// (binary: passed on untouched, no text checks). They go to spconv::importOnnxModel, the
// function behind the translation: protobuf parse (ModelReader), --onnx-batch and
// --onnx-input-shape, ONNX shape inference, per-Conv geometry, BN folding and activation
// fusion, MLIR emission, the verifier and the JSON listing. The module it returns is
// printed as the driver prints it.
//
// Options: a hash of the input picks them, so one input always runs the same way, and a
// mutation of a model gets to try the others: no options, a listing, --onnx-batch (small,
// or huge), and --onnx-input-shape for the name "x" (what the seeds call their input).
//
// Oracle, besides crashes, sanitizer reports, timeouts and out-of-memory: a null module
// must come with at least one error located in the model file (file:line:col or file:),
// and a module must verify. Either violation aborts.
//
// Files: the model's identifier is a path in a scratch directory made for this process
// (removed at exit), so external data resolves there and nowhere else; the directory
// holds `data.bin` and `data/weights.bin` (4 KiB of floats, half of them zero) for the
// seeds that use external data, and the listing is written there.
//
//===----------------------------------------------------------------------===//
#include "../common/GuardedBuffer.h"

#include "spconv/Target/ImportOnnx.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

using namespace mlir;
using namespace spconv;

namespace {
std::string scratchDir;
std::string modelPath;
std::string listingPath;

bool verbose() {
  static const bool value = [] {
    const char *env = std::getenv("SPCONV_FUZZ_VERBOSE");
    return env && *env && *env != '0';
  }();
  return value;
}

void writeFile(const std::string &path, llvm::StringRef bytes) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec) {
    fprintf(stderr, "onnx-import fuzzer: cannot write %s: %s\n", path.c_str(),
            ec.message().c_str());
    abort();
  }
  os << bytes;
}

void removeScratch() {
  if (!scratchDir.empty())
    (void)llvm::sys::fs::remove_directories(scratchDir);
}

/// Whether `loc` points into the model file (the importer's error locations).
bool inModelFile(Location loc) {
  if (auto name = dyn_cast<NameLoc>(loc))
    loc = name.getChildLoc();
  auto file = dyn_cast<FileLineColLoc>(loc);
  return file && file.getFilename().getValue() == modelPath;
}

uint64_t hashBytes(const uint8_t *data, size_t size) {
  uint64_t h = 1469598103934665603ull; // FNV-1a
  for (size_t i = 0; i < size; ++i)
    h = (h ^ data[i]) * 1099511628211ull;
  return h;
}
} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  llvm::SmallString<128> dir;
  if (llvm::sys::fs::createUniqueDirectory("spconv-onnx-fuzzer", dir)) {
    fprintf(stderr, "onnx-import fuzzer: cannot create a scratch directory\n");
    abort();
  }
  scratchDir = std::string(dir);
  std::atexit(removeScratch);
  llvm::SmallString<128> path(dir);
  llvm::sys::path::append(path, "model.onnx");
  modelPath = std::string(path);
  path = dir;
  llvm::sys::path::append(path, "listing.json");
  listingPath = std::string(path);
  // External data for the seeds that use it: little-endian floats, every other one zero.
  std::string data;
  for (uint32_t i = 0; i < 1024; ++i) {
    float f = i % 2 ? 0.0f : 0.25f * float(int(i % 17) - 8);
    uint32_t bits;
    memcpy(&bits, &f, 4);
    for (int b = 0; b < 4; ++b)
      data.push_back(char((bits >> (8 * b)) & 0xff));
  }
  path = dir;
  llvm::sys::path::append(path, "data.bin");
  writeFile(std::string(path), data);
  path = dir;
  llvm::sys::path::append(path, "data");
  if (llvm::sys::fs::create_directory(path))
    abort();
  llvm::sys::path::append(path, "weights.bin");
  writeFile(std::string(path), data);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint64_t h = hashBytes(data, size);
  OnnxImportOptions options;
  switch (h % 5) {
  case 0: break;
  case 1: options.listingPath = listingPath; break;
  case 2: {
    static const int64_t batches[] = {1, 2, 3, 7, int64_t(1) << 31, INT64_MAX};
    options.batch = batches[(h >> 8) % 6];
    options.listingPath = listingPath;
    break;
  }
  case 3:
  case 4: {
    // What parseOnnxInputShape would give for --onnx-input-shape=x:NxCxHxW (or a rank
    // other than 4), after an --onnx-batch when bit 8 is set.
    if ((h >> 8) & 1)
      options.batch = 1 + ((h >> 9) & 3);
    llvm::SmallVector<int64_t> dims;
    unsigned rank = (h >> 11) % 8 == 0 ? 3 : 4;
    for (unsigned i = 0; i < rank; ++i)
      dims.push_back(1 + ((h >> (14 + 4 * i)) & 15));
    if ((h >> 40) % 16 == 0)
      dims[2] = int64_t(1) << 40;
    options.inputShapes.emplace_back("x", std::move(dims));
    if (h % 5 == 4)
      options.listingPath = listingPath;
    break;
  }
  }

  MLIRContext context(MLIRContext::Threading::DISABLED);
  bool located = false;
  context.getDiagEngine().registerHandler([&](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Error && inModelFile(diag.getLocation()))
      located = true;
    if (verbose())
      llvm::errs() << diag.getLocation() << ": " << diag << "\n";
    return success();
  });

  // Protobuf and ONNX come from Debian, uninstrumented: a read past the end of the model
  // inside them faults on the guard page.
  fuzz::GuardedBuffer guarded(llvm::StringRef(reinterpret_cast<const char *>(data), size),
                              /*nulTerminated=*/false);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(guarded.memoryBuffer(modelPath), llvm::SMLoc());
  OwningOpRef<ModuleOp> module = importOnnxModel(sourceMgr, &context, options);
  if (!module) {
    if (!located) {
      fprintf(stderr, "onnx-import fuzzer: the import failed without an error located in "
                      "the model file\n");
      abort();
    }
    return 0;
  }
  if (failed(verify(*module))) {
    fprintf(stderr, "onnx-import fuzzer: the importer returned a module that does not "
                    "verify\n");
    abort();
  }
  // What the driver does with it.
  module->print(llvm::nulls());
  return 0;
}
