//===- PtxKernelAssembly.cpp - stamped channel blocks into PTX units ------===//
//
// A conv's kernel is the branch on %ctaid.y to one copy of the body per channel block. When
// the copies together exceed the code budget, they are packed into `.func` pieces that
// ptxas assembles separately (`ptxas -c`, in parallel, each in bounded time and memory) and
// nvlink links back into one kernel: a small `.entry` calls the piece that owns its channel
// block. The launch does not change: one grid, one kernel name (docs/design.md, "Code-size
// budget").
//
//===----------------------------------------------------------------------===//
#include "spconv/Target/PtxBlockTemplate.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <limits>

using namespace spconv;
using llvm::StringRef;

/// Every occurrence of `from` in `line` replaced by `to`.
static std::string renamed(StringRef line, StringRef from, StringRef to) {
  std::string out;
  while (true) {
    size_t at = line.find(from);
    if (at == StringRef::npos)
      break;
    out += line.take_front(at);
    out += to;
    line = line.drop_front(at + from.size());
  }
  out += line;
  return out;
}

int64_t spconv::countPtxInstructions(StringRef text) {
  int64_t n = 0;
  while (!text.empty()) {
    auto [line, rest] = text.split('\n');
    text = rest;
    line = line.trim();
    if (line.empty() || line.starts_with("//") || line.starts_with(".") || line.starts_with("{") ||
        line.starts_with("}") || line.starts_with("$"))
      continue;
    ++n;
  }
  return n;
}

/// The branch chain that sends channel block `reg` (%ctaid.y or %ctaid.z) in [first, last)
/// to its copy; block `first` falls through (it is emitted right after the chain).
static void emitBlockChain(llvm::raw_ostream &os, int64_t first, int64_t last,
                           const char *reg) {
  os << "\t.reg .b32 \t%spconv_block;\n\t.reg .pred \t%spconv_is_block<" << last << ">;\n";
  os << "\tmov.u32 \t%spconv_block, " << reg << ";\n";
  for (int64_t kb = first + 1; kb < last; ++kb)
    os << "\tsetp.eq.u32 \t%spconv_is_block" << kb << ", %spconv_block, " << kb
       << ";\n\t@%spconv_is_block" << kb << " bra \t$spconv_block_" << kb << ";\n";
}

/// `block` with every `ret;` instruction replaced by `exit;`.
static std::string exitInsteadOfRet(StringRef block) {
  std::string out;
  out.reserve(block.size() + 64);
  while (!block.empty()) {
    auto [line, rest] = block.split('\n');
    if (line.trim() == "ret;")
      out += "\texit;";
    else
      out += line;
    out += '\n';
    block = rest;
  }
  return out;
}

