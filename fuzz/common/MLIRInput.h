//===- MLIRInput.h - MLIR text from a fuzzer, parsed as the tools do -*- C++ -*-===//
//
// Shared by the fuzzers whose input is a .mlir file: the bytes go through
// spconv::terminateParserInput and checkParserInput (what spconv-opt and spconv-translate
// do to every input) and then into a GuardedBuffer, so the parser sees exactly what it sees in the tools and any
// read past the end faults at once.
//
//===----------------------------------------------------------------------===//
#ifndef SPCONV_FUZZ_MLIRINPUT_H
#define SPCONV_FUZZ_MLIRINPUT_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"

#include <memory>

namespace spconv {
namespace fuzz {

/// A context with the dialects of spconv's tools, single-threaded, whose diagnostics are
/// dropped (every error path is expected; only crashes and sanitizer reports count).
/// Setting SPCONV_FUZZ_VERBOSE=1 prints them instead, for replaying one input.
std::unique_ptr<mlir::MLIRContext> makeContext();

/// Parses and verifies `bytes` as the tools read a file; null on any error.
mlir::OwningOpRef<mlir::ModuleOp> parseInput(llvm::StringRef bytes, mlir::MLIRContext &ctx);

/// Whether every conv of `module` (spconv.conv2d, and linalg convs spconv-import-linalg
/// would take) is small enough to lower in a few milliseconds. The compiler itself takes
/// convs of any size within its budgets (docs/design.md); a fuzzer must keep each input
/// cheap, so it skips the expensive passes for anything bigger.
bool withinFuzzBudget(mlir::ModuleOp module);

} // namespace fuzz
} // namespace spconv

#endif // SPCONV_FUZZ_MLIRINPUT_H
