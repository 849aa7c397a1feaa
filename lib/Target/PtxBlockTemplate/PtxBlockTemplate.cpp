//===- PtxBlockTemplate.cpp - weights folded into template PTX ------------===//
//
// NVPTX writes each virtual register once per definition and, in the template's
// straight-line chunks, every FMA defines a fresh %r register. That makes the fold a single
// forward walk over the text: an FMA by a zero weight is dropped and later mentions of its
// result are renamed to its addend. Where that renaming is not provably safe (a register
// defined twice, or mentioned above its definition) the FMA becomes a `mov` instead, which
// is always correct and which ptxas propagates away.
//
//===----------------------------------------------------------------------===//
#include "spconv/Target/PtxBlockTemplate.h"
#include "spconv/Conversion/ConvTemplate/Placeholder.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <limits>
#include <optional>

using namespace spconv;
using llvm::StringRef;

namespace {
bool isIdentChar(char c) { return llvm::isAlnum(c) || c == '_' || c == '$'; }

/// `%r<digits>`: a 32-bit virtual register, the class NVPTX uses for f32 values.
std::optional<uint32_t> parseReg32(StringRef tok) {
  if (!tok.consume_front("%r") || tok.empty() || !llvm::isDigit(tok.front()))
    return std::nullopt;
  uint32_t id;
  if (tok.getAsInteger(10, id))
    return std::nullopt;
  return id;
}

/// `0f<8 hex digits>`: an f32 immediate.
std::optional<float> parseF32Imm(StringRef tok) {
  if (tok.size() != 10 || !tok.consume_front("0f"))
    return std::nullopt;
  uint32_t bits;
  if (tok.getAsInteger(16, bits))
    return std::nullopt;
  return placeholder::fromBits(bits);
}

std::string f32Imm(float v) {
  char buf[11];
  std::snprintf(buf, sizeof buf, "0f%08X", unsigned(placeholder::toBits(v)));
  return buf;
}

/// Splits "op a, b, c;" (leading whitespace already gone) into the opcode and operands.
void splitInstruction(StringRef line, StringRef &opcode,
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

bool isPlaceholder(float v) {
  return placeholder::decodeWeight(v) || placeholder::decodeBias(v);
}
} // namespace

struct PtxBlockTemplate::Line {
  enum Kind : uint8_t {
    Plain,      // copied with registers, labels and the kernel name renamed
    Fma,        // fma.rn.f32 d, a, b, c with a placeholder weight in a or b
    MovConst,   // mov d, <placeholder>
    SharedLoad, // ld.shared{,.v2,.v4}.{b32,f32} of %r registers
  };
  Kind kind = Plain;
  StringRef text;
  uint32_t dest = 0;       // %r id defined (Fma, MovConst)
  // SharedLoad: the registers loaded (lane order), and for vector loads the address split
  // into base and byte offset, so that a load with one lane left can become a scalar one.
  llvm::SmallVector<uint32_t, 4> lanes;
  StringRef addressBase;
  int64_t addressOffset = 0;
  // Fma: operands a, b, c; MovConst: the immediate. Decoded once here, not per channel
  // block: the %r register an operand names and the placeholder an immediate holds.
  StringRef ops[3];
  std::optional<uint32_t> opReg[3];
  std::optional<float> opPlaceholder[3];
  bool usedBeforeDef = false; // Fma: its result is mentioned above it
};

static constexpr llvm::StringLiteral kInfoPrefix = "// spconv block template:";

std::string BlockTemplateInfo::str() const {
  return (kInfoPrefix + " k=" + llvm::Twine(k) + " block_k=" + llvm::Twine(blockK) +
          " weights_per_channel=" + llvm::Twine(weightsPerChannel) +
          " bias=" + llvm::Twine(int(hasBias)) + "\n")
      .str();
}

/// Reads a BlockTemplateInfo line, or nothing if `line` is not one.
static std::optional<BlockTemplateInfo> parseInfo(StringRef line) {
  if (!line.consume_front(kInfoPrefix))
    return std::nullopt;
  BlockTemplateInfo info;
  int64_t bias = -1;
  llvm::SmallVector<StringRef> fields;
  line.trim().split(fields, ' ', -1, /*KeepEmpty=*/false);
  for (StringRef f : fields) {
    auto [key, value] = f.split('=');
    int64_t *dst = key == "k" ? &info.k
                   : key == "block_k" ? &info.blockK
                   : key == "weights_per_channel" ? &info.weightsPerChannel
                   : key == "bias" ? &bias
                                   : nullptr;
    if (!dst || value.getAsInteger(10, *dst))
      return std::nullopt;
  }
  if (info.k <= 0 || info.blockK <= 0 || info.weightsPerChannel <= 0 || bias < 0 || bias > 1)
    return std::nullopt;
  info.hasBias = bias;
  return info;
}

std::string spconv::ptxModule(StringRef header, StringRef kernels) {
  return ("//\n// spconv: kernels stamped from NVPTX block templates, weights folded in PTX\n"
          "//\n\n" +
          header + "\n" + kernels)
      .str();
}

PtxBlockTemplate::PtxBlockTemplate() = default;
PtxBlockTemplate::PtxBlockTemplate(PtxBlockTemplate &&) noexcept = default;
PtxBlockTemplate &PtxBlockTemplate::operator=(PtxBlockTemplate &&) noexcept = default;
PtxBlockTemplate::~PtxBlockTemplate() = default;

static llvm::Error parseError(size_t lineNo, const llvm::Twine &what) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "template PTX line " + llvm::Twine(lineNo + 1) + ": " + what);
}

