//===- GuardedBuffer.h - fuzz inputs that end at an unmapped page -*- C++ -*-===//
//
// Debian's libMLIR and libLLVM are not built with AddressSanitizer, so a read past the end
// of an input buffer inside them (the MLIR 22 lexer defect that spconv/Support/ParserInput.h
// works around is one) goes unseen: the heap around the buffer is readable memory. The
// fuzzers therefore copy each input so that it ends right before a PROT_NONE page; the
// first byte read past the end (past the NUL terminator, for text) faults at once,
// instrumented code or not.
//
//===----------------------------------------------------------------------===//
#ifndef SPCONV_FUZZ_GUARDEDBUFFER_H
#define SPCONV_FUZZ_GUARDEDBUFFER_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstddef>
#include <memory>

namespace spconv {
namespace fuzz {

/// A copy of some bytes in fresh pages followed by an inaccessible guard page.
class GuardedBuffer {
public:
  /// `nulTerminated`: a '\0' follows the bytes and is the last readable byte (what MLIR's
  /// text parser requires). `align` > 1 starts the bytes at that alignment instead (binary
  /// formats that require it, e.g. MLIR bytecode), leaving fewer than `align` readable
  /// padding bytes between their end and the guard page.
  GuardedBuffer(llvm::StringRef bytes, bool nulTerminated, size_t align = 1);
  ~GuardedBuffer();
  GuardedBuffer(const GuardedBuffer &) = delete;
  GuardedBuffer &operator=(const GuardedBuffer &) = delete;

  llvm::StringRef bytes() const { return {data, size}; }
  /// A MemoryBuffer that refers to (does not own) the guarded bytes.
  std::unique_ptr<llvm::MemoryBuffer> memoryBuffer(llvm::StringRef name) const;

private:
  char *mapping = nullptr;
  size_t mappingSize = 0;
  const char *data = nullptr;
  size_t size = 0;
  bool nulTerminated = false;
};

} // namespace fuzz
} // namespace spconv

#endif // SPCONV_FUZZ_GUARDEDBUFFER_H
