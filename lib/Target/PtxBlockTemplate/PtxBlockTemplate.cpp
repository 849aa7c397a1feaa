//===- PtxBlockTemplate.cpp - parsing an NVPTX block template -------------===//
//
// Splits NVPTX's output for a one-channel-block template into what a stamped kernel copies
// (header, parameters, declarations, body lines) and classifies every body line once:
// FMAs and movs holding placeholders, shared loads, the rest. Also finds the FMA regions
// that let channel blocks share the staging code (docs/design.md, "Shared staging").
// Stamping is in PtxBlockStamp.cpp, assembling units in PtxKernelAssembly.cpp.
//
//===----------------------------------------------------------------------===//
#include "TemplateText.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/raw_ostream.h"

#include <limits>

using namespace spconv;
using namespace spconv::ptxtext;
using llvm::StringRef;



static constexpr llvm::StringLiteral kInfoPrefix = "// spconv block template:";

std::string BlockTemplateInfo::str() const {
  return (kInfoPrefix + " k=" + llvm::Twine(k) + " block_k=" + llvm::Twine(blockK) +
          " weights_per_channel=" + llvm::Twine(weightsPerChannel) +
          " bias=" + llvm::Twine(int(hasBias)) +
          (channelBlockDim == 2 ? " channel_block_dim=2" : "") +
          (type != TemplateType::f32 ? llvm::Twine(" dtype=") + templateTypeName(type)
                                     : llvm::Twine()) +
          "\n")
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
    if (key == "dtype") {
      if (value == "f16")
        info.type = TemplateType::f16;
      else if (value == "bf16")
        info.type = TemplateType::bf16;
      else if (value != "f32")
        return std::nullopt;
      continue;
    }
    int64_t *dst = key == "k" ? &info.k
                   : key == "block_k" ? &info.blockK
                   : key == "weights_per_channel" ? &info.weightsPerChannel
                   : key == "bias" ? &bias
                   : key == "channel_block_dim" ? &info.channelBlockDim
                                   : nullptr;
    if (!dst || value.getAsInteger(10, *dst))
      return std::nullopt;
  }
  if (info.k <= 0 || info.blockK <= 0 || info.weightsPerChannel <= 0 || bias < 0 || bias > 1 ||
      (info.channelBlockDim != 1 && info.channelBlockDim != 2))
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
    // Dynamic shared memory (Tiling::dynamicShared): the tile's external declaration, named
    // after the entry (declareDynamicSharedExtern).
    if (s.starts_with(".extern .shared ") && s.contains(entry) && s.ends_with("[];")) {
      t.dynamicSharedDecls.push_back(lines[i]);
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

  // The arithmetic's type: what the FMAs compute; an info line must agree.
  StringRef bodyText = span(bodyFirst, bodyEnd);
  TemplateType fmaType = bodyText.contains("fma.rn.bf16x2") ? TemplateType::bf16
                         : bodyText.contains("fma.rn.f16x2") ? TemplateType::f16
                                                             : TemplateType::f32;
  if (t.info && t.info->type != fmaType)
    return parseError(0, llvm::Twine("the info line says dtype=") +
                             templateTypeName(t.info->type) + " but the FMAs are " +
                             templateTypeName(fmaType));
  t.type = fmaType;
  bool half = fmaType != TemplateType::f32;
  StringRef halfFma = fmaType == TemplateType::bf16 ? "fma.rn.bf16x2" : "fma.rn.f16x2";
  // Half precision: 1 for a register a weight word is moved into, 2 for a bias word's.
  std::vector<uint8_t> wordReg(numRegs, 0);
  // Such a register read by integer arithmetic holds an integer whose bits happen to decode
  // (a division's magic number, say): its mov is no placeholder. `intReader` is the first
  // such line; `fmaReader`, whether a paired FMA reads it as a placeholder.
  std::vector<int64_t> intReader(numRegs, -1);
  std::vector<uint8_t> fmaReader(numRegs, 0);
  // Whether an opcode computes on integers (a part .u32, .s64, ...), not on bits or halves.
  auto isIntegerOp = [](StringRef opcode) {
    llvm::SmallVector<StringRef> parts;
    opcode.split(parts, '.');
    for (StringRef part : llvm::drop_begin(parts))
      if ((part.starts_with("u") || part.starts_with("s")) && part.size() > 1 &&
          llvm::all_of(part.drop_front(), llvm::isDigit))
        return true;
    return false;
  };
  // Which placeholders appear, when the info line says how many there are: each must, or
  // NVPTX moved it where the fold cannot see it (a half template's bias, once, became f32
  // constants that no longer name their channel).
  std::vector<char> seenWeight, seenBias;
  if (t.info) {
    int64_t channels = std::min(t.info->blockK, t.info->k);
    seenWeight.assign(channels * t.info->weightsPerChannel, 0);
    seenBias.assign(t.info->hasBias ? channels : 0, 0);
  }
  auto noteIndex = [&](int64_t index, bool isBias) {
    (isBias ? t.maxBiasIndex : t.maxWeightIndex) =
        std::max(isBias ? t.maxBiasIndex : t.maxWeightIndex, index);
    std::vector<char> &seen = isBias ? seenBias : seenWeight;
    if (index < int64_t(seen.size()))
      seen[index] = 1;
  };

  t.defCount.assign(numRegs, 0);
  std::vector<int64_t> defLine(numRegs, -1), firstUse(numRegs, -1), lastMention(numRegs, -1);
  std::vector<std::pair<size_t, uint32_t>> defs; // (body line, %r written), in line order
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
    bool holdsPlaceholder = false;
    llvm::SmallVector<uint32_t, 8> reads; // %r registers the line reads
    // A word in an address or in 64-bit arithmetic is an offset, not a weight.
    bool wideOp = opcode.contains("64") || opcode.contains(".wide");
    auto inAddress = [&](size_t off) {
      size_t open = s.rfind('[', off), close = s.rfind(']', off);
      return open != StringRef::npos && (close == StringRef::npos || close < open);
    };
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
        lastMention[*r] = index;
        if (isDef) {
          defs.push_back({index, *r});
          ++t.defCount[*r];
          if (defLine[*r] < 0)
            defLine[*r] = index;
        } else {
          reads.push_back(*r);
          if (firstUse[*r] < 0)
            firstUse[*r] = index;
        }
      } else if (std::optional<float> f = parseF32Imm(tok)) {
        holdsPlaceholder |= isPlaceholder(*f);
        if (isPlaceholder(*f) && !opcode.starts_with("fma.rn.f32") &&
            !opcode.starts_with("mov.") && !opcode.starts_with("add.rn.f32") && !tokenError)
          tokenError = parseError(j, "placeholder " + tok + " in an instruction the fold "
                                                          "does not patch: '" + s + "'");
      } else if (half && isInstruction && !wideOp && !isIntegerOp(opcode) && !inAddress(off)) {
        bool negated = off > 0 && s[off - 1] == '-';
        if (std::optional<uint32_t> word = parseWordImm(tok, negated))
          holdsPlaceholder |= placeholder::decodeHalfWord(*word).has_value();
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
    } else if (half && (opcode == "fma.rn.f16x2" || opcode == "fma.rn.bf16x2")) {
      // fma.rn.f16x2 d, a, b, c: the weight word reaches a or b through a register.
      std::optional<uint32_t> regs[4];
      for (size_t o = 0; o < ops.size() && o < 4; ++o)
        regs[o] = parseReg32(ops[o]);
      auto holds = [&](int o, uint8_t what) {
        return regs[o] && wordReg[*regs[o]] == what;
      };
      bool weight = holds(1, 1) || holds(2, 1);
      if (weight || holds(1, 2) || holds(2, 2) || holds(3, 1) || holds(3, 2)) {
        if (s.starts_with("@") || ops.size() != 4 || !regs[0] || !regs[1] || !regs[2] ||
            !regs[3])
          return parseError(j, "predicated or malformed FMA holds a placeholder: '" + s + "'");
        if (opcode != halfFma)
          return parseError(j, "'" + opcode + "' in a template whose FMAs are " + halfFma);
        if (holds(3, 1))
          return parseError(j, "weight placeholder used as an addend: '" + s + "'");
        if (holds(1, 2) || holds(2, 2))
          return parseError(j, "bias placeholder used as a factor: '" + s + "'");
        if (holds(1, 1) && holds(2, 1))
          return parseError(j, "two weight placeholders multiplied: '" + s + "'");
        line.kind = Line::Fma;
        line.dest = *regs[0];
        line.halfOpcode = opcode;
        line.halfWeightOp = holds(1, 1) ? 0 : 1;
        for (int o = 0; o < 3; ++o) {
          line.ops[o] = ops[o + 1];
          line.opReg[o] = regs[o + 1];
        }
      }
    } else if (opcode == "add.rn.f32" && !s.starts_with("@") && ops.size() == 3 &&
               parseReg32(ops[0])) {
      // A half template's f32 sums start from the bias: sum = run + bias.
      for (int o : {1, 2}) {
        std::optional<float> f = parseF32Imm(ops[o]);
        if (!f || !isPlaceholder(*f))
          continue;
        if (!placeholder::decodeBias(*f) || line.kind != Line::Plain)
          return parseError(j, "a weight placeholder, or two placeholders, in an add: '" +
                                   s + "'");
        line.kind = Line::BiasAdd;
        line.dest = *parseReg32(ops[0]);
        line.opReg[0] = parseReg32(ops[3 - o]);
        line.opPlaceholder[0] = f;
        line.immOffset = ops[o].data() - lines[j].data();
        line.immSize = ops[o].size();
      }
    } else if ((opcode == "mov.b32" || opcode == "mov.f32") && !s.starts_with("@") &&
               ops.size() == 2) {
      std::optional<float> f = parseF32Imm(ops[1]);
      std::optional<uint32_t> d = parseReg32(ops[0]);
      if (f && isPlaceholder(*f) && d) {
        line.kind = Line::MovConst;
        line.dest = *d;
        line.opPlaceholder[0] = f;
      } else if (half && d && opcode == "mov.b32") {
        // mov.b32 %r, <int>: a half-precision placeholder word (Placeholder.h).
        StringRef imm = ops[1];
        bool negated = imm.consume_front("-");
        if (std::optional<uint32_t> word = parseWordImm(imm, negated))
          if (std::optional<placeholder::HalfPlaceholder> p =
                  placeholder::decodeHalfWord(*word)) {
            line.kind = Line::MovConst;
            line.dest = *d;
            line.word = word;
            wordReg[*d] = p->isBias ? 2 : 1;
          }
      }
    } else if ((opcode == "ld.shared.b32" || opcode == "ld.shared.f32" ||
                opcode == "ld.global.b32" || opcode == "ld.global.f32" ||
                opcode == "ld.global.nc.b32" || opcode == "ld.global.nc.f32") &&
               !s.starts_with("@") && ops.size() == 2) {
      // Direct inputs (Tiling::directInputs) load from global memory in the FMA regions: a
      // load whose FMAs all fold away is dropped like a shared one.
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
    // A weight word's register feeds paired FMAs as a factor and nothing else: then the mov
    // is a weight (an integer constant whose bits happen to decode, read by anything else,
    // would otherwise be patched as one).
    for (uint32_t r : reads) {
      if (!wordReg[r])
        continue;
      bool byFma = line.kind == Line::Fma && line.halfWeightOp >= 0 &&
                   (wordReg[r] == 1 ? *line.opReg[line.halfWeightOp] == r
                                    : line.opReg[2] && *line.opReg[2] == r);
      if (byFma)
        fmaReader[r] = 1;
      else if (isIntegerOp(opcode))
        intReader[r] = intReader[r] < 0 ? int64_t(j) : intReader[r];
      else if (wordReg[r] == 1)
        return parseError(j, "weight placeholder register %r" + llvm::Twine(r) +
                                 " read where the fold does not patch it: '" + s + "'");
    }
    // Whatever holds a placeholder must be a line the fold patches.
    if (holdsPlaceholder && (line.kind == Line::Plain || line.kind == Line::SharedLoad))
      return parseError(j, "placeholder in an instruction the fold does not patch: '" + s +
                               "'");
    for (StringRef op : ops)
      if (std::optional<float> f = parseF32Imm(op)) {
        if (std::optional<int64_t> w = placeholder::decodeWeight(*f))
          noteIndex(*w, false);
        if (std::optional<int64_t> b = placeholder::decodeBias(*f))
          noteIndex(*b, true);
      }
    t.body.push_back(line);
  }
  // Words that integer arithmetic reads are integers: their movs are plain lines. One that a
  // paired FMA reads as well is refused.
  for (Line &line : t.body) {
    if (line.kind != Line::MovConst || !line.word)
      continue;
    uint32_t r = line.dest;
    if (intReader[r] >= 0) {
      if (fmaReader[r])
        return parseError(intReader[r], "placeholder register %r" + llvm::Twine(r) +
                                            " read by integer arithmetic too: '" +
                                            lines[intReader[r]].trim() + "'");
      line.kind = Line::Plain;
      line.word.reset();
      wordReg[r] = 0;
      continue;
    }
    placeholder::HalfPlaceholder p = *placeholder::decodeHalfWord(*line.word);
    noteIndex(p.index, p.isBias);
  }
  // A weight word must be defined once: the FMAs that read it take its folded value. A bias
  // word may not be: with half sums NVPTX can coalesce it with the accumulator it starts
  // (mov %r, <bias>; fma %r, x, w, %r; ...), and its mov is patched in place like any other.
  for (uint32_t r = 0; r < numRegs; ++r)
    if (wordReg[r] == 1 && t.defCount[r] != 1)
      return parseError(bodyFirst, "placeholder register %r" + llvm::Twine(r) +
                                       " is defined " + llvm::Twine(t.defCount[r]) +
                                       " times; the fold patches single definitions");
  for (auto [seen, what] : {std::make_pair(&seenWeight, "weight"),
                            std::make_pair(&seenBias, "bias")})
    if (auto missing = llvm::find(*seen, 0); missing != seen->end())
      return parseError(bodyFirst, llvm::Twine(what) + " placeholder " +
                                       llvm::Twine(missing - seen->begin()) +
                                       " appears nowhere the fold patches it (NVPTX folded "
                                       "or moved it); --fold-at=llvm folds in LLVM IR");
  for (Line &line : t.body)
    if (line.kind == Line::Fma || line.kind == Line::BiasAdd)
      line.usedBeforeDef = firstUse[line.dest] >= 0 && firstUse[line.dest] < defLine[line.dest];
  if (t.maxWeightIndex < 0)
    return parseError(bodyFirst, "no weight placeholder: not a template kernel");
  t.findRegions(firstUse, lastMention, defs);
  return std::move(t);
}