llvm::Expected<PtxBlockTemplate> PtxBlockTemplate::parse(std::string ptx, StringRef entry) {
  PtxBlockTemplate t;
  t.text = std::make_unique<const std::string>(std::move(ptx));
  t.entry = entry.str();
  llvm::SmallVector<StringRef> lines;
  StringRef(*t.text).split(lines, '\n');

  auto trimmed = [&](size_t i) { return lines[i].trim(); };
  auto isComment = [](StringRef s) { return s.empty() || s.starts_with("//"); };
  // Everything between two line indices, as one StringRef into `text`.
  auto span = [&](size_t first, size_t last) -> StringRef {
    if (first >= last)
      return StringRef();
    const char *b = lines[first].data();
    const char *e = lines[last - 1].data() + lines[last - 1].size();
    return StringRef(b, e - b);
  };

  // Module level: our info line, the header lines, then our one entry.
  size_t i = 0;
  if (!lines.empty() && lines[0].starts_with(kInfoPrefix)) {
    t.info = parseInfo(lines[0]);
    if (!t.info)
      return parseError(0, "malformed '" + kInfoPrefix + "' line");
    i = 1;
  }
  size_t headerFirst = lines.size(), headerLast = 0;
  for (; i < lines.size(); ++i) {
    StringRef s = trimmed(i);
    if (isComment(s))
      continue;
    if (s.starts_with(".version") || s.starts_with(".target") ||
        s.starts_with(".address_size")) {
      headerFirst = std::min(headerFirst, i);
      headerLast = i + 1;
      continue;
    }
    if ((s.starts_with(".visible .entry ") || s.starts_with(".entry ")) &&
        s.contains((" " + entry + "(").str()))
      break;
    return parseError(i, "unexpected module-level line '" + s + "'");
  }
  if (i == lines.size())
    return parseError(i, "no .entry " + entry);
  if (headerLast == 0)
    return parseError(0, "no .version/.target header");
  t.header = span(headerFirst, headerLast);

  size_t paramsFirst = ++i;
  while (i < lines.size() && !trimmed(i).starts_with(")"))
    ++i;
  t.params = span(paramsFirst, i);
  size_t directivesFirst = ++i;
  while (i < lines.size() && trimmed(i) != "{")
    ++i;
  if (i >= lines.size())
    return parseError(i, "no body for .entry " + entry);
  t.directives = span(directivesFirst, i);

  // Declarations, then the body up to the entry's closing brace.
  size_t numRegs = 0;
  for (++i; i < lines.size(); ++i) {
    StringRef s = trimmed(i);
    if (isComment(s))
      continue;
    if (s.starts_with(".shared")) {
      t.sharedDecls.push_back(lines[i]);
    } else if (s.starts_with(".reg") || s.starts_with(".local")) {
      t.localDecls.push_back(lines[i]);
      // .reg .b32 %r<N>;
      size_t at = s.find("%r<");
      if (s.starts_with(".reg") && at != StringRef::npos)
        if (s.substr(at + 3).take_until([](char c) { return c == '>'; }).getAsInteger(10,
                                                                                      numRegs))
          return parseError(i, "bad register declaration");
    } else {
      break;
    }
  }
  size_t bodyFirst = i;
  size_t bodyEnd = lines.size();
  while (bodyEnd > bodyFirst && isComment(trimmed(bodyEnd - 1)))
    --bodyEnd;
  if (bodyEnd == bodyFirst || trimmed(bodyEnd - 1) != "}")
    return parseError(bodyEnd, "the entry does not end with '}'");
  --bodyEnd;
  for (size_t j = bodyFirst; j < bodyEnd; ++j)
    if (trimmed(j).starts_with(".entry") || trimmed(j).starts_with(".visible") ||
        trimmed(j).starts_with(".func"))
      return parseError(j, "the template PTX holds more than one function");

  t.defCount.assign(numRegs, 0);
  std::vector<int64_t> defLine(numRegs, -1), firstUse(numRegs, -1);
  t.body.reserve(bodyEnd - bodyFirst);
  llvm::SmallVector<StringRef> ops;
  for (size_t j = bodyFirst; j < bodyEnd; ++j) {
    Line line;
    line.text = lines[j];
    StringRef s = lines[j].trim();
    size_t index = t.body.size();

    // Registers: bounds, definitions, first mention.
    bool isInstruction = !isComment(s) && !s.ends_with(":");
    StringRef insn = s;
    if (insn.starts_with("@"))
      insn = insn.drop_until([](char c) { return c == ' ' || c == '\t'; }).ltrim();
    StringRef opcode;
    if (isInstruction)
      splitInstruction(insn, opcode, ops);
    else
      ops.clear();
    // Operand 0 is written unless the instruction only reads (stores, branches...).
    bool writesFirst = isInstruction && !ops.empty() && ops[0].starts_with("%r");
    bool writesVector = isInstruction && !ops.empty() && ops[0].starts_with("{") &&
                        !opcode.starts_with("st");
    llvm::Error tokenError = llvm::Error::success();
    size_t firstOperandEnd = 0;
    if (writesFirst)
      firstOperandEnd = (ops[0].data() - s.data()) + ops[0].size();
    else if (writesVector)
      firstOperandEnd = s.find('}', ops[0].data() - s.data());
    forEachToken(s, [&](size_t off, StringRef tok) {
      if (std::optional<uint32_t> r = parseReg32(tok)) {
        if (*r >= numRegs) {
          if (!tokenError)
            tokenError = parseError(j, "register " + tok + " is not declared");
          return;
        }
        bool isDef = off < firstOperandEnd;
        if (isDef) {
          ++t.defCount[*r];
          if (defLine[*r] < 0)
            defLine[*r] = index;
        } else if (firstUse[*r] < 0) {
          firstUse[*r] = index;
        }
      } else if (std::optional<float> f = parseF32Imm(tok)) {
        if (isPlaceholder(*f) && !opcode.starts_with("fma.rn.f32") &&
            !opcode.starts_with("mov.") && !tokenError)
          tokenError = parseError(j, "placeholder " + tok + " in an instruction the fold "
                                                          "does not patch: '" + s + "'");
      }
    });
    if (tokenError)
      return std::move(tokenError);

    auto weightOperand = [](StringRef op) {
      std::optional<float> f = parseF32Imm(op);
      return f && placeholder::decodeWeight(*f);
    };
    if (opcode == "fma.rn.f32" && !s.starts_with("@") && ops.size() == 4) {
      if (weightOperand(ops[3]))
        return parseError(j, "weight placeholder used as an addend: '" + s + "'");
      for (int o : {1, 2})
        if (std::optional<float> f = parseF32Imm(ops[o]); f && placeholder::decodeBias(*f))
          return parseError(j, "bias placeholder used as a factor: '" + s + "'");
      if (std::optional<uint32_t> d = parseReg32(ops[0])) {
        line.kind = Line::Fma;
        line.dest = *d;
        for (int o = 0; o < 3; ++o) {
          line.ops[o] = ops[o + 1];
          line.opReg[o] = parseReg32(ops[o + 1]);
          if (std::optional<float> f = parseF32Imm(ops[o + 1]); f && isPlaceholder(*f))
            line.opPlaceholder[o] = f;
        }
      }
    } else if ((opcode == "mov.b32" || opcode == "mov.f32") && !s.starts_with("@") &&
               ops.size() == 2) {
      std::optional<float> f = parseF32Imm(ops[1]);
      std::optional<uint32_t> d = parseReg32(ops[0]);
      if (f && isPlaceholder(*f) && d) {
        line.kind = Line::MovConst;
        line.dest = *d;
        line.opPlaceholder[0] = f;
      }
    } else if ((opcode == "ld.shared.b32" || opcode == "ld.shared.f32") &&
               !s.starts_with("@") && ops.size() == 2) {
      if (std::optional<uint32_t> d = parseReg32(ops[0])) {
        line.kind = Line::SharedLoad;
        line.lanes.push_back(*d);
      }
    } else if ((opcode == "ld.shared.v2.b32" || opcode == "ld.shared.v4.b32" ||
                opcode == "ld.shared.v2.f32" || opcode == "ld.shared.v4.f32") &&
               !s.starts_with("@")) {
      // ld.shared.v2.b32 {%r1, %r2}, [%rd3+8];
      StringRef regs = s.drop_until([](char c) { return c == '{'; }).drop_front();
      StringRef addr = regs.drop_until([](char c) { return c == '['; });
      regs = regs.take_until([](char c) { return c == '}'; });
      addr = addr.drop_front().take_until([](char c) { return c == ']'; });
      llvm::SmallVector<StringRef> names;
      regs.split(names, ',');
      bool allRegs = !addr.empty();
      for (StringRef n : names) {
        std::optional<uint32_t> r = parseReg32(n.trim());
        allRegs &= r.has_value();
        if (r)
          line.lanes.push_back(*r);
      }
      auto [base, offset] = addr.rsplit('+');
      if (offset.empty())
        offset = "0";
      if (allRegs && !offset.trim().getAsInteger(10, line.addressOffset)) {
        line.kind = Line::SharedLoad;
        line.addressBase = base.trim();
      }
    } else if (opcode == "fma.rn.f32" && (weightOperand(ops.size() > 1 ? ops[1] : "") ||
                                          weightOperand(ops.size() > 2 ? ops[2] : ""))) {
      return parseError(j, "predicated or malformed FMA holds a placeholder: '" + s + "'");
    }
    for (StringRef op : ops)
      if (std::optional<float> f = parseF32Imm(op)) {
        if (std::optional<int64_t> w = placeholder::decodeWeight(*f))
          t.maxWeightIndex = std::max(t.maxWeightIndex, *w);
        if (std::optional<int64_t> b = placeholder::decodeBias(*f))
          t.maxBiasIndex = std::max(t.maxBiasIndex, *b);
      }
    t.body.push_back(line);
  }
  for (Line &line : t.body)
    if (line.kind == Line::Fma)
      line.usedBeforeDef = firstUse[line.dest] >= 0 && firstUse[line.dest] < defLine[line.dest];
  if (t.maxWeightIndex < 0)
    return parseError(bodyFirst, "no weight placeholder: not a template kernel");
  return std::move(t);
}

