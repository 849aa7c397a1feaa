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

static constexpr llvm::StringLiteral kPieceSuffix = "_piece";

std::string spconv::pieceSymbol(StringRef kernel, size_t piece) {
  return (kernel + kPieceSuffix + llvm::Twine(piece)).str();
}

StringRef spconv::kernelOfSymbol(StringRef symbol) {
  size_t at = symbol.rfind(kPieceSuffix);
  if (at == StringRef::npos || at + kPieceSuffix.size() == symbol.size() ||
      !llvm::all_of(symbol.drop_front(at + kPieceSuffix.size()), llvm::isDigit))
    return symbol;
  return symbol.take_front(at);
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

/// Shared word k of `name`'s work slot holds the %ctaid.<x|y|z> its blocks compute
/// (AssemblyOptions::smAffine).
static std::string workSlot(StringRef name) { return (name + "_spconv_work").str(); }
/// Queue counters (one per channel block) and the count of blocks that claimed their item.
static std::string workQueues(StringRef name) { return (name + "_spconv_queue").str(); }

/// The start of an SM-affine kernel's entry: thread 0 claims the block's work item, starting
/// with the queue of channel block %smid x `numBlocks` / %nsmid and moving to the next one
/// while a queue is drained, writes (tile, channel block, image group) to the work slot and,
/// as the last block of the launch to count its claim, resets the queues for the next
/// launch. Every queue holds %nctaid.x x (image groups) items and the grid one block per
/// item, so every block finds one (a claim that overshoots a drained queue takes nothing)
/// and every item is computed once. The claims are relaxed atomics; the count of claims is
/// acquire-release, so the reset follows every claim of the launch. Launches of one module
/// must therefore not run concurrently (docs/launch-abi.md).
static void emitWorkClaim(llvm::raw_ostream &os, StringRef name, int64_t numBlocks,
                          int64_t channelBlockDim) {
  std::string slot = workSlot(name), queues = workQueues(name);
  const char *imageGroups = channelBlockDim == 2 ? "%nctaid.y" : "%nctaid.z";
  int64_t imageDim = channelBlockDim == 2 ? 1 : 2;
  os << "\t{\n\t.reg .pred \t%spconv_q_p<2>;\n\t.reg .b32 \t%spconv_q_r<10>;\n"
     << "\t.reg .b64 \t%spconv_q_a<2>;\n"
     << "\tmov.u32 \t%spconv_q_r0, %tid.x;\n\tmov.u32 \t%spconv_q_r1, %tid.y;\n"
     << "\tor.b32 \t%spconv_q_r0, %spconv_q_r0, %spconv_q_r1;\n"
     << "\tmov.u32 \t%spconv_q_r1, %tid.z;\n"
     << "\tor.b32 \t%spconv_q_r0, %spconv_q_r0, %spconv_q_r1;\n"
     << "\tsetp.ne.u32 \t%spconv_q_p0, %spconv_q_r0, 0;\n"
     << "\t@%spconv_q_p0 bra \t$spconv_q_wait;\n"
     << "\tmov.u32 \t%spconv_q_r2, %nctaid.x;\n"
     << "\tmov.u32 \t%spconv_q_r3, " << imageGroups << ";\n"
     << "\tmul.lo.u32 \t%spconv_q_r3, %spconv_q_r2, %spconv_q_r3;\n"
     << "\tmov.u32 \t%spconv_q_r4, %smid;\n";
  // SMs are given channel blocks in runs of consecutive %smid, not round robin: alexnet-conv2
  // at batch 64 ran 1.10x faster so (docs/tuning-log.md, "SM affinity"), neighbouring SMs
  // sharing more of what fetches their instructions.
  os << "\tmul.lo.u32 \t%spconv_q_r4, %spconv_q_r4, " << numBlocks << ";\n"
     << "\tmov.u32 \t%spconv_q_r5, %nsmid;\n"
     << "\tdiv.u32 \t%spconv_q_r4, %spconv_q_r4, %spconv_q_r5;\n"
     << "\tmin.u32 \t%spconv_q_r4, %spconv_q_r4, " << numBlocks - 1 << ";\n";
  os << "\tmov.u64 \t%spconv_q_a0, " << queues << ";\n"
     << "\tmul.wide.u32 \t%spconv_q_a1, %spconv_q_r4, 4;\n"
     << "\tadd.s64 \t%spconv_q_a1, %spconv_q_a0, %spconv_q_a1;\n"
     << "\tbra \t$spconv_q_claim;\n"
     << "$spconv_q_try:\n"
     << "\tmul.wide.u32 \t%spconv_q_a1, %spconv_q_r4, 4;\n"
     << "\tadd.s64 \t%spconv_q_a1, %spconv_q_a0, %spconv_q_a1;\n"
     // Another queue than the home one is read first: a drained queue is passed over
     // without an atomic.
     << "\tld.relaxed.gpu.global.u32 \t%spconv_q_r5, [%spconv_q_a1];\n"
     << "\tsetp.ge.u32 \t%spconv_q_p1, %spconv_q_r5, %spconv_q_r3;\n"
     << "\t@%spconv_q_p1 bra \t$spconv_q_next;\n"
     << "$spconv_q_claim:\n"
     << "\tatom.relaxed.gpu.global.add.u32 \t%spconv_q_r5, [%spconv_q_a1], 1;\n"
     << "\tsetp.lt.u32 \t%spconv_q_p1, %spconv_q_r5, %spconv_q_r3;\n"
     << "\t@%spconv_q_p1 bra \t$spconv_q_got;\n"
     << "$spconv_q_next:\n"
     << "\tadd.u32 \t%spconv_q_r4, %spconv_q_r4, 1;\n"
     << "\tsetp.eq.u32 \t%spconv_q_p1, %spconv_q_r4, " << numBlocks << ";\n"
     << "\tselp.u32 \t%spconv_q_r4, 0, %spconv_q_r4, %spconv_q_p1;\n"
     << "\tbra \t$spconv_q_try;\n"
     << "$spconv_q_got:\n"
     << "\trem.u32 \t%spconv_q_r6, %spconv_q_r5, %spconv_q_r2;\n"
     << "\tdiv.u32 \t%spconv_q_r7, %spconv_q_r5, %spconv_q_r2;\n"
     << "\tst.shared.u32 \t[" << slot << "], %spconv_q_r6;\n"
     << "\tst.shared.u32 \t[" << slot << "+" << 4 * channelBlockDim << "], %spconv_q_r4;\n"
     << "\tst.shared.u32 \t[" << slot << "+" << 4 * imageDim << "], %spconv_q_r7;\n"
     << "$spconv_q_wait:\n"
     << "\tbar.sync \t0;\n"
     // Counted after the barrier, so that only thread 0's warp waits for it.
     << "\t@%spconv_q_p0 bra \t$spconv_q_done;\n"
     << "\tmul.lo.u32 \t%spconv_q_r8, %spconv_q_r3, " << numBlocks << ";\n"
     << "\tsub.u32 \t%spconv_q_r8, %spconv_q_r8, 1;\n"
     << "\tatom.acq_rel.gpu.global.add.u32 \t%spconv_q_r9, [" << queues << "+"
     << 4 * numBlocks << "], 1;\n"
     << "\tsetp.ne.u32 \t%spconv_q_p1, %spconv_q_r9, %spconv_q_r8;\n"
     << "\t@%spconv_q_p1 bra \t$spconv_q_done;\n"
     << "\tmov.u32 \t%spconv_q_r4, 0;\n"
     << "$spconv_q_reset:\n"
     << "\tmul.wide.u32 \t%spconv_q_a1, %spconv_q_r4, 4;\n"
     << "\tadd.s64 \t%spconv_q_a1, %spconv_q_a0, %spconv_q_a1;\n"
     << "\tst.relaxed.gpu.global.u32 \t[%spconv_q_a1], 0;\n"
     << "\tadd.u32 \t%spconv_q_r4, %spconv_q_r4, 1;\n"
     << "\tsetp.le.u32 \t%spconv_q_p1, %spconv_q_r4, " << numBlocks << ";\n"
     << "\t@%spconv_q_p1 bra \t$spconv_q_reset;\n"
     << "$spconv_q_done:\n"
     << "\t}\n";
}

/// The module-scope queue counters of an SM-affine kernel, zero at module load.
static std::string workQueueDefinition(StringRef name, int64_t numBlocks) {
  std::string def = ".global .align 4 .u32 " + workQueues(name) + "[" +
                    std::to_string(numBlocks + 1) + "] = {";
  for (int64_t i = 0; i <= numBlocks; ++i)
    def += i ? ", 0" : "0";
  return def + "};\n";
}

/// The shared work slot of an SM-affine kernel (`linkage` "" inside the entry, ".visible"
/// or ".extern" at module scope when the kernel has pieces).
static std::string workSlotDeclaration(StringRef name, StringRef linkage) {
  return (linkage + (linkage.empty() ? "" : " ") + ".shared .align 4 .b32 " + workSlot(name) +
          "[3];\n")
      .str();
}

/// A shared declaration of the template with at least 16-byte alignment. The tile is read
/// with 8- and 16-byte vector loads (`ld.shared.v2/.v4`); templates declare it `.align 16`
/// (the workgroup attribution's llvm.align), but cached templates from before declared
/// `.align 4`, which held while the tile was the kernel's only shared variable, at offset 0,
/// and not once the work slot was placed before it (a strided ResNet-50 conv faulted with a
/// misaligned address so).
static std::string alignedForVectors(StringRef decl) {
  size_t at = decl.find(".align ");
  if (at == StringRef::npos)
    return decl.str();
  size_t digits = at + 7, end = decl.find_first_not_of("0123456789", digits);
  unsigned align = 0;
  if (end == digits || decl.substr(digits, end - digits).getAsInteger(10, align) || align >= 16)
    return decl.str();
  return (decl.take_front(digits) + "16" + decl.drop_front(end)).str();
}

/// `body` as it runs in an SM-affine kernel: the %ctaid registers it reads come from the
/// work slot, loaded once at its start.
static std::string readingWorkSlot(StringRef name, StringRef body) {
  std::string slot = workSlot(name);
  std::string out = "\t.reg .b32 \t%spconv_work<3>;\n";
  for (int d = 0; d < 3; ++d)
    out += "\tld.shared.u32 \t%spconv_work" + std::to_string(d) + ", [" + slot + "+" +
           std::to_string(4 * d) + "];\n";
  std::string text = body.str();
  for (auto [from, to] : {std::pair<StringRef, StringRef>{"%ctaid.x", "%spconv_work0"},
                          {"%ctaid.y", "%spconv_work1"},
                          {"%ctaid.z", "%spconv_work2"}})
    text = renamed(text, from, to);
  return out + text;
}

std::vector<PtxUnit> PtxBlockTemplate::packUnits(
    StringRef name, llvm::ArrayRef<int64_t> sizes, int64_t fixed, const AssemblyOptions &options,
    llvm::function_ref<void(llvm::raw_ostream &, int64_t, int64_t, bool)> rawBody) const {
  int64_t budget = options.budget, minBlocksPerSM = options.minBlocksPerSM;
  bool smAffine = options.smAffine;
  auto body = [&](llvm::raw_ostream &os, int64_t first, int64_t last, bool inPiece) {
    if (!smAffine)
      return rawBody(os, first, last, inPiece);
    std::string text;
    llvm::raw_string_ostream ts(text);
    rawBody(ts, first, last, inPiece);
    os << readingWorkSlot(name, text);
  };
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
  // A compile-time cluster shape: the driver launches it from a plain cuLaunchKernel, as it
  // does a CUDA C++ kernel declared with __cluster_dims__.
  if (options.clusterSize > 1 && !directives.contains(".reqnctapercluster"))
    entryDirectives += ".reqnctapercluster " + std::to_string(options.clusterSize) + ", 1, 1\n";

  // Dynamic shared memory is declared, never defined, at module scope: by the one unit, or
  // by every piece and the entry (the launch sizes it).
  std::string dynamicShared;
  for (StringRef d : dynamicSharedDecls)
    dynamicShared += renamed(d.trim(), entry, name) + "\n";

  std::vector<PtxUnit> units;
  int64_t numBlocks = sizes.size();
  if (total <= budget || numBlocks == 1) {
    // One kernel as NVPTX would have written it: the shared tile stays in its scope.
    PtxUnit unit;
    unit.symbol = name.str();
    unit.isEntry = true;
    unit.instructions = total;
    unit.globals = dynamicShared;
    llvm::raw_string_ostream os(unit.code);
    os << ".visible .entry " << name << "(\n" << paramsText << ")\n" << entryDirectives;
    os << "{\n";
    for (StringRef d : sharedDecls) {
      std::string decl = renamed(d, entry, name);
      os << (smAffine ? alignedForVectors(decl) : decl) << "\n";
    }
    if (smAffine) {
      unit.globals += workQueueDefinition(name, numBlocks);
      os << workSlotDeclaration(name, "");
      emitWorkClaim(os, name, numBlocks, channelBlockDim());
    }
    body(os, 0, numBlocks, /*inPiece=*/false);
    os << "}\n";
    units.push_back(std::move(unit));
    return units;
  }

  // The shared tile moves to module scope, defined by the entry's unit and declared by the
  // pieces, so that the linked kernel has one tile whichever piece runs.
  std::string sharedDefs = dynamicShared, sharedExterns = dynamicShared;
  for (StringRef d : sharedDecls) {
    std::string decl = renamed(d.trim(), entry, name);
    if (smAffine)
      decl = alignedForVectors(decl);
    sharedDefs += ".visible " + decl + "\n";
    sharedExterns += ".extern " + decl + "\n";
  }
  if (smAffine) {
    sharedDefs += workSlotDeclaration(name, ".visible") + workQueueDefinition(name, numBlocks);
    sharedExterns += workSlotDeclaration(name, ".extern");
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
  if (smAffine) {
    emitWorkClaim(ds, name, numBlocks, channelBlockDim());
    ds << "\tld.shared.u32 \t%spconv_block, [" << workSlot(name) << "+"
       << 4 * channelBlockDim() << "];\n";
  } else {
    ds << "\tmov.u32 \t%spconv_block, " << channelBlockRegister() << ";\n";
  }
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
    std::string piece = pieceSymbol(name, p);
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
                                                const AssemblyOptions &options) const {
  std::vector<int64_t> sizes;
  for (const std::string &b : blocks)
    sizes.push_back(countPtxInstructions(b));
  return packUnits(name, sizes, 0, options,
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
                                 const AssemblyOptions &options) const {
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
  return packUnits(name, sizes, sharedInstructions(), options, body);
}

/// A one-unit kernel as module text: its module-scope definitions (an SM-affine kernel's
/// queues), then the entry.
static std::string unitText(const PtxUnit &unit) { return unit.globals + unit.code; }

llvm::Expected<std::string> PtxBlockTemplate::instantiate(StringRef name, const BlockWeights &w,
                                                          int64_t minBlocksPerSM,
                                                          PtxFoldCounts &counts,
                                                          bool shareStaging,
                                                          bool smAffine) const {
  if (llvm::Error err = checkWeights(w))
    return std::move(err);
  AssemblyOptions options; // one unit, however big
  options.minBlocksPerSM = minBlocksPerSM;
  options.smAffine = smAffine;
  if (shareStaging && sharesStaging()) {
    std::vector<std::vector<std::string>> blockRegions;
    for (int64_t kb = 0; kb < w.kBlocks; ++kb) {
      llvm::Expected<std::vector<std::string>> regions = stampRegions(name, w, kb, counts);
      if (!regions)
        return regions.takeError();
      blockRegions.push_back(std::move(*regions));
    }
    return unitText(assembleShared(name, blockRegions, options).front());
  }
  std::vector<std::string> blocks;
  for (int64_t kb = 0; kb < w.kBlocks; ++kb) {
    llvm::Expected<std::string> block = stampBlock(name, w, kb, counts);
    if (!block)
      return block.takeError();
    blocks.push_back(std::move(*block));
  }
  return unitText(assemble(name, blocks, options).front());
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
