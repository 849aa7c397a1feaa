//===- ParserInput.cpp - input buffers safe for MLIR's text parser --------===//
#include "spconv/Support/ParserInput.h"

#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/STLExtras.h"

using namespace llvm;

std::unique_ptr<MemoryBuffer>
spconv::terminateParserInput(std::unique_ptr<MemoryBuffer> buffer) {
  StringRef text = buffer->getBuffer();
  // Binary formats are read by length, not lexed; a trailing byte would corrupt them: MLIR
  // bytecode, LLVM bitcode, SPIR-V (either byte order) and WebAssembly, which upstream
  // translations in spconv-translate read.
  static const StringRef binaryMagics[] = {"ML\xef\x52", "BC\xc0\xde", "\x03\x02\x23\x07",
                                           "\x07\x23\x02\x03", StringRef("\0asm", 4)};
  if (text.empty() || text.ends_with("\n") || text.ends_with("\r") ||
      llvm::any_of(binaryMagics, [&](StringRef magic) { return text.starts_with(magic); }))
    return buffer;
  // getMemBufferCopy NUL-terminates its copy, as the parser requires.
  return MemoryBuffer::getMemBufferCopy((text + "\n").str(), buffer->getBufferIdentifier());
}

std::unique_ptr<MemoryBuffer> spconv::openParserInput(StringRef path,
                                                      std::string *errorMessage) {
  std::unique_ptr<MemoryBuffer> file = mlir::openInputFile(path, errorMessage);
  return file ? terminateParserInput(std::move(file)) : nullptr;
}
