//===- PtxBlockStamp.cpp - one channel block's weights folded into PTX ----===//
//
// NVPTX writes each virtual register once per definition and, in the template's
// straight-line chunks, every FMA defines a fresh %r register. That makes the fold a single
// forward walk over the text: an FMA by a zero weight is dropped and later mentions of its
// result are renamed to its addend. Where that renaming is not provably safe (a register
// defined twice, or mentioned above its definition) the FMA becomes a `mov` instead, which
// is always correct and which ptxas propagates away.
//
// A block is stamped whole (stampBlock: its own copy of every line) or as its FMA regions
// only (stampRegions), for kernels whose staging code is shared by the channel blocks.
//
//===----------------------------------------------------------------------===//
#include "TemplateText.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace spconv;
using namespace spconv::ptxtext;
using llvm::StringRef;

void spconv::ptxtext::emitRenamed(llvm::raw_ostream &os, StringRef line, StringRef tmplName,
                                  StringRef name, llvm::ArrayRef<int32_t> alias,
                                  std::vector<uint32_t> *mentions, StringRef labelSuffix) {
  size_t last = 0;
  forEachToken(line, [&](size_t off, StringRef tok) {
    if (mentions)
      if (std::optional<uint32_t> r = parseReg32(tok)) {
        uint32_t id = alias[*r] >= 0 ? uint32_t(alias[*r]) : *r;
        ++(*mentions)[id];
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

const char *spconv::templateTypeName(TemplateType type) {
  switch (type) {
  case TemplateType::f32:
    return "f32";
  case TemplateType::f16:
    return "f16";
  case TemplateType::bf16:
    return "bf16";
  }
  return "?";
}

/// `v` as diagnostics print it.
static std::string printed(float v) {
  std::string text;
  llvm::raw_string_ostream(text) << v;
  return text;
}

static const llvm::fltSemantics &semantics(TemplateType type) {
  return type == TemplateType::bf16 ? llvm::APFloat::BFloat() : llvm::APFloat::IEEEhalf();
}

llvm::Error spconv::roundToTemplateType(std::vector<float> &values, TemplateType type,
                                        StringRef what) {
  if (type == TemplateType::f32)
    return llvm::Error::success();
  for (size_t i = 0; i < values.size(); ++i) {
    llvm::APFloat v(values[i]);
    bool lost;
    v.convert(semantics(type), llvm::APFloat::rmNearestTiesToEven, &lost);
    // No weight crosses zero, and none finite becomes infinite: which weights are zero is
    // what the code is made of.
    if ((v.isZero() && values[i] != 0.0f) || (v.isInfinity() && std::isfinite(values[i])))
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     what + " " + llvm::Twine(i) + " (" +
                                         printed(values[i]) +
                                         ") would round to zero or overflow in " +
                                         templateTypeName(type) +
                                         "; rescale the layer or keep it in f32");
    v.convert(llvm::APFloat::IEEEsingle(), llvm::APFloat::rmNearestTiesToEven, &lost);
    values[i] = v.convertToFloat();
  }
  return llvm::Error::success();
}

/// The word (v, v) of a half-precision FMA, or nothing if `v` is not a value of `type`
/// (the weights were not rounded first).
static std::optional<uint32_t> packedWord(float v, TemplateType type) {
  llvm::APFloat h(v);
  bool lost;
  if (h.convert(semantics(type), llvm::APFloat::rmNearestTiesToEven, &lost) !=
          llvm::APFloat::opOK ||
      lost)
    return std::nullopt;
  uint32_t bits = uint32_t(h.bitcastToAPInt().getZExtValue());
  return bits << 16 | bits;
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

  /// The real value of weight (or bias) placeholder `index`; `absent` when it belongs to a
  /// channel past K.
  float resolve(int64_t index, bool isBias, bool &absent) const {
    absent = false;
    int64_t k = kb * w.blockK + (isBias ? index : index / perChannel);
    if (k >= w.k) {
      absent = true;
      return 0.0f;
    }
    return isBias ? w.bias[k] : w.weights[kb * w.blockK * perChannel + index];
  }
  /// The real value of an f32 placeholder.
  float resolve(float placeholderValue, bool &absent) const {
    if (std::optional<int64_t> i = placeholder::decodeWeight(placeholderValue))
      return resolve(*i, false, absent);
    return resolve(*placeholder::decodeBias(placeholderValue), true, absent);
  }
};

/// Where a shared load, or a mov that a deleted FMA left with a constant, landed in the
/// folded text (`line` is null for such a mov), to drop the ones nobody reads afterwards.
struct LoadSpan {
  size_t begin, end;
  const PtxBlockTemplate::Line *line;
  uint32_t movDest;
};

/// What folding one channel block needs besides its state: the template's lines and names.
struct FoldWalk {
  llvm::ArrayRef<uint32_t> defCount;
  StringRef tmplName, name, labelSuffix;
  bool strictIEEE;
  PtxFoldCounts &counts;
  TemplateType type;
  /// The first value a half-precision word could not hold exactly (not rounded first).
  mutable std::optional<float> unrounded;

  /// Folds `lines` into `out` (appending), noting loads and constant movs in `loads`.
  void fold(llvm::ArrayRef<PtxBlockTemplate::Line> lines, BlockFold &fold, std::string &out,
            std::vector<LoadSpan> &loads) const;
};
} // namespace

void FoldWalk::fold(llvm::ArrayRef<PtxBlockTemplate::Line> lines, BlockFold &fold,
                    std::string &out, std::vector<LoadSpan> &loads) const {
  using Line = PtxBlockTemplate::Line;
  llvm::raw_string_ostream os(out);
  auto emitCopy = [&](StringRef text) {
    emitRenamed(os, text, tmplName, name, fold.alias, &fold.mentions, labelSuffix);
  };
  for (const Line &line : lines) {
    switch (line.kind) {
    case Line::SharedLoad: {
      size_t begin = out.size();
      emitCopy(line.text);
      loads.push_back({begin, out.size(), &line, 0});
      break;
    }
    case Line::MovConst: {
      bool absent;
      float v;
      std::string imm;
      if (line.word) {
        placeholder::HalfPlaceholder p = *placeholder::decodeHalfWord(*line.word);
        v = fold.resolve(p.index, p.isBias, absent);
        std::optional<uint32_t> word = packedWord(v, type);
        if (!word) {
          unrounded = unrounded.value_or(v);
          word = 0;
        }
        imm = wordImm(*word);
      } else {
        v = fold.resolve(*line.opPlaceholder[0], absent);
        imm = f32Imm(v);
      }
      if (defCount[line.dest] == 1) {
        fold.hasConst[line.dest] = 1;
        fold.constValue[line.dest] = v;
        fold.constAbsent[line.dest] = absent;
      }
      ++fold.mentions[line.dest];
      size_t begin = out.size();
      os << "\tmov.b32 \t%r" << line.dest << ", " << imm << ";\n";
      // Dropped when nothing reads it any more (every FMA of a zero weight went).
      if (defCount[line.dest] == 1)
        loads.push_back({begin, out.size(), nullptr, line.dest});
      break;
    }
    case Line::BiasAdd: {
      bool absent;
      float v = fold.resolve(*line.opPlaceholder[0], absent);
      if (absent && line.opReg[0]) {
        // A channel past K: its sum is never stored. Like a deleted FMA, the sum becomes
        // the run it would have been added to.
        uint32_t run = *line.opReg[0];
        if (fold.alias[run] >= 0)
          run = uint32_t(fold.alias[run]);
        if (defCount[line.dest] == 1 && defCount[run] == 1 && !line.usedBeforeDef) {
          fold.alias[line.dest] = int32_t(run);
        } else {
          ++fold.mentions[line.dest];
          ++fold.mentions[run];
          os << "\tmov.b32 \t%r" << line.dest << ", %r" << run << ";\n";
        }
        break;
      }
      std::string patched = (line.text.take_front(line.immOffset) + f32Imm(v) +
                             line.text.drop_front(line.immOffset + line.immSize))
                                .str();
      emitCopy(patched);
      break;
    }
    case Line::Fma: {
      // Which factor holds the weight, and its value.
      std::optional<float> weight;
      bool absent = false;
      int weightOp = -1;
      bool half = line.halfWeightOp >= 0;
      if (half) {
        // The weight word's register, which its MovConst (above, defined once) resolved.
        weightOp = line.halfWeightOp;
        uint32_t r = *line.opReg[weightOp];
        weight = fold.constValue[r];
        absent = fold.constAbsent[r];
      }
      for (int o : {0, 1}) {
        if (half)
          break;
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
        // A paired FMA takes registers only: a constant addend stays in its register.
        if (half) {
          addend = "%r" + std::to_string(*addendReg);
        } else if (!fold.immediate[*addendReg].empty()) {
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
      if (weight && (absent || (isZero && !strictIEEE))) {
        ++counts.deleted;
        // fma(x, 0, acc) == acc once NaN/Inf propagation from x is given up.
        if (addendReg && defCount[line.dest] == 1 && defCount[*addendReg] == 1 &&
            !line.usedBeforeDef) {
          fold.alias[line.dest] = int32_t(*addendReg);
        } else if (addendReg && *addendReg == line.dest) {
          // fma d, x, 0, d (an accumulator updated in place) leaves d as it is.
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
            loads.push_back({begin, out.size(), nullptr, line.dest});
          }
        }
        break;
      }
      if (weight)
        ++counts.kept;
      os << '\t' << (half ? line.halfOpcode : StringRef("fma.rn.f32")) << " \t%r" << line.dest;
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
      emitCopy(line.text);
      break;
    }
  }
}

/// Drops the loads (and constant movs) of `text` whose only mention left is their own
/// definition, and narrows vector loads with a single lane still read to a scalar load.
static void dropDeadLoads(std::string &text, llvm::ArrayRef<LoadSpan> loads,
                          const BlockFold &fold, PtxFoldCounts &counts) {
  std::string kept;
  size_t from = 0;
  for (const LoadSpan &l : loads) {
    if (!l.line) {
      if (fold.mentions[l.movDest] == 1) {
        kept += StringRef(text).substr(from, l.begin - from);
        from = l.end;
        ++counts.deadMovs;
      }
      continue;
    }
    llvm::SmallVector<size_t, 4> live;
    for (size_t lane = 0; lane < l.line->lanes.size(); ++lane)
      if (fold.mentions[l.line->lanes[lane]] != 1)
        live.push_back(lane);
    if (live.size() == l.line->lanes.size() || (live.size() > 1 && l.line->lanes.size() > 1))
      continue;
    kept += StringRef(text).substr(from, l.begin - from);
    from = l.end;
    if (live.empty()) {
      counts.deadLoads += l.line->lanes.size();
      continue;
    }
    counts.deadLoads += l.line->lanes.size() - 1;
    int64_t offset = l.line->addressOffset + 4 * int64_t(live.front());
    kept += "\tld.shared.b32 \t%r" + std::to_string(l.line->lanes[live.front()]) + ", [" +
            l.line->addressBase.str() + (offset ? "+" + std::to_string(offset) : "") + "];\n";
  }
  if (from != 0) {
    kept += StringRef(text).substr(from);
    text = std::move(kept);
  }
}

/// Leaves each of `liveOut` in its own register at the end of a region, where the fold
/// renamed it to its addend or forwarded it as a constant: the code after the region (shared
/// by every channel block) reads the registers the template named. A shared load that
/// defines one is kept.
static void materialize(llvm::ArrayRef<uint32_t> liveOut, BlockFold &fold, std::string &out) {
  llvm::raw_string_ostream os(out);
  for (uint32_t r : liveOut) {
    if (fold.alias[r] >= 0) {
      os << "\tmov.b32 \t%r" << r << ", %r" << fold.alias[r] << ";\n";
      ++fold.mentions[fold.alias[r]];
      ++fold.mentions[r];
      fold.alias[r] = -1;
    } else if (!fold.immediate[r].empty()) {
      // The first mov of the constant may go as dead; this one stays.
      os << "\tmov.b32 \t%r" << r << ", " << fold.immediate[r] << ";\n";
      fold.immediate[r].clear();
    } else {
      ++fold.mentions[r];
    }
  }
}

/// The error of a walk that met a weight its half-precision words cannot hold.
static llvm::Error unroundedError(const FoldWalk &walk) {
  if (!walk.unrounded)
    return llvm::Error::success();
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(),
      "value " + printed(*walk.unrounded) + " is not a " +
          templateTypeName(walk.type) +
          " value: round the weights and bias first (roundToTemplateType)");
}

llvm::Error PtxBlockTemplate::checkBlock(const BlockWeights &w, int64_t kb) const {
  if (llvm::Error err = checkWeights(w))
    return err;
  if (kb < 0 || kb >= w.kBlocks)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "channel block " + llvm::Twine(kb) + " out of range");
  return llvm::Error::success();
}

llvm::Expected<std::string> PtxBlockTemplate::stampBlock(StringRef name, const BlockWeights &w,
                                                         int64_t kb,
                                                         PtxFoldCounts &counts) const {
  if (llvm::Error err = checkBlock(w, kb))
    return std::move(err);
  std::string suffix = "_b" + std::to_string(kb);
  std::string out;
  llvm::raw_string_ostream os(out);
  os << "$spconv_block_" << kb << ":\n\t{\n";
  for (StringRef d : localDecls)
    emitRenamed(os, d, entry, name, {}, nullptr, "");
  BlockFold fold(w, kb, int64_t(w.weights.size()) / w.k, defCount.size());
  FoldWalk walk{defCount, entry, name, suffix, w.strictIEEE, counts, type, {}};
  std::string folded;
  folded.reserve(text->size() * 2 / 10 + 1024);
  std::vector<LoadSpan> loads;
  walk.fold(body, fold, folded, loads);
  if (llvm::Error err = unroundedError(walk))
    return std::move(err);
  dropDeadLoads(folded, loads, fold, counts);
  os << folded << "\tret;\n\t}\n";
  return out;
}

llvm::Expected<std::vector<std::string>>
PtxBlockTemplate::stampRegions(StringRef name, const BlockWeights &w, int64_t kb,
                               PtxFoldCounts &counts) const {
  if (llvm::Error err = checkBlock(w, kb))
    return std::move(err);
  if (!sharesStaging())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "the template cannot share its staging: " + noSharingReason);
  BlockFold fold(w, kb, int64_t(w.weights.size()) / w.k, defCount.size());
  // The walk keeps a StringRef to the suffix: it must outlive the walk.
  std::string suffix = "_b" + std::to_string(kb);
  FoldWalk walk{defCount, entry, name, suffix, w.strictIEEE, counts, type, {}};
  std::vector<std::string> texts(regions.size());
  std::vector<std::vector<LoadSpan>> loads(regions.size());
  for (size_t j = 0; j < regions.size(); ++j) {
    const Region &r = regions[j];
    walk.fold(llvm::ArrayRef(body).slice(r.first, r.last - r.first), fold, texts[j], loads[j]);
    materialize(r.liveOut, fold, texts[j]);
  }
  if (llvm::Error err = unroundedError(walk))
    return std::move(err);
  // Only now are the mentions final: a load read in no region is dead.
  for (size_t j = 0; j < regions.size(); ++j)
    dropDeadLoads(texts[j], loads[j], fold, counts);
  return texts;
}

std::string PtxBlockTemplate::sharedSegment(size_t i, StringRef name, bool exitForRet) const {
  size_t first = i == 0 ? 0 : regions[i - 1].last;
  size_t last = i < regions.size() ? regions[i].first : body.size();
  std::string out;
  llvm::raw_string_ostream os(out);
  for (const Line &line : llvm::ArrayRef(body).slice(first, last - first)) {
    if (exitForRet && line.text.trim() == "ret;")
      os << "\texit;\n";
    else
      emitRenamed(os, line.text, entry, name, {}, nullptr, "");
  }
  return out;
}
