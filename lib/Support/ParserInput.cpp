//===- ParserInput.cpp - input buffers safe for MLIR's text parser --------===//
#include "spconv/Support/ParserInput.h"

#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/Twine.h"

#include <cstdint>
#include <limits>

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

/// "<file>:<line>:<col>: error: <message>" for byte `offset` of `text`, as MLIR prints it.
static std::string locatedError(const MemoryBuffer &buffer, size_t offset,
                                const Twine &message) {
  StringRef before = buffer.getBuffer().take_front(offset);
  size_t line = before.count('\n') + 1;
  size_t lineStart = before.rfind('\n');
  size_t column = offset - (lineStart == StringRef::npos ? 0 : lineStart + 1) + 1;
  return (buffer.getBufferIdentifier() + ":" + Twine(line) + ":" + Twine(column) +
          ": error: " + message)
      .str();
}

/// The value of the MLIR string literal starting at `text[pos]` (a '"'), with `pos` left
/// after it; escapes decoded as MLIR's lexer does (\", \\, \n, \t, \XX). A literal that
/// runs into a line break or the end of the text ends there (the parser reports it).
static std::string readString(StringRef text, size_t &pos) {
  std::string value;
  for (++pos; pos < text.size(); ++pos) {
    char c = text[pos];
    if (c == '"') {
      ++pos;
      break;
    }
    if (c == '\n' || c == '\r' || c == '\0')
      break;
    if (c != '\\' || pos + 1 >= text.size()) {
      value += c;
      continue;
    }
    char e = text[++pos];
    if (e == 'n')
      value += '\n';
    else if (e == 't')
      value += '\t';
    else if (e == '"' || e == '\\')
      value += e;
    else if (pos + 1 < text.size() && llvm::isHexDigit(e) && llvm::isHexDigit(text[pos + 1]))
      value += char(llvm::hexFromNibbles(e, text[++pos]));
    else
      value += e;
  }
  return value;
}

static bool isIdentifierChar(char c) {
  return llvm::isAlnum(c) || c == '_' || c == '$' || c == '.';
}

/// Whether `text[pos]` starts what DenseI64ArrayAttr::parse accepts: `[`, integers separated
/// by commas, `]`, with whitespace between tokens. Each integer must fit in an int64_t
/// (decimal or hex, optionally negative): the parser fails on a wider one ("integer value
/// too large") and that failure takes the same crashing path.
static bool isIntegerList(StringRef text, size_t pos) {
  auto skipSpace = [&] {
    while (pos < text.size() && llvm::isSpace(text[pos]))
      ++pos;
  };
  auto integer = [&] {
    bool negative = pos < text.size() && text[pos] == '-';
    if (negative)
      ++pos;
    bool hex = text.substr(pos).starts_with("0x");
    if (hex)
      pos += 2;
    size_t start = pos;
    while (pos < text.size() &&
           (hex ? llvm::isHexDigit(text[pos]) : llvm::isDigit(text[pos])))
      ++pos;
    uint64_t magnitude;
    if (pos == start || text.slice(start, pos).getAsInteger(hex ? 16 : 10, magnitude))
      return false; // no digits, or more than 64 bits
    uint64_t limit = uint64_t(std::numeric_limits<int64_t>::max()) + (negative ? 1 : 0);
    return magnitude <= limit && (pos == text.size() || !isIdentifierChar(text[pos]));
  };
  if (pos >= text.size() || text[pos] != '[')
    return false;
  ++pos;
  skipSpace();
  if (pos < text.size() && text[pos] == ']')
    return true;
  for (;;) {
    skipSpace();
    if (!integer())
      return false;
    skipSpace();
    if (pos < text.size() && text[pos] == ']')
      return true;
    if (pos >= text.size() || text[pos] != ',')
      return false;
    ++pos;
  }
}

bool spconv::checkParserInput(const MemoryBuffer &buffer, std::string *errorMessage) {
  StringRef text = buffer.getBuffer();
  if (text.starts_with("ML\xef\x52"))
    return true; // bytecode has no text blobs
  bool inMetadata = false;
  char lastToken = 0; // last character of the previous token
  for (size_t pos = 0; pos < text.size();) {
    char c = text[pos];
    if (c == '/' && text.substr(pos).starts_with("//")) {
      pos = text.find('\n', pos);
      continue; // npos ends the loop
    }
    if (llvm::isSpace(c)) {
      ++pos;
      continue;
    }
    // Second defect: the custom syntax of linalg.broadcast, linalg.transpose and
    // linalg.reduce ends in `dimensions = [..]` (`permutation = [..]`) after `outs(..)`;
    // their parsers store whatever DenseI64ArrayAttr::parse returns, a null attribute when
    // the list is malformed, and NamedAttrList::set dereferences it (segfault).
    if (llvm::isAlpha(c) || c == '_') {
      size_t start = pos;
      while (pos < text.size() && isIdentifierChar(text[pos]))
        ++pos;
      StringRef word = text.slice(start, pos);
      if ((word == "dimensions" || word == "permutation") && lastToken == ')' &&
          !inMetadata) {
        size_t next = text.find_if_not(llvm::isSpace, pos);
        if (next != StringRef::npos && text[next] == '=' &&
            !isIntegerList(text, text.find_if_not(llvm::isSpace, next + 1))) {
          if (errorMessage)
            *errorMessage = locatedError(
                buffer, start,
                "expected a list of 64-bit integers '[..]' after '" + word +
                    " =' (MLIR 22's parsers of linalg.broadcast, linalg.transpose and "
                    "linalg.reduce crash on anything else)");
          return false;
        }
      }
      lastToken = text[pos - 1];
      continue;
    }
    lastToken = c;
    if (c == '{' && text.substr(pos).starts_with("{-#")) {
      inMetadata = true;
      pos += 3;
      continue;
    }
    if (c == '#' && text.substr(pos).starts_with("#-}")) {
      inMetadata = false;
      pos += 3;
      continue;
    }
    if (c != '"') {
      ++pos;
      continue;
    }
    size_t start = pos;
    std::string value = readString(text, pos);
    // A hex blob: "0x", then its alignment as 4 little-endian bytes, then the data. Only
    // well-formed blobs get as far as the allocation; the parser reports the others.
    StringRef hex = value;
    if (!inMetadata || !hex.consume_front("0x") || hex.size() < 8 || hex.size() % 2 ||
        !llvm::all_of(hex, llvm::isHexDigit))
      continue;
    if (hex.take_front(8) == "00000000") {
      if (errorMessage)
        *errorMessage = locatedError(
            buffer, start,
            "resource blob with alignment 0 (its first 4 bytes); the alignment must be a "
            "power of 2, e.g. 0x04000000 for f32 data (MLIR 22 would abort on it: "
            "llvm/llvm-project#181266)");
      return false;
    }
  }
  return true;
}

std::unique_ptr<MemoryBuffer> spconv::openParserInput(StringRef path,
                                                      std::string *errorMessage) {
  std::unique_ptr<MemoryBuffer> file = mlir::openInputFile(path, errorMessage);
  if (!file)
    return nullptr;
  file = terminateParserInput(std::move(file));
  if (!checkParserInput(*file, errorMessage))
    return nullptr;
  return file;
}
