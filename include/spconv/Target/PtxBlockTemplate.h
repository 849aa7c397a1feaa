//===- PtxBlockTemplate.h - weights folded into template PTX ----*- C++ -*-===//
//
// The fast path from a cached template to PTX. A one-channel-block template
// (KernelForm::OneChannelBlock) goes through NVPTX once per shape; its PTX holds every
// weight of channel block 0 as a distinct placeholder immediate. A conv's kernel is then
// stamped out of that text without LLVM: one copy of the body per channel block, selected by
// %ctaid.y, each with its block's weights patched in, products by a zero weight deleted and
// their addend forwarded, and shared-memory loads left without readers dropped (the same
// fold as spconv-fold-weights, done on PTX virtual registers instead of LLVM values).
//
// Plain C++ on LLVM Support: no MLIR, no LLVM codegen.
//
//===----------------------------------------------------------------------===//
#ifndef SPCONV_TARGET_PTXBLOCKTEMPLATE_H
#define SPCONV_TARGET_PTXBLOCKTEMPLATE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace spconv {
/// The element type of a block template's arithmetic: f32 FMAs, or paired half-precision
/// FMAs (fma.rn.f16x2 / fma.rn.bf16x2) whose weight is a 32-bit word (w, w).
enum class TemplateType { f32, f16, bf16 };
/// "f32", "f16" or "bf16".
const char *templateTypeName(TemplateType type);

/// `values` rounded to `type` (f32: unchanged; f16, bf16: to nearest, ties to even), as f32,
/// by the rule of the LLVM-level fold (roundToPrecision): an error names the first nonzero
/// value (`what` and its index) that would round to zero or finite one that would overflow.
/// Stamping a half-precision template needs its weights and bias rounded so.
llvm::Error roundToTemplateType(std::vector<float> &values, TemplateType type,
                                llvm::StringRef what);

/// The weights one conv folds into its kernel.
struct BlockWeights {
  // K x C x R x S, row-major; for a half-precision template already rounded to its type
  // (roundToTemplateType): stamping refuses a value that is not.
  llvm::ArrayRef<float> weights;
  llvm::ArrayRef<float> bias;    // K values, or empty when the conv has no bias
  int64_t k = 0;                 // output channels
  int64_t blockK = 0;            // output channels per channel block
  int64_t kBlocks = 0;           // ceil(k / blockK)
  bool strictIEEE = false;       // keep products by zero (NaN/Inf inputs propagate)
};

struct PtxFoldCounts {
  int64_t kept = 0;      // FMAs left in the kernel
  int64_t deleted = 0;   // FMAs deleted (weight +0/-0, or a channel past K)
  int64_t deadLoads = 0; // shared-memory words no longer loaded because nothing read them
  int64_t deadMovs = 0;  // constants a deleted FMA left behind that nothing read
};

/// What a block template's placeholders number, recorded as its first line (a PTX comment)
/// by whoever made it, and checked against the weights when stamping.
struct BlockTemplateInfo {
  int64_t k = 0, blockK = 0, weightsPerChannel = 0;
  bool hasBias = false;
  /// The grid dimension that numbers channel blocks: 1 (%ctaid.y) or 2 (%ctaid.z, the
  /// channel-block-major grid, Tiling::blockOrder 2).
  int64_t channelBlockDim = 1;
  /// The arithmetic's element type. A half template's placeholders are words (Placeholder.h,
  /// halfWeightWord), except the bias of f32 sums, an f32 placeholder.
  TemplateType type = TemplateType::f32;
  /// "// spconv block template: k=.. block_k=.. weights_per_channel=.. bias=0|1
  /// [channel_block_dim=2] [dtype=f16|bf16]\n"
  std::string str() const;
  /// The special register holding the channel block: "%ctaid.y" or "%ctaid.z".
  const char *channelBlockRegister() const {
    return channelBlockDim == 2 ? "%ctaid.z" : "%ctaid.y";
  }
};

/// One piece of PTX that ptxas can assemble on its own (`ptxas -c`) and nvlink can link with
/// the others: a conv's kernel is one unit, or, when its code exceeds the code budget,
/// several `.func` pieces plus a small `.entry` that calls the piece owning its channel
/// block (docs/design.md, "Code-size budget").
struct PtxUnit {
  std::string symbol;       // the .entry or .func it defines
  std::string externs;      // declarations of what it uses from other units
  std::string globals;      // module-scope definitions it owns (the shared tile)
  std::string code;         // the function itself
  int64_t instructions = 0; // PTX instruction lines, the measure of ptxas time and memory
  bool isEntry = false;
  int maxRegisters = 0;     // ptxas --maxrregcount for a piece (an entry has its directives)
  std::string label;        // what it is, for progress and errors (the compiler sets it)
};

