//===- TemplateText.h - PTX text helpers of the block-template fold -*- C++ -*-===//
//
// Internal to lib/Target/PtxBlockTemplate: tokens of NVPTX's output (registers, f32
// immediates, instructions) and the classified body line that parsing, stamping and
// assembling share.
//
//===----------------------------------------------------------------------===//
#ifndef SPCONV_LIB_TARGET_PTXBLOCKTEMPLATE_TEMPLATETEXT_H
#define SPCONV_LIB_TARGET_PTXBLOCKTEMPLATE_TEMPLATETEXT_H

#include "spconv/Conversion/ConvTemplate/Placeholder.h"
#include "spconv/Target/PtxBlockTemplate.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

namespace spconv {
namespace ptxtext {
using llvm::StringRef;

inline bool isIdentChar(char c) { return llvm::isAlnum(c) || c == '_' || c == '$'; }

/// `%r<digits>`: a 32-bit virtual register, the class NVPTX uses for f32 values.
inline std::optional<uint32_t> parseReg32(StringRef tok) {
  if (!tok.consume_front("%r") || tok.empty() || !llvm::isDigit(tok.front()))
    return std::nullopt;
  uint32_t id;
  if (tok.getAsInteger(10, id))
    return std::nullopt;
  return id;
}

/// `0f<8 hex digits>`: an f32 immediate.
inline std::optional<float> parseF32Imm(StringRef tok) {
  if (tok.size() != 10 || !tok.consume_front("0f"))
    return std::nullopt;
  uint32_t bits;
  if (tok.getAsInteger(16, bits))
    return std::nullopt;
  return placeholder::fromBits(bits);
}

/// An integer immediate (`123`, `-123`, `0x7B`) as the 32 bits a `.b32` operand holds, or
/// nothing if `tok` is not one or does not fit 32 bits. `negated`: a '-' precedes `tok`.
inline std::optional<uint32_t> parseWordImm(StringRef tok, bool negated) {
  if (tok.empty() || !llvm::isDigit(tok.front()))
    return std::nullopt;
  uint64_t v;
  if (tok.starts_with("0x") || tok.starts_with("0X")) {
    if (tok.drop_front(2).getAsInteger(16, v))
      return std::nullopt;
  } else if (tok.getAsInteger(10, v)) {
    return std::nullopt;
  }
  if (negated ? v > 0x80000000ull : v > 0xFFFFFFFFull)
    return std::nullopt;
  return uint32_t(negated ? 0u - uint32_t(v) : uint32_t(v));
}

/// A `.b32` immediate as NVPTX writes one: a signed decimal.
inline std::string wordImm(uint32_t word) { return std::to_string(int32_t(word)); }

inline std::string f32Imm(float v) {
  char buf[11];
  std::snprintf(buf, sizeof buf, "0f%08X", unsigned(placeholder::toBits(v)));
  return buf;
}

/// Splits "op a, b, c;" (leading whitespace already gone) into the opcode and operands.
inline void splitInstruction(StringRef line, StringRef &opcode,
                      llvm::SmallVectorImpl<StringRef> &operands) {
  size_t ws = line.find_first_of(" \t");
  opcode = line.substr(0, ws);
  StringRef rest = ws == StringRef::npos ? StringRef() : line.substr(ws).trim();
  rest.consume_back(";");
  operands.clear();
  if (rest.empty())
    return;
  llvm::SmallVector<StringRef> parts;
  rest.split(parts, ',');
  for (StringRef p : parts)
    operands.push_back(p.trim());
}

/// Calls `fn(offset, token)` for every identifier-like or numeric token of `line`.
template <typename Fn> void forEachToken(StringRef line, Fn fn) {
  for (size_t i = 0; i < line.size();) {
    char c = line[i];
    if (c == '%' || isIdentChar(c)) {
      size_t j = i + 1;
      while (j < line.size() && (isIdentChar(line[j]) || (c == '%' && line[j] == '.')))
        ++j;
      fn(i, line.substr(i, j - i));
      i = j;
    } else {
      ++i;
    }
  }
}

inline bool isPlaceholder(float v) {
  return placeholder::decodeWeight(v) || placeholder::decodeBias(v);
}

/// Copies a line with the kernel renamed (`tmplName` -> `name`), labels suffixed with
/// `labelSuffix` and, when `alias` is given, %r registers replaced through it (-1: kept);
/// `mentions`, when given, counts every register written out.
void emitRenamed(llvm::raw_ostream &os, StringRef line, StringRef tmplName, StringRef name,
                 llvm::ArrayRef<int32_t> alias, std::vector<uint32_t> *mentions,
                 StringRef labelSuffix);
} // namespace ptxtext

struct PtxBlockTemplate::Line {
  enum Kind : uint8_t {
    Plain,      // copied with registers, labels and the kernel name renamed
    Fma,        // fma.rn.f32 d, a, b, c with a placeholder weight in a or b, or (half
                // precision) fma.rn.{f16x2,bf16x2} d, a, b, c with a or b a register that a
                // MovConst of a weight word defines
    MovConst,   // mov d, <placeholder>: an f32 one, or a half-precision word
    BiasAdd,    // add.rn.f32 d, a, <f32 bias placeholder> (or the immediate first): a half
                // template's f32 sums start from the bias (PtxKernels.cpp)
    SharedLoad, // ld.shared{,.v2,.v4}.{b32,f32} of %r registers, or a scalar ld.global{,.nc}
                // (direct inputs): a load the fold drops when nothing reads it
  };
  Kind kind = Plain;
  llvm::StringRef text;
  uint32_t dest = 0;       // %r id defined (Fma, MovConst)
  // SharedLoad: the registers loaded (lane order), and for vector loads the address split
  // into base and byte offset, so that a load with one lane left can become a scalar one.
  llvm::SmallVector<uint32_t, 4> lanes;
  llvm::StringRef addressBase;
  int64_t addressOffset = 0;
  // Fma: operands a, b, c; MovConst: the immediate. Decoded once here, not per channel
  // block: the %r register an operand names and the placeholder an immediate holds.
  llvm::StringRef ops[3];
  std::optional<uint32_t> opReg[3];
  std::optional<float> opPlaceholder[3];
  bool usedBeforeDef = false; // Fma: its result is mentioned above it
  // Half precision. Fma: the opcode (fma.rn.f16x2 or fma.rn.bf16x2) and which factor (0 or
  // 1) is the weight word's register; MovConst: the placeholder word.
  llvm::StringRef halfOpcode;
  int8_t halfWeightOp = -1;
  std::optional<uint32_t> word;
  // BiasAdd: where the placeholder immediate sits in `text` (`dest` is the sum, opReg[0]
  // the register added to the bias).
  size_t immOffset = 0, immSize = 0;
};
} // namespace spconv

#endif