std::vector<PtxUnit> PtxBlockTemplate::packUnits(
    StringRef name, llvm::ArrayRef<int64_t> sizes, int64_t fixed, int64_t budget,
    int64_t minBlocksPerSM,
    llvm::function_ref<void(llvm::raw_ostream &, int64_t, int64_t, bool)> body) const {
  int64_t total = fixed;
  for (int64_t size : sizes)
    total += size;

  llvm::SmallVector<StringRef> paramLines;
  params.split(paramLines, '\n', -1, /*KeepEmpty=*/false);
  std::string paramsText;
  llvm::SmallVector<std::string> paramNames;
  for (StringRef p : paramLines) {
    std::string line = renamed(p, entry, name);
    paramsText += line + "\n";
    StringRef decl = StringRef(line).trim().rtrim(',');
    paramNames.push_back(decl.substr(decl.find_last_of(" \t") + 1).str());
  }
  std::string entryDirectives = directives.str();
  if (!entryDirectives.empty())
    entryDirectives += "\n";
  if (minBlocksPerSM > 0 && !directives.contains(".minnctapersm"))
    entryDirectives += ".minnctapersm " + std::to_string(minBlocksPerSM) + "\n";

  std::vector<PtxUnit> units;
  int64_t numBlocks = sizes.size();
  if (total <= budget || numBlocks == 1) {
    // One kernel as NVPTX would have written it: the shared tile stays in its scope.
    PtxUnit unit;
    unit.symbol = name.str();
    unit.isEntry = true;
    unit.instructions = total;
    llvm::raw_string_ostream os(unit.code);
    os << ".visible .entry " << name << "(\n" << paramsText << ")\n" << entryDirectives;
    os << "{\n";
    for (StringRef d : sharedDecls)
      os << renamed(d, entry, name) << "\n";
    body(os, 0, numBlocks, /*inPiece=*/false);
    os << "}\n";
    units.push_back(std::move(unit));
    return units;
  }

  // The shared tile moves to module scope, defined by the entry's unit and declared by the
  // pieces, so that the linked kernel has one tile whichever piece runs.
  std::string sharedDefs, sharedExterns;
  for (StringRef d : sharedDecls) {
    std::string decl = renamed(d.trim(), entry, name);
    sharedDefs += ".visible " + decl + "\n";
    sharedExterns += ".extern " + decl + "\n";
  }
  std::string funcParams;
  for (size_t i = 0; i < paramNames.size(); ++i)
    funcParams += (i ? ",\n\t.param .b64 " : "\t.param .b64 ") + paramNames[i];

  std::vector<std::pair<int64_t, int64_t>> ranges; // [first, last) channel blocks
  for (int64_t kb = 0; kb < numBlocks;) {
    int64_t first = kb, size = fixed + sizes[kb++];
    while (kb < numBlocks && size + sizes[kb] <= budget)
      size += sizes[kb++];
    ranges.push_back({first, kb});
  }

  PtxUnit dispatcher;
  dispatcher.symbol = name.str();
  dispatcher.isEntry = true;
  dispatcher.globals = sharedDefs;
  llvm::raw_string_ostream ds(dispatcher.code);
  ds << ".visible .entry " << name << "(\n" << paramsText << ")\n" << entryDirectives << "{\n";
  ds << "\t.reg .b64 \t%spconv_arg<" << paramNames.size() << ">;\n"
     << "\t.reg .b32 \t%spconv_block;\n\t.reg .pred \t%spconv_in_piece<" << ranges.size() << ">;\n";
  for (size_t i = 0; i < paramNames.size(); ++i)
    ds << "\tld.param.b64 \t%spconv_arg" << i << ", [" << paramNames[i] << "];\n";
  ds << "\tmov.u32 \t%spconv_block, " << channelBlockRegister() << ";\n";
  for (size_t p = 0; p + 1 < ranges.size(); ++p)
    ds << "\tsetp.ge.u32 \t%spconv_in_piece" << p << ", %spconv_block, " << ranges[p].second
       << ";\n\t@%spconv_in_piece" << p << " bra \t$spconv_after_piece_" << p << ";\n"
       << "\tbra.uni \t$spconv_piece_" << p << ";\n$spconv_after_piece_" << p << ":\n";
  auto emitCall = [&](StringRef piece) {
    ds << "\t{\n";
    for (size_t i = 0; i < paramNames.size(); ++i)
      ds << "\t.param .b64 \t%spconv_param" << i << ";\n\tst.param.b64 \t[%spconv_param" << i
         << "], %spconv_arg" << i << ";\n";
    ds << "\tcall.uni \t" << piece << ", (";
    for (size_t i = 0; i < paramNames.size(); ++i)
      ds << (i ? ", " : "") << "%spconv_param" << i;
    ds << ");\n\t}\n\tret;\n";
  };
  std::vector<std::string> pieces;
  for (size_t p = 0; p < ranges.size(); ++p) {
    std::string piece = (name + "_piece" + llvm::Twine(p)).str();
    PtxUnit unit;
    unit.symbol = piece;
    unit.externs = sharedExterns;
    llvm::raw_string_ostream os(unit.code);
    // A piece never returns: its blocks end the thread with `exit` where the kernel had
    // `ret`. Declared .noreturn, it needs no callee-saved registers: without it, ptxas saves
    // about 46 registers through local memory around the body, which measured 27-59% slower
    // (docs/tuning-log.md, "Code-size budget").
    os << ".visible .func " << piece << "(\n" << funcParams << "\n)\n.noreturn\n{\n";
    body(os, ranges[p].first, ranges[p].second, /*inPiece=*/true);
    os << "}\n";
    unit.instructions = fixed;
    for (int64_t kb = ranges[p].first; kb < ranges[p].second; ++kb)
      unit.instructions += sizes[kb];
    dispatcher.externs += ".extern .func " + piece + "(\n" + funcParams + "\n)\n.noreturn;\n";
    units.push_back(std::move(unit));
    pieces.push_back(std::move(piece));
  }
  // The chain falls through to the last piece; the others are branched to.
  emitCall(pieces.back());
  for (size_t p = 0; p + 1 < pieces.size(); ++p) {
    ds << "$spconv_piece_" << p << ":\n";
    emitCall(pieces[p]);
  }
  ds << "}\n";
  dispatcher.instructions = countPtxInstructions(dispatcher.code);
  units.push_back(std::move(dispatcher));
  return units;
}