namespace {
/// One channel block's fold state over the body walk.
struct BlockFold {
  const BlockWeights &w;
  int64_t kb, perChannel;
  std::vector<int32_t> alias;          // %r id -> the register that replaced it, or -1
  std::vector<float> constValue;       // %r id -> value, where `hasConst`
  std::vector<uint8_t> hasConst, constAbsent;
  std::vector<uint32_t> mentions;      // %r id -> occurrences in the emitted text
  std::vector<std::string> immediate;  // %r id -> the constant it holds, if forwarded

  BlockFold(const BlockWeights &w, int64_t kb, int64_t perChannel, size_t numRegs)
      : w(w), kb(kb), perChannel(perChannel), alias(numRegs, -1), constValue(numRegs, 0.0f),
        hasConst(numRegs, 0), constAbsent(numRegs, 0), mentions(numRegs, 0),
        immediate(numRegs) {}

  /// The real value of a placeholder; `absent` when it belongs to a channel past K.
  float resolve(float placeholderValue, bool &absent) const {
    absent = false;
    if (std::optional<int64_t> i = placeholder::decodeWeight(placeholderValue)) {
      int64_t k = kb * w.blockK + *i / perChannel;
      if (k >= w.k) {
        absent = true;
        return 0.0f;
      }
      return w.weights[kb * w.blockK * perChannel + *i];
    }
    int64_t k = kb * w.blockK + *placeholder::decodeBias(placeholderValue);
    if (k >= w.k) {
      absent = true;
      return 0.0f;
    }
    return w.bias[k];
  }
};
} // namespace

