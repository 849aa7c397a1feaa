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

/// Checks MLIR text for what MLIR 22's parser aborts the process on instead of reporting,
/// so that a tool can refuse it with a located error first; true when there is none.
/// `errorMessage` gets "<file>:<line>:<col>: error: ..." otherwise.
///
/// Two defects, both found by fuzzing (docs/reliability.md):
/// - llvm/llvm-project#181266: a hex blob in the `{-# ... #-}` file metadata
///   (`dialect_resources`) starts with its alignment as a 4-byte little-endian integer; the
///   parser rejects alignments that are not powers of two but lets 0 through, and
///   allocating the blob with alignment 0 ends in "LLVM ERROR: out of memory" (abort).
/// - The custom parsers of linalg.broadcast, linalg.transpose and linalg.reduce store the
///   result of DenseI64ArrayAttr::parse for `dimensions = [..]` / `permutation = [..]`
///   without checking it: a malformed list makes it null, and the parser dereferences it
///   (segfault; upstream mlir-opt-22 crashes the same way). After `)`, such a keyword
///   followed by `=` must be followed by `[`, integers separated by commas, and `]`,
///   whitespace allowed between them (a comment there is refused too, though valid).
bool checkParserInput(const llvm::MemoryBuffer &buffer, std::string *errorMessage);

/// openInputFile ("-" is stdin), terminateParserInput and checkParserInput; null with
/// `errorMessage` set when the file cannot be read or checkParserInput refuses it.
std::unique_ptr<llvm::MemoryBuffer> openParserInput(llvm::StringRef path,
                                                    std::string *errorMessage);

} // namespace spconv

#endif // SPCONV_SUPPORT_PARSERINPUT_H
