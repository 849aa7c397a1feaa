//===- ParserInput.h - input buffers safe for MLIR's text parser -*- C++ -*-===//
//
// spconv-opt and spconv-translate read their input through here instead of handing the
// file to MLIR's drivers as it is. See terminateParserInput for the upstream defect this
// works around.
//
//===----------------------------------------------------------------------===//
#ifndef SPCONV_SUPPORT_PARSERINPUT_H
#define SPCONV_SUPPORT_PARSERINPUT_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MemoryBuffer.h"

#include <memory>
#include <string>

namespace spconv {

/// Returns `buffer` ready for MLIR's text parser: unchanged when its text is empty, already
/// ends in a line break, or starts like a binary format (MLIR bytecode, LLVM bitcode,
/// SPIR-V, WebAssembly); otherwise a heap copy with '\n' appended (before the NUL terminator
/// every MemoryBuffer carries). Translations from other binary formats (ONNX) must not get
/// their input through here: spconv-translate passes input on untouched to translations that
/// declare an input alignment.
///
/// Why: MLIR 22's lexer, on a string literal that runs into the end of the buffer, reports
/// "expected '"' in string literal" and leaves its cursor one byte *past* the NUL
/// terminator. The `{-# dialect_resources #-}` parser then lexes the next token anyway, and
/// the lexer, treating the zeros it finds there as whitespace, walks off the end of the
/// buffer until it faults (a file cut inside a `dense_resource` hex blob). A string literal
/// cannot span lines, so with a trailing line break it always ends at that '\n', where the
/// error leaves the cursor on the terminator and the next token is end-of-file.
std::unique_ptr<llvm::MemoryBuffer>
terminateParserInput(std::unique_ptr<llvm::MemoryBuffer> buffer);

/// openInputFile ("-" is stdin) followed by terminateParserInput; null with `errorMessage`
/// set when the file cannot be read.
std::unique_ptr<llvm::MemoryBuffer> openParserInput(llvm::StringRef path,
                                                    std::string *errorMessage);

} // namespace spconv

#endif // SPCONV_SUPPORT_PARSERINPUT_H