llvm::Error PtxBlockTemplate::checkWeights(const BlockWeights &w) const {
  // ceil(k / blockK) without forming k + blockK - 1, which overflows for a huge block-k
  // (spconv-stamp-ptx passes the user's --block-k through).
  if (w.k <= 0 || w.blockK <= 0 || w.kBlocks != w.k / w.blockK + (w.k % w.blockK != 0) ||
      w.weights.size() % w.k != 0)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "inconsistent channel blocking for the template");
  int64_t perChannel = w.weights.size() / w.k;
  if (info && (info->k != w.k || info->blockK != w.blockK ||
               info->weightsPerChannel != perChannel || info->hasBias != !w.bias.empty()))
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "the weights do not match the template (template: K=" + llvm::Twine(info->k) +
            ", block-k " + llvm::Twine(info->blockK) + ", " +
            llvm::Twine(info->weightsPerChannel) + " weights per output channel, " +
            (info->hasBias ? "with" : "without") + " bias; given: K=" + llvm::Twine(w.k) +
            ", block-k " + llvm::Twine(w.blockK) + ", " + llvm::Twine(perChannel) + ", " +
            (w.bias.empty() ? "without" : "with") + " bias)");
  // A block's weights, blockK * perChannel, saturated: past int64_t every index fits.
  int64_t blockWeights = 0;
  if (__builtin_mul_overflow(w.blockK, perChannel, &blockWeights))
    blockWeights = std::numeric_limits<int64_t>::max();
  if (maxWeightIndex >= blockWeights)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "the template's weight placeholders do not fit this conv's channel block");
  if (maxBiasIndex >= 0 && (w.bias.size() != size_t(w.k) || maxBiasIndex >= w.blockK))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "the template expects a bias the conv does not have");

  return llvm::Error::success();
}