std::vector<PtxUnit> PtxBlockTemplate::assemble(StringRef name, llvm::ArrayRef<std::string> blocks,
                                                int64_t budget, int64_t minBlocksPerSM) const {
  std::vector<int64_t> sizes;
  for (const std::string &b : blocks)
    sizes.push_back(countPtxInstructions(b));
  return packUnits(name, sizes, 0, budget, minBlocksPerSM,
                   [&](llvm::raw_ostream &os, int64_t first, int64_t last, bool inPiece) {
                     emitBlockChain(os, first, last, channelBlockRegister());
                     for (int64_t kb = first; kb < last; ++kb)
                       os << (inPiece ? exitInsteadOfRet(blocks[kb]) : blocks[kb]);
                   });
}

/// Instructions the dispatch adds per region and block: its share of the indexed branch
/// and the branch to the join.
static constexpr int64_t kDispatchPerRegion = 1;

std::vector<PtxUnit>
PtxBlockTemplate::assembleShared(StringRef name,
                                 llvm::ArrayRef<std::vector<std::string>> blockRegions,
                                 int64_t budget, int64_t minBlocksPerSM) const {
  std::vector<int64_t> sizes;
  for (const std::vector<std::string> &texts : blockRegions) {
    int64_t size = 0;
    for (const std::string &t : texts)
      size += countPtxInstructions(t) + kDispatchPerRegion;
    sizes.push_back(size);
  }
  auto body = [&](llvm::raw_ostream &os, int64_t first, int64_t last, bool inPiece) {
    for (StringRef d : localDecls)
      os << renamed(d, entry, name) << "\n";
    // Channel block %ctaid.y (.z: channel-block-major) is entry `that - first` of every
    // region's branch table.
    bool dispatch = last - first > 1;
    if (dispatch) {
      os << "\t.reg .b32 \t%spconv_block;\n\tmov.u32 \t%spconv_block, "
         << channelBlockRegister() << ";\n";
      if (first)
        os << "\tsub.u32 \t%spconv_block, %spconv_block, " << first << ";\n";
    }
    for (size_t j = 0; j < regions.size(); ++j) {
      os << sharedSegment(j, name, inPiece);
      if (!dispatch) {
        os << blockRegions[first][j];
        continue;
      }
      std::string region = "$spconv_r" + std::to_string(j);
      // One indexed branch per region. It measured faster than a binary search of
      // uniform branches (docs/tuning-log.md, "Shared staging").
      os << region << "_blocks: .branchtargets ";
      for (int64_t kb = first; kb < last; ++kb)
        os << (kb == first ? "" : ", ") << region << "_b" << kb;
      os << ";\n\tbrx.idx.uni \t%spconv_block, " << region << "_blocks;\n";
      for (int64_t kb = first; kb < last; ++kb) {
        os << region << "_b" << kb << ":\n" << blockRegions[kb][j];
        if (kb + 1 < last)
          os << "\tbra.uni \t" << region << "_join;\n";
      }
      os << region << "_join:\n";
    }
    os << sharedSegment(regions.size(), name, inPiece);
  };
  return packUnits(name, sizes, sharedInstructions(), budget, minBlocksPerSM, body);
}

llvm::Expected<std::string> PtxBlockTemplate::instantiate(StringRef name, const BlockWeights &w,
                                                          int64_t minBlocksPerSM,
                                                          PtxFoldCounts &counts,
                                                          bool shareStaging) const {
  if (llvm::Error err = checkWeights(w))
    return std::move(err);
  constexpr int64_t unbounded = std::numeric_limits<int64_t>::max();
  if (shareStaging && sharesStaging()) {
    std::vector<std::vector<std::string>> blockRegions;
    for (int64_t kb = 0; kb < w.kBlocks; ++kb) {
      llvm::Expected<std::vector<std::string>> regions = stampRegions(name, w, kb, counts);
      if (!regions)
        return regions.takeError();
      blockRegions.push_back(std::move(*regions));
    }
    return std::move(assembleShared(name, blockRegions, unbounded, minBlocksPerSM).front().code);
  }
  std::vector<std::string> blocks;
  for (int64_t kb = 0; kb < w.kBlocks; ++kb) {
    llvm::Expected<std::string> block = stampBlock(name, w, kb, counts);
    if (!block)
      return block.takeError();
    blocks.push_back(std::move(*block));
  }
  return std::move(assemble(name, blocks, unbounded, minBlocksPerSM).front().code);
}

std::string spconv::ptxModule(StringRef header, llvm::ArrayRef<PtxUnit> units) {
  std::string kernels;
  for (const PtxUnit &u : units)
    kernels += u.globals;
  // Pieces precede the entry that calls them, so no declaration is needed in one module.
  for (const PtxUnit &u : units)
    kernels += "\n" + u.code;
  return ptxModule(header, kernels);
}

std::string spconv::ptxUnitModule(StringRef header, const PtxUnit &unit) {
  return ptxModule(header, unit.externs + unit.globals + "\n" + unit.code);
}