/// How stamped channel blocks become a kernel.
struct AssemblyOptions {
  /// PTX instructions one ptxas unit may hold (see PtxBlockTemplate::assemble).
  int64_t budget = std::numeric_limits<int64_t>::max();
  /// > 0: the entry asks ptxas to fit that many blocks per SM (`.minnctapersm`).
  int64_t minBlocksPerSM = 0;
  /// Blocks ignore their grid position and take their work from per-channel-block queues,
  /// starting with channel block `%smid % channel blocks`, so that the blocks sharing an SM
  /// run one channel block's code (docs/design.md, "SM affinity"). The grid, and so the
  /// launch, is unchanged: there is one work item per block.
  bool smAffine = false;
  /// > 1: the entry asks for clusters of that many blocks along the grid's x
  /// (`.reqnctapercluster`), which CUDA schedules together on one GPC: consecutive blocks
  /// of the grid's x run one channel block's code side by side (docs/design.md, "Clusters").
  int64_t clusterSize = 0;
};

/// Lines of `text` that are PTX instructions (not labels, braces, declarations, comments).
int64_t countPtxInstructions(llvm::StringRef text);

/// The .func symbol of piece `piece` of kernel `kernel` (PtxBlockTemplate::assemble), and
/// back: the kernel a unit's symbol belongs to (a whole kernel's symbol is its own).
std::string pieceSymbol(llvm::StringRef kernel, size_t piece);
llvm::StringRef kernelOfSymbol(llvm::StringRef symbol);

/// A PTX module: a comment naming how it was made, `header` (from moduleHeader()), then the
/// kernels.
std::string ptxModule(llvm::StringRef header, llvm::StringRef kernels);
/// One PTX module holding `units` (pieces before the entries that call them).
std::string ptxModule(llvm::StringRef header, llvm::ArrayRef<PtxUnit> units);
/// `unit` alone, with declarations of what it uses: the input of `ptxas -c`.
std::string ptxUnitModule(llvm::StringRef header, const PtxUnit &unit);

class PtxBlockTemplate {
public:
  /// Splits NVPTX's output for a module whose only kernel is `entry` and checks that every
  /// placeholder sits where the fold can patch it. Errors name the offending line. A leading
  /// BlockTemplateInfo line, when present, is kept and checked by instantiate().
  static llvm::Expected<PtxBlockTemplate> parse(std::string ptx, llvm::StringRef entry);

  /// The element type of the template's FMAs (its info line's, else its FMAs').
  TemplateType elementType() const { return type; }

  /// The `.version`, `.target` and `.address_size` lines.
  llvm::StringRef moduleHeader() const { return header; }

  /// Checks that `weights` match what the template's placeholders number.
  llvm::Error checkWeights(const BlockWeights &weights) const;

  /// Channel block `kb` of the kernel `name`, folded with `weights`: a `{ }` scope labelled
  /// `$spconv_block_<kb>` that ends in `ret`.
  llvm::Expected<std::string> stampBlock(llvm::StringRef name, const BlockWeights &weights,
                                         int64_t kb, PtxFoldCounts &counts) const;

  /// The kernel `name` from its stamped channel blocks (`blocks[kb]` from stampBlock). When
  /// their instructions add up to at most `budget`, one `.entry` unit holding every block;
  /// otherwise consecutive blocks are packed into `.func` pieces of at most `budget`
  /// instructions each (a block larger than `budget` gets a piece of its own) and a last
  /// `.entry` unit calls the piece owning `%ctaid.y`. The shared tile is then a module-scope
  /// variable owned by the entry so that every piece uses the same bytes.
  std::vector<PtxUnit> assemble(llvm::StringRef name, llvm::ArrayRef<std::string> blocks,
                                const AssemblyOptions &options) const;

  /// Whether kernels can share the staging code between channel blocks (docs/design.md,
  /// "Shared staging"): the template marks where each chunk's FMAs end, every placeholder
  /// sits inside such an FMA region (regions may sit in a loop: the chunk loop). When it cannot,
  /// `whyNoSharedStaging()` says why and kernels get one whole body per channel block.
  bool sharesStaging() const { return !regions.empty(); }
  llvm::StringRef whyNoSharedStaging() const { return noSharingReason; }
  /// PTX instructions outside the FMA regions (staging, addresses, stores): what a kernel
  /// unit holds once however many channel blocks it covers.
  int64_t sharedInstructions() const { return sharedInstructionCount; }

  /// Channel block `kb`'s FMA regions folded with its weights, one text per region (the
  /// region's registers that later code reads are left where the template had them).
  /// Requires sharesStaging().
  llvm::Expected<std::vector<std::string>> stampRegions(llvm::StringRef name,
                                                        const BlockWeights &weights, int64_t kb,
                                                        PtxFoldCounts &counts) const;