/// Copies a line with the kernel renamed, labels suffixed per block and %r registers
/// replaced through `fold.alias` (when given), counting every register it writes out.
static void emitRenamed(llvm::raw_ostream &os, StringRef line, StringRef tmplName,
                        StringRef name, BlockFold *fold, StringRef labelSuffix) {
  size_t last = 0;
  forEachToken(line, [&](size_t off, StringRef tok) {
    if (fold)
      if (std::optional<uint32_t> r = parseReg32(tok)) {
        uint32_t id = fold->alias[*r] >= 0 ? uint32_t(fold->alias[*r]) : *r;
        ++fold->mentions[id];
        if (id != *r) {
          os << line.substr(last, off - last) << "%r" << id;
          last = off + tok.size();
        }
        return;
      }
    if (tok.starts_with("$")) {
      os << line.substr(last, off + tok.size() - last) << labelSuffix;
      last = off + tok.size();
    } else if (size_t at = tok.find(tmplName); at != StringRef::npos) {
      // The entry, its parameters and its shared tile (`__wg_<entry>_0`) carry the name.
      os << line.substr(last, off - last) << tok.take_front(at) << name
         << tok.drop_front(at + tmplName.size());
      last = off + tok.size();
    }
  });
  os << line.substr(last) << '\n';
}

