//===- ParserInput.cpp - input buffers safe for MLIR's text parser --------===//
#include "spconv/Support/ParserInput.h"

#include "mlir/Support/FileUtilities.h"

using namespace llvm;

std::unique_ptr<MemoryBuffer>
spconv::terminateParserInput(std::unique_ptr<MemoryBuffer> buffer) {
  StringRef text = buffer->getBuffer();
  // Bytecode ("ML\xefR") is read by length, not lexed; a trailing byte would corrupt it.
  if (text.empty() || text.ends_with("\n") || text.ends_with("\r") ||
      text.starts_with("ML\xef\x52"))
    return buffer;
  // getMemBufferCopy NUL-terminates its copy, as the parser requires.
  return MemoryBuffer::getMemBufferCopy((text + "\n").str(), buffer->getBufferIdentifier());
}

std::unique_ptr<MemoryBuffer> spconv::openParserInput(StringRef path,
                                                      std::string *errorMessage) {
  std::unique_ptr<MemoryBuffer> file = mlir::openInputFile(path, errorMessage);
  return file ? terminateParserInput(std::move(file)) : nullptr;
}