  /// As assemble(), from every block's stamped regions (`blockRegions[kb]`): a unit holds
  /// the staging and address code once and, at each region, an indexed branch on
  /// `%ctaid.y` to its blocks' FMAs. A unit costs sharedInstructions() plus its blocks'.
  std::vector<PtxUnit> assembleShared(llvm::StringRef name,
                                      llvm::ArrayRef<std::vector<std::string>> blockRegions,
                                      const AssemblyOptions &options) const;

  /// The kernel `name` computing every channel block of a conv with `weights`, staging
  /// shared between blocks when the template allows it and `shareStaging` is set.
  /// `minBlocksPerSM` > 0 adds `.minnctapersm`; `smAffine`: AssemblyOptions::smAffine. The
  /// text holds the module-scope definitions the kernel needs (an SM-affine kernel's queues).
  llvm::Expected<std::string> instantiate(llvm::StringRef name, const BlockWeights &weights,
                                          int64_t minBlocksPerSM, PtxFoldCounts &counts,
                                          bool shareStaging = true, bool smAffine = false) const;

  PtxBlockTemplate(PtxBlockTemplate &&) noexcept;
  PtxBlockTemplate &operator=(PtxBlockTemplate &&) noexcept;
  ~PtxBlockTemplate();

  struct Line; // one body line, classified at parse time (PtxBlockTemplate.cpp)

private:
  PtxBlockTemplate();
  /// checkWeights, and that channel block `kb` exists.
  llvm::Error checkBlock(const BlockWeights &weights, int64_t kb) const;
  /// Finds the FMA regions, or says in noSharingReason why staging cannot be shared.
  void findRegions(llvm::ArrayRef<int64_t> firstUse, llvm::ArrayRef<int64_t> lastMention,
                   llvm::ArrayRef<std::pair<size_t, uint32_t>> defs);
  /// The body lines between FMA regions `i - 1` and `i` (i = regions.size(): after the last),
  /// with the kernel renamed and, in a `.func` piece, `ret` turned into `exit`.
  std::string sharedSegment(size_t i, llvm::StringRef name, bool exitForRet) const;
  /// The units of kernel `name` with blocks of `sizes[kb]` instructions and `fixed` more per
  /// unit; `body(os, first, last, inPiece)` writes the code for blocks [first, last).
  std::vector<PtxUnit> packUnits(
      llvm::StringRef name, llvm::ArrayRef<int64_t> sizes, int64_t fixed,
      const AssemblyOptions &options,
      llvm::function_ref<void(llvm::raw_ostream &, int64_t, int64_t, bool)> body) const;

  // The template PTX; every StringRef below points into it. Behind a pointer so that moving
  // a template never moves the characters (a moved std::string may, when short).
  std::unique_ptr<const std::string> text;
  std::string entry;            // the template kernel's name
  llvm::StringRef header;       // module header lines
  llvm::StringRef params;       // between the entry's parentheses
  llvm::StringRef directives;   // .maxntid and friends, between ')' and '{'
  std::vector<llvm::StringRef> sharedDecls; // hoisted to the kernel's outer scope
  // Module-scope `.extern .shared ... NAME[];`: the tile in dynamic shared memory
  // (Tiling::dynamicShared), declared by every unit that addresses it.
  std::vector<llvm::StringRef> dynamicSharedDecls;
  std::vector<llvm::StringRef> localDecls;  // .reg/.local: one set per copy
  std::vector<Line> body;
  std::vector<uint32_t> defCount; // definitions of each %r register in the body
  std::optional<BlockTemplateInfo> info;
  /// The register the stamped code dispatches on: the info line's, else %ctaid.y.
  const char *channelBlockRegister() const {
    return info ? info->channelBlockRegister() : "%ctaid.y";
  }
  /// The grid dimension numbering channel blocks (1 or 2); the other of y and z numbers
  /// image groups.
  int64_t channelBlockDim() const { return info ? info->channelBlockDim : 1; }
  int64_t maxWeightIndex = -1, maxBiasIndex = -1;
  TemplateType type = TemplateType::f32;
  /// A chunk's FMAs: body lines [first, last), straight-line, between the barrier after the
  /// chunk's staging and the template's end-of-chunk marker; `liveOut`, the %r registers it
  /// defines that lines outside it mention, after it or (around the chunk loop) above it:
  /// the accumulators, mostly.
  struct Region {
    size_t first = 0, last = 0;
    std::vector<uint32_t> liveOut;
  };
  std::vector<Region> regions;
  std::string noSharingReason;
  int64_t sharedInstructionCount = 0;
};
} // namespace spconv

#endif