llvm::Expected<std::string> PtxBlockTemplate::stampBlock(StringRef name, const BlockWeights &w,
                                                         int64_t kb,
                                                         PtxFoldCounts &counts) const {
  if (llvm::Error err = checkWeights(w))
    return std::move(err);
  if (kb < 0 || kb >= w.kBlocks)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "channel block " + llvm::Twine(kb) + " out of range");
  int64_t perChannel = w.weights.size() / w.k;
  std::string out;
  out.reserve(text->size() * 2 / 10 + 1024);
  llvm::raw_string_ostream os(out);
  StringRef tmplName = entry;
  auto emitRenamed = [&](StringRef line, BlockFold *fold, StringRef labelSuffix) {
    ::emitRenamed(os, line, tmplName, name, fold, labelSuffix);
  };
  std::string suffix = "_b" + std::to_string(kb);
  os << "$spconv_block_" << kb << ":\n\t{\n";
  for (StringRef d : localDecls)
    emitRenamed(d, nullptr, "");
  BlockFold fold(w, kb, perChannel, defCount.size());
  // Where each shared load, and each mov that a deleted FMA left with a constant, landed in
  // `out`, to drop the ones nobody reads afterwards (`line` is null for such a mov).
  struct LoadSpan {
    size_t begin, end;
    const Line *line;
    uint32_t movDest;
  };
  std::vector<LoadSpan> loads;
  size_t blockBegin = out.size();
  for (const Line &line : body) {
    switch (line.kind) {
    case Line::SharedLoad: {
      size_t begin = out.size();
      emitRenamed(line.text, &fold, suffix);
      loads.push_back({begin - blockBegin, out.size() - blockBegin, &line, 0});
      break;
    }
    case Line::MovConst: {
      bool absent;
      float v = fold.resolve(*line.opPlaceholder[0], absent);
      if (defCount[line.dest] == 1) {
        fold.hasConst[line.dest] = 1;
        fold.constValue[line.dest] = v;
        fold.constAbsent[line.dest] = absent;
      }
      ++fold.mentions[line.dest];
      os << "\tmov.b32 \t%r" << line.dest << ", " << f32Imm(v) << ";\n";
      break;
    }
    case Line::Fma: {
      // Which factor holds the weight, and its value.
      std::optional<float> weight;
      bool absent = false;
      int weightOp = -1;
      for (int o : {0, 1}) {
        if (line.opPlaceholder[o]) {
          weight = fold.resolve(*line.opPlaceholder[o], absent);
          weightOp = o;
        } else if (line.opReg[o] && fold.hasConst[*line.opReg[o]]) {
          weight = fold.constValue[*line.opReg[o]];
          absent = fold.constAbsent[*line.opReg[o]];
          weightOp = o;
        }
      }
      // The addend: a register (through the aliases) or an immediate (maybe the bias).
      std::string addend;
      std::optional<uint32_t> addendReg = line.opReg[2];
      if (addendReg) {
        if (fold.alias[*addendReg] >= 0)
          addendReg = uint32_t(fold.alias[*addendReg]);
        if (!fold.immediate[*addendReg].empty()) {
          addend = fold.immediate[*addendReg];
          addendReg.reset();
        } else if (fold.hasConst[*addendReg]) {
          // A bias the template moved into a register (NVPTX at -O0).
          addend = f32Imm(fold.constValue[*addendReg]);
          addendReg.reset();
        } else {
          addend = "%r" + std::to_string(*addendReg);
        }
      } else if (line.opPlaceholder[2]) {
        bool biasAbsent;
        addend = f32Imm(fold.resolve(*line.opPlaceholder[2], biasAbsent));
      } else {
        addend = line.ops[2].str();
      }
      bool isZero = weight && *weight == 0.0f;
      if (weight && (absent || (isZero && !w.strictIEEE))) {
        ++counts.deleted;
        // fma(x, 0, acc) == acc once NaN/Inf propagation from x is given up.
        if (addendReg && defCount[line.dest] == 1 && defCount[*addendReg] == 1 &&
            !line.usedBeforeDef) {
          fold.alias[line.dest] = int32_t(*addendReg);
        } else {
          ++fold.mentions[line.dest];
          if (addendReg)
            ++fold.mentions[*addendReg];
          size_t begin = out.size();
          os << "\tmov.b32 \t%r" << line.dest << ", " << addend << ";\n";
          // A constant (the bias, or 0): later FMAs take it as an immediate addend, as
          // they would have from LLVM; the mov serves any other reader, and goes when
          // there is none (most accumulators start with a run of zero weights).
          if (!addendReg && defCount[line.dest] == 1 && !line.usedBeforeDef) {
            fold.immediate[line.dest] = addend;
            loads.push_back({begin - blockBegin, out.size() - blockBegin, nullptr, line.dest});
          }
        }
        break;
      }
      if (weight)
        ++counts.kept;
      os << "\tfma.rn.f32 \t%r" << line.dest;
      ++fold.mentions[line.dest];
      for (int o : {0, 1}) {
        os << ", ";
        if (o == weightOp && line.opPlaceholder[o]) {
          os << f32Imm(*weight);
        } else if (std::optional<uint32_t> r = line.opReg[o]) {
          uint32_t id = fold.alias[*r] >= 0 ? uint32_t(fold.alias[*r]) : *r;
          ++fold.mentions[id];
          os << "%r" << id;
        } else {
          os << line.ops[o];
        }
      }
      if (addendReg)
        ++fold.mentions[*addendReg];
      os << ", " << addend << ";\n";
      break;
    }
    case Line::Plain:
      emitRenamed(line.text, &fold, suffix);
      break;
    }
  }
  // Drop loads whose only mention left is their own definition, and narrow vector loads
  // with a single lane still read to a scalar load; compact the block's text in place.
  std::string kept;
  size_t from = 0;
  StringRef blockText = StringRef(out).drop_front(blockBegin);
  for (const LoadSpan &l : loads) {
    if (!l.line) {
      if (fold.mentions[l.movDest] == 1) {
        kept += blockText.substr(from, l.begin - from);
        from = l.end;
        ++counts.deadMovs;
      }
      continue;
    }
    llvm::SmallVector<size_t, 4> live;
    for (size_t lane = 0; lane < l.line->lanes.size(); ++lane)
      if (fold.mentions[l.line->lanes[lane]] != 1)
        live.push_back(lane);
    if (live.size() == l.line->lanes.size() ||
        (live.size() > 1 && l.line->lanes.size() > 1))
      continue;
    kept += blockText.substr(from, l.begin - from);
    from = l.end;
    if (live.empty()) {
      counts.deadLoads += l.line->lanes.size();
      continue;
    }
    counts.deadLoads += l.line->lanes.size() - 1;
    int64_t offset = l.line->addressOffset + 4 * int64_t(live.front());
    kept += "\tld.shared.b32 \t%r" + std::to_string(l.line->lanes[live.front()]) + ", [" +
            l.line->addressBase.str() + (offset ? "+" + std::to_string(offset) : "") +
            "];\n";
  }
  if (from != 0) {
    kept += blockText.substr(from);
    out.resize(blockBegin);
    out += kept;
  }
  os << "\tret;\n\t}\n";
  return out;
}