/// The comment NVPTX copies from the template's end-of-chunk inline asm
/// (ConvTemplate.cpp pins each chunk's FMAs with it).
static constexpr llvm::StringLiteral kChunkEndMarker = "// spconv channel block 0 chunk ";

/// A line that ends a straight-line stretch of code: a label, a barrier, a branch, a call or
/// the end of the thread.
static bool isRegionBoundary(StringRef s) {
  if (s.ends_with(":"))
    return true;
  if (s.starts_with("@"))
    s = s.drop_until([](char c) { return c == ' ' || c == '\t'; }).ltrim();
  for (StringRef op : {"bar.", "barrier.", "bra", "brx", "call", "ret", "exit", "trap"})
    if (s.starts_with(op))
      return true;
  return false;
}

void PtxBlockTemplate::findRegions(llvm::ArrayRef<int64_t> firstUse,
                                   llvm::ArrayRef<int64_t> lastMention,
                                   llvm::ArrayRef<std::pair<size_t, uint32_t>> defs) {
  auto refuse = [&](const llvm::Twine &why) {
    regions.clear();
    noSharingReason = why.str();
  };
  auto trimmed = [&](size_t i) { return body[i].text.trim(); };
  // A region runs back from a chunk's end marker to the barrier (or any other boundary)
  // before it: the chunk's shared loads and FMAs.
  size_t previousEnd = 0;
  for (size_t i = 0; i < body.size(); ++i) {
    if (!trimmed(i).starts_with(kChunkEndMarker))
      continue;
    size_t first = i;
    while (first > previousEnd && !isRegionBoundary(trimmed(first - 1)))
      --first;
    regions.push_back({first, i, {}});
    previousEnd = i + 1;
  }
  if (regions.empty())
    return refuse("the template marks no chunk ends");

  // Every placeholder must be folded per block, so it must sit in a region.
  size_t next = 0;
  for (size_t i = 0; i < body.size(); ++i) {
    while (next < regions.size() && regions[next].last <= i)
      ++next;
    bool inRegion = next < regions.size() && regions[next].first <= i;
    if (!inRegion && body[i].kind != Line::Plain && body[i].kind != Line::SharedLoad)
      return refuse("template line '" + trimmed(i) + "' holds a weight outside the FMAs");
  }

  // What each region leaves to the rest of the kernel: every register it defines that a
  // line outside it mentions. Above it counts too: a loop over the chunks (Tiling::chunkLoop)
  // reads the accumulators a region defines at the top of its next iteration, and a register
  // read in the region before the region defines it is carried around such a loop. (The fold
  // itself never renames a register that is defined twice or read above its definition.)
  llvm::DenseSet<uint32_t> seen;
  for (Region &r : regions) {
    seen.clear();
    auto d = llvm::lower_bound(defs, std::make_pair(r.first, uint32_t(0)));
    for (; d != defs.end() && d->first < r.last; ++d) {
      uint32_t reg = d->second;
      bool readAbove = firstUse[reg] >= 0 && size_t(firstUse[reg]) < d->first;
      if ((readAbove || lastMention[reg] >= int64_t(r.last)) && seen.insert(reg).second)
        r.liveOut.push_back(reg);
    }
  }

  for (size_t i = 0; i <= regions.size(); ++i) {
    size_t first = i == 0 ? 0 : regions[i - 1].last;
    size_t last = i < regions.size() ? regions[i].first : body.size();
    for (size_t j = first; j < last; ++j)
      sharedInstructionCount += countPtxInstructions(body[j].text);
  }
}

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

