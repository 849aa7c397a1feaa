//===- ConvShape.h - convolution shape and tiling ---------------*- C++ -*-===//
//
// The value-free description of a convolution (everything a template depends on besides the
// target) and the tiling of its direct-convolution kernel. Plain C++ so the cache key and the
// launch sidecar can be computed without touching IR.
//
//===----------------------------------------------------------------------===//
#ifndef SPCONV_CONVERSION_CONVTEMPLATE_CONVSHAPE_H
#define SPCONV_CONVERSION_CONVTEMPLATE_CONVSHAPE_H

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace spconv {
class Conv2DOp;

/// The activation fused after the bias (mirrors spconv::Activation without the IR headers).
enum class Epilogue : int64_t { none = 0, relu = 1, relu6 = 2 };
/// "none", "relu" or "relu6": the sidecar's and the runtime's spelling.
const char *epilogueName(Epilogue e);

/// The element type of a conv's input, output and code (docs/design.md, "Half precision").
enum class Precision : int64_t { f32 = 0, f16 = 1, bf16 = 2 };
/// "f32", "f16" or "bf16".
const char *precisionName(Precision p);
/// Which two outputs one paired half-precision FMA (fma.rn.f16x2 / bf16x2) computes: its
/// weight is the same for both, its two inputs and accumulators are two halves of one 32-bit
/// word. Along the paired dimension of extent E, word i holds elements i and i + ceil(E/2)
/// (the second absent where that is past E): two images, two output rows or two output
/// columns. `adjacent` pairs output columns 2i and 2i + 1 instead, where a 1x1 filter at
/// stride 1 without padding reads input columns 2i and 2i + 1 too: the two halves of a word
/// are adjacent in the NCHW tensors, so the kernel loads and stores whole 32-bit words, with
/// no second load, pack or unpack (legal only where `canPairAdjacent`). A wider filter at
/// column stride 1 pairs them too: tap s reads input columns 2i + e and 2i + e + 1 (e = s *
/// dw - pl), the whole word i + e/2 where e is even, else the hi half of one word and the lo
/// half of the next, joined in a register (ConvShape::adjacentWindow). f32 kernels pair
/// nothing.
enum class Pairing : int64_t { none = 0, images = 1, rows = 2, columns = 3, adjacent = 4 };
/// "none", "images", "rows", "columns" or "adjacent".
const char *pairingName(Pairing p);
/// How a conv's input and output are stored (docs/design.md, "Image-pair layout"). `nchw`:
/// row-major NCHW / NKPQ in the element type. `imagePairs` (half precision, even N): images
/// n and n + N/2 share a 32-bit word, element (n, c, y, x) at half index
/// (((n mod N/2) * C + c) * H + y) * W + x) * 2 + n div (N/2). That is where the images
/// pairing's words live, so such a kernel loads and stores whole words, as adjacent pairs
/// do. Mirrors spconv::TensorLayout of the dialect.
enum class Layout : int64_t { nchw = 0, imagePairs = 1 };
/// "nchw" or "image_pairs": the dialect's, the sidecar's and the runtime's spelling.
const char *layoutName(Layout l);

struct ConvShape {
  int64_t n, c, h, w;      // input NCHW
  int64_t k, r, s;         // filter K x (C/groups) x R x S
  int64_t p, q;            // output rows, columns
  int64_t sh, sw;          // strides
  int64_t pt, pl, pb, pr;  // padding top, left, bottom, right
  int64_t dh, dw;          // dilations
  bool hasBias;
  Epilogue activation;
  // The op's `residual`: the kernel takes a third tensor, of the output's shape and layout,
  // added to each output before the activation (docs/design.md, "Residual epilogue").
  bool residual = false;
  int64_t groups = 1;      // output channel k reads input channels of group k / kpg()
  // Half precision: the shape above is the kernel's view, a conv over 32-bit words, whose
  // paired dimension (n, p or q) is ceil(E / 2) of the conv's extent E = pairedExtent.
  // Everything that tiles, indexes tiles or launches uses the word shape; only staging and
  // the stores, which address the half-precision tensors, see the pair (logical()).
  Precision precision = Precision::f32;
  // Where a half-precision kernel's sums live: `precision` (all in half precision; the
  // default) or f32 (runs of one staged chunk's products in half precision, each added to
  // an f32 sum). fromOp sets it.
  Precision accumulate = Precision::f32;
  Pairing pairing = Pairing::none;
  int64_t pairedExtent = 0;
  // How the input and output are stored; imagePairs implies Pairing::images.
  Layout layout = Layout::nchw;

  /// The conv's own shape with `pairing` as the kernel's word shape (chooses the pairing
  /// with choosePairing where the op asks for none).
  static ConvShape fromOp(Conv2DOp op);
  bool isHalf() const { return precision != Precision::f32; }
  /// A half-precision kernel whose sums are f32: each chunk's run is promoted.
  bool promotesRuns() const { return isHalf() && accumulate == Precision::f32; }
  /// A word's two halves are adjacent in the tensors (Pairing::adjacent, or images stored as
  /// image pairs): staging, direct inputs and stores move whole words at word-shape
  /// coordinates (column x as elements 2x, 2x + 1; image n as n and n + N/2).
  bool pairsWholeWords() const {
    return pairing == Pairing::adjacent || layout == Layout::imagePairs;
  }
  /// A half-precision word gathers its two halves from two places (images, rows, columns):
  /// staging and direct inputs load both and pack them; the store unpacks.
  bool gathersPairs() const { return isHalf() && !pairsWholeWords(); }
  /// Adjacent pairs under a filter wider than one column (Pairing::adjacent with s > 1):
  /// a thread reads a window of whole words of each input row and joins the odd taps'
  /// halves in registers (adjacentWindow).
  bool pairsAdjacentWindow() const { return pairing == Pairing::adjacent && s > 1; }
  /// Adjacent pairs: the input words one output word i reads along a row, i + first to
  /// i + first + words - 1. Tap s's elements 2i + e, 2i + e + 1 (e = s * dw - pl) lie in
  /// words i + floor(e / 2) and, where e is odd, the next. (A 1x1 filter without padding:
  /// word i alone.)
  struct WordWindow {
    int64_t first, words;
  };
  WordWindow adjacentWindow() const;
  /// The conv as its tensors see it (undoes the pairing).
  ConvShape logical() const;
  /// The word shape of logical shape `s` paired along `p`.
  static ConvShape paired(ConvShape s, Pairing p);
  int64_t cpg() const { return c / groups; } // input channels per group
  int64_t kpg() const { return k / groups; } // output channels per group
  int64_t numWeights() const { return k * cpg() * r * s; }
  /// Stable text used in cache keys and logs.
  std::string str() const;
};

/// How the kernel is tiled. Every field is a positive integer once `chooseTiling` returns.
struct Tiling {
  int64_t blockK = 0;           // output channels per thread (= per thread block)
  int64_t outputsPerThread = 0; // output columns per thread (laid out by columnOrder)
  int64_t tileP = 0;            // output rows per block (= threads along P)
  int64_t threadsQ = 0;         // threads along Q
  int64_t chunkC = 0;           // input channels staged in shared memory at a time
  // Warp groups of a block that split its chunks between them (docs/design.md, "Split
  // chunks"): group g stages and computes its own run of chunks in its own part of shared
  // memory, with its own barrier; the groups' partial sums are added through shared memory
  // before the store. 1 = no split.
  int64_t splitC = 0;
  // How a group walks its chunks: 1 = straight-line, every chunk its own staging code and
  // FMAs; 2 = one loop whose body stages the chunk at a run-time channel offset and then
  // branches to that chunk's FMAs (docs/design.md, "Chunk loop"). The loop keeps the staging
  // code once per group instead of once per chunk: code size, and ptxas time, no longer grow
  // with the chunks.
  int64_t chunkLoop = 0;
  // Images one block computes side by side (docs/design.md, "Images per block"): a block of
  // imagesPerBlock x threads() threads, thread group i on image blockIdx.z * imagesPerBlock
  // + i with its own staged tile, every group running the same code in barrier lock-step.
  // The code of a channel block is fetched once for that many warps: small output planes at
  // large batches (ResNet-50's 7x7 layers at N = 64: 64-thread blocks) were bound by
  // instruction fetch. 1 = one image per block; only without split chunks.
  int64_t imagesPerBlock = 0;
  // Grid order: 1 = (tiles, channel blocks, images), 2 = (tiles, images, channel blocks).
  // Blocks are dispatched x fastest, so in order 2 a wave of blocks runs fewer channel
  // blocks' code (fewer distinct instruction streams per SM: docs/design.md, "Instruction
  // fetch") and reads each input tile once per channel block from further away.
  int64_t blockOrder = 0;
  // How a chunk is staged: 1 = loads into registers, a select for the padding, stores;
  // 2 = cp.async copies from global to shared memory (the padding zero-filled by the copy)
  // that the thread waits for before the chunk's barrier: one instruction an element and no
  // registers held (docs/design.md, "Asynchronous staging"). GPU kernels only; the CPU
  // twin loads and stores. Half precision: whole words only (pairsWholeWords), as i32.
  int64_t asyncStaging = 0;
  // Which output columns a thread computes with outputsPerThread > 1: 1 = strided, thread x
  // of a row takes x, x + threadsQ, ...; 2 = adjacent, x * outputsPerThread + 0, 1, .... Two
  // adjacent outputs read overlapping inputs along s, so a thread loads each input of its
  // window once per (c, r): (outputsPerThread - 1) * strideW + (S - 1) * dilationW + 1
  // shared loads instead of outputsPerThread * S (docs/design.md, "Adjacent outputs").
  int64_t columnOrder = 0;
  // Where a thread's inputs come from: 1 = staged through shared memory; 2 = read directly
  // from global memory into registers, where the filter is 1x1 and a thread has one output:
  // there each thread stages exactly the elements it then reads, so the round trip through
  // shared memory (a store, a load and a barrier per chunk) buys nothing (docs/design.md,
  // "Direct inputs"). Elsewhere 2 means 1.
  int64_t directInputs = 0;
  // Blocks per SM ptxas is asked to fit (.minnctapersm), when the heuristic wants more than
  // minBlocksPerSMFor's default: fewer registers per thread, more warps (docs/design.md,
  // "Occupancy"). 0 = the default. Only ptxas sees it: not part of the template key.
  int64_t minBlocksPerSM = 0;
  // Input channels one shared load reads (docs/design.md, "Channel vectors"): 1, 2 or 4.
  // With V > 1 the staged tile interleaves the chunk's channels in groups of V (channel
  // c = V * g + i of position x at word (V * g) * plane + V * x + i; channels past the last
  // full group keep planes of their own), so a thread reads the V channels of one (r, s)
  // with one ld.shared.v2/.v4: fewer load instructions per FMA on code-fetch-bound kernels.
  // Staged inputs with one output per thread only; elsewhere 1.
  int64_t channelVector = 0;
  // Loads ahead (docs/design.md, "Loads ahead"): a thread issues the global loads of its
  // first loadAhead input words of the next straight-line chunk before this chunk's FMAs,
  // holds them in registers through the FMAs and the barrier, and stores them after it. The
  // loads' latency, which every warp of a block otherwise waits out between the barrier and
  // its stores, then runs under the FMAs (vgg-conv3 at batch 64 FP16: 1.06x; the kernel
  // with no staging loads at all ran 1.46x, docs/tuning-log.md, "Speed of light without
  // staging"). Register staging of straight-line chunks only (not cp.async, chunk loops or
  // direct inputs); elsewhere 0.
  int64_t loadAhead = 0;
  // Where the staged tiles live (docs/design.md, "Dynamic shared memory"): 1 = a static
  // .shared array, at most kMaxSharedBytes (48 KB, the static limit); 2 = dynamic shared
  // memory, which the launch sizes and the runtimes opt in to past 48 KB, up to
  // kMaxDynamicSharedBytes (227 KB on sm_90). A double-buffered chunk loop then keeps a
  // whole chunk in each buffer instead of halving it to fit 48 KB twice. 0 = 1; only asked
  // for (the tuning table's entries).
  int64_t dynamicShared = 0;
  // Blocks of a cluster that split the input channels of one tile (docs/design.md, "Cluster
  // split"): the grid has clusterSplit blocks per tile along x, a cluster of them, each on
  // its own SM; block r of a cluster runs groups r * splitC to (r + 1) * splitC - 1 of
  // splitC * clusterSplit groups (each its chunks, as split chunks do), and the first
  // group of block 0 adds the others' partial sums, the other blocks' through distributed
  // shared memory, in group order: the sums, and their roundings, of split-c
  // splitC * clusterSplit. One SM then fetches the code of 1/clusterSplit of the channels.
  // 1 = no cluster; only asked for (a tuning table's entries).
  int64_t clusterSplit = 0;

  /// Threads of one group: a tile of tileP x threadsQ.
  int64_t threads() const { return tileP * threadsQ; }
  /// Threads of a block: every group, of every image.
  int64_t blockThreads() const {
    return threads() * std::max<int64_t>(1, splitC) * std::max<int64_t>(1, imagesPerBlock);
  }
  int64_t tileQ() const { return threadsQ * outputsPerThread; }
  bool adjacentColumns() const { return columnOrder == 2 && outputsPerThread > 1; }
  bool readsInputsDirectly() const { return directInputs == 2; }
  bool channelBlockMajor() const { return blockOrder == 2; }
  /// Input channels one shared load reads (channelVector, 1 where unset).
  int64_t channelsPerLoad() const { return channelVector > 1 ? channelVector : 1; }
  bool usesDynamicShared() const { return dynamicShared == 2; }
  /// The most shared memory a block of this tiling may use: kMaxDynamicSharedBytes with
  /// dynamic shared memory, else kMaxSharedBytes.
  int64_t sharedLimitBytes() const;
  std::string str() const;
};

/// Derived sizes of a tiled kernel: tile extents in the input, grid, shared memory.
struct KernelGeometry {
  int64_t inTileH, inTileW;     // input rows/cols a block stages
  // Along a dimension where the filter has extent 1 (1x1 convs), the tile holds only the
  // input rows/cols that outputs read: a strided 1x1 conv stages 1/stride^2 of its input
  // window instead of all of it. stageStep is the input distance between two staged
  // rows/cols (the stride there, else 1); tileStride the tile distance between the inputs
  // of two adjacent outputs (1 there, else the stride).
  int64_t stageStepH, stageStepW;
  int64_t tileStrideH, tileStrideW;
  // How far left of the block's first output column (times the stride) its tile starts, in
  // the word shape's columns: the left padding, or with adjacent pairs under a wider filter
  // -ConvShape::adjacentWindow().first words.
  int64_t overhangW;
  // Shared loads a thread makes per filter row (c, r): S x outputsPerThread, or with
  // adjacent columns the window of its outputs' inputs, (opt - 1) x tileStrideW + (S - 1) x
  // dilation + 1 (docs/design.md, "Adjacent outputs"), or with adjacent pairs under a wider
  // filter the words of its window, opt - 1 + ConvShape::adjacentWindow().words.
  int64_t rowLoads;
  int64_t tilesP, tilesQ;       // output tiles along P and Q
  int64_t kBlocks;              // ceil(K / blockK)
  // Input channels one channel block reads: all C without groups; with groups, those of the
  // groups its output channels belong to. Blocks are aligned to groups (chooseTiling makes
  // blockK divide kpg or kpg divide blockK), so a block's window starts at channel
  // (kb * blockK / kpg) * cpg and every block sees the same channel pattern: a grouped conv
  // is a dense conv over the window with block-diagonal weights whose cross-group FMAs are
  // never emitted.
  int64_t windowC;
  int64_t numChunks;            // ceil(windowC / chunkC)
  // Channels a thread stages at one tile position before storing them: their loads are
  // all in flight together (kStageBatch, fewer when a chunk has fewer channels).
  int64_t stageBatch;
  // The staged tile of one group, chunkC * inTileH * inTileW floats.
  int64_t sharedFloats;
  // Staging buffers: 2 where cp.async stages a chunk loop (Tiling::asyncStaging 2 and
  // chunkLoop 2): chunk j + 1 is copied into one set of tiles while chunk j's FMAs read the
  // other (docs/design.md, "Asynchronous staging"); else 1.
  int64_t stagingBuffers;
  // One buffer: a tile per group and image (group g's, image i's at (g + i) * sharedFloats);
  // buffer b starts at b * bufferFloats.
  int64_t bufferFloats;
  // The block's shared memory: the buffers, or the split groups' partial sums if larger.
  int64_t blockSharedFloats;
  int64_t splitC;               // groups of a block (>= 1)
  int64_t clusterSplit;         // blocks of a cluster that split a tile's chunks (>= 1)
  int64_t imagesPerBlock;       // images of a block (>= 1), a tile of sharedFloats each

  /// Groups over which a tile's chunks are split: every block's, of every block of a cluster.
  int64_t numGroups() const { return splitC * clusterSplit; }
  /// Chunks [first, second) of group g (of numGroups): consecutive runs, sizes differing by
  /// at most one.
  std::pair<int64_t, int64_t> groupChunks(int64_t g) const {
    return {g * numChunks / numGroups(), (g + 1) * numChunks / numGroups()};
  }
  int64_t imageGroups;          // ceil(N / imagesPerBlock)
  // (tilesP * tilesQ * clusterSplit, kBlocks, imageGroups), or (.., imageGroups, kBlocks)
  // with Tiling::blockOrder 2: a tile's clusterSplit blocks are neighbours along x.
  int64_t grid[3];
  int64_t block[3];             // (threads x splitC x imagesPerBlock, 1, 1)

  KernelGeometry(const ConvShape &shape, const Tiling &tiling);
};

/// The pairing of a half-precision conv whose op asks for none: adjacent columns where
/// canPairAdjacent, else two images where the batch has two or more, else two output
/// columns, else two rows (docs/design.md, "Half precision"): every lane of an f16x2 FMA
/// does useful work at batch 1 too.
Pairing choosePairing(const ConvShape &logical);
/// Whether `logical` may pair adjacent columns (Pairing::adjacent): a 1x1 filter at stride 1
/// without padding, so output column q reads input column q, over an even number of
/// columns, so no word straddles two rows; or a wider filter at column stride 1 over even
/// input and output widths (its odd taps join two words' halves: adjacentWindow).
bool canPairAdjacent(const ConvShape &logical);
/// Whether choosePairing takes adjacent pairs for `logical` unasked: the 1x1 convs, where
/// they were measured (docs/tuning-log.md, "Adjacent pairs"). Wider filters take them from
/// the op's pairing or a tuning-table entry.
bool prefersAdjacent(const ConvShape &logical);

/// The GPU the heuristic tiles for. Its rules count blocks in waves over the SMs, and SM
/// counts differ between parts of one architecture (132 on an H100 SXM and an H200, 114 on
/// an H100 PCIe, 108 on an A100); the rest of what the rules assume (2048 threads and 32
/// blocks an SM, 48 KB of static shared memory, about 128 KB of code an SM streams well)
/// holds on sm_80 and sm_90 alike (docs/design.md, "Target GPU").
struct TargetGPU {
  /// The SMs of an H100 SXM and an H200, on which the rules were measured.
  static constexpr int64_t kDefaultSMs = 132;
  /// The most a request may name: no GPU has as many, and it keeps the block counts the
  /// rules multiply by it far from overflow.
  static constexpr int64_t kMaxSMs = 4096;
  int64_t numSMs = kDefaultSMs;
  /// Two waves of blocks, one block an SM each: fewer blocks than this leave SMs with
  /// little to run.
  int64_t twoWaves() const { return 2 * numSMs; }
  /// The target of a `--num-sms` request: `requested` where it is not 0, else `fallback`
  /// (a tuning table's device) where that is not 0, else kDefaultSMs. Both must be valid
  /// (invalidNumSMsRequest).
  static TargetGPU fromRequest(int64_t requested, int64_t fallback = 0) {
    TargetGPU gpu;
    if (requested > 0)
      gpu.numSMs = requested;
    else if (fallback > 0)
      gpu.numSMs = fallback;
    return gpu;
  }
};
/// Why `requested` is no `--num-sms` request (empty when it is one: 0, the default, or 1 to
/// TargetGPU::kMaxSMs).
std::string invalidNumSMsRequest(int64_t requested);
/// What the passes refuse of their tiling options: invalidTilingRequest(requested), else
/// invalidNumSMsRequest(numSMs); empty when neither.
std::string invalidTilingRequest(const Tiling &requested, int64_t numSMs);

/// Fills every zero field of `requested` with the heuristic's choice for `gpu`
/// (docs/design.md, "Tiling heuristic") and clamps the rest to the shape.
Tiling chooseTiling(const ConvShape &shape, Tiling requested, const TargetGPU &gpu);
/// Why the passes must refuse `requested` (empty when they need not): a field with no
/// meaning, such as a chunk-loop other than 0, 1 or 2.
std::string invalidTilingRequest(const Tiling &requested);
/// What one SM of the targets (sm_80, sm_90) holds: resident threads and blocks.
constexpr int64_t kMaxThreadsPerSM = 2048, kMaxBlocksPerSM = 32;
/// The blocks per SM ptxas is asked to fit (`.minnctapersm`), which caps the registers per
/// thread (docs/design.md, "Tiling heuristic"). `requested` > 0: that many (see
/// invalidMinBlocksRequest); < 0: no cap (ptxas may take 255 registers: 2 warps per
/// scheduler); 0: the heuristic, `tiling.minBlocksPerSM` where chooseTiling set it, else 4
/// blocks of up to 128 threads and fewer of larger blocks (split chunks, packed images), so
/// that the cap stays 128 registers per thread.
inline int64_t minBlocksPerSMFor(const Tiling &tiling, int64_t requested) {
  if (requested != 0)
    return std::max<int64_t>(0, requested);
  if (tiling.minBlocksPerSM > 0)
    return tiling.minBlocksPerSM;
  return std::min<int64_t>(4, std::max<int64_t>(1, 512 / tiling.blockThreads()));
}
/// Why `requested` blocks of `tiling`'s size cannot share an SM (empty when they can).
std::string invalidMinBlocksRequest(const Tiling &tiling, int64_t requested);

/// How a kernel's blocks meet their work: the grid order (Tiling::blockOrder) and whether
/// they take it from per-channel-block queues by SM (`--sm-affinity`).
struct WorkOrder {
  int64_t blockOrder = 1;
  bool smAffine = false;
};
/// The work order of `tiling` for channel blocks of about `blockInstructions` PTX
/// instructions each, with `blocksPerSM` blocks resident per SM (docs/design.md, "Work
/// order"); block-order and sm-affinity as requested where the requests are not 0
/// (`requestedBlockOrder` is the block-order before chooseTiling). Where co-resident blocks
/// would run more than 128 KB of distinct code: with 1.5 waves or more per channel block,
/// the channel-block-major grid if one channel block's code fits 128 KB (a wave runs one
/// channel block), else the grid order; with fewer waves, 3+ channel blocks and a wave or
/// more of blocks, SM affinity (an SM runs one channel block). Only the PTX-level fold
/// knows the code size, so only it applies the rule; the queues exist only there.
WorkOrder chooseWorkOrder(const ConvShape &shape, const Tiling &tiling, int64_t blockInstructions,
                          int64_t blocksPerSM, int64_t requestedBlockOrder,
                          int64_t requestedSmAffinity, const TargetGPU &gpu);
/// Whether `t`, chosen by chooseTiling for `requested`, is the heuristic's block-k 64 form
/// (128 threads, 4 blocks per SM, straight-line) that the occupancy rule turns into block-k 32
/// at 8 blocks per SM (docs/design.md, "Occupancy").
bool mayTakeOccupancyTiling(const Tiling &requested, const Tiling &t);
/// Makes `requested` ask for the occupancy rule's tiling: block-k 32 at 8 blocks per SM, one
/// image, no split.
void requestOccupancyTiling(Tiling &requested);
/// Whether an unstrided, ungrouped 3x3 conv over 64-127 input channels (the occupancy rule
/// takes 128+ by shape alone) whose block-k 64 channel blocks run `blockInstructions` PTX
/// instructions each should take the occupancy rule's tiling anyway: past 8192 (128 KB of
/// SASS, what an SM streams well) it gains 1.4-1.7x at p = 0.5; at p = 0.9 (3.7 K) it lost.
bool occupancyForCodeHeavyBlocks(const ConvShape &shape, int64_t blockInstructions);
/// Why `requested` is no sm-affinity request (empty when it is one: 0, 1 or 2).
std::string invalidSmAffinityRequest(int64_t requested);
/// Why a cluster size request (--cluster-size) is refused ("" if it is not): 0 or 1 (no
/// cluster) to 8 (the portable cluster size on sm_90).
std::string invalidClusterSizeRequest(int64_t requested);
/// Why `t`'s cluster split (Tiling::clusterSplit > 1) cannot work for `sh` ("" if it can):
/// fewer chunks than the cluster's groups, or partial sums past a block's shared memory.
std::string clusterSplitInfeasibility(const ConvShape &sh, const Tiling &t);
/// Why `clusterSize` blocks a cluster along the grid's x cannot launch `grid` ("" if they
/// can): CUDA requires each grid dimension to be a multiple of the cluster's.
std::string clusterMismatch(int64_t clusterSize, const int64_t grid[3]);

/// Why explicit requests in `requested` were not honoured by `chosen` (chooseTiling's answer
/// to them), one sentence each, empty where every request was; the GPU drivers warn with them
/// at the conv, and the sidecar's tiling says what was built. Reported:
///  - --async-staging=2 on half-precision words gathered from NCHW tensors (two 16-bit loads
///    and a pack, which cp.async cannot copy: they stage through registers);
///  - --chunk-c lowered so that the block's staged tiles fit its shared memory (a count past
///    the conv's input channels asks for all of them, and is reported only where they do
///    not fit);
///  - --channel-vector on a conv whose threads load no staged channel groups (direct inputs,
///    several outputs a thread);
///  - --split-c where the groups cannot work (splitInfeasibility), the block then unsplit.
std::vector<std::string> unhonouredTilingRequests(const ConvShape &sh, const Tiling &requested,
                                                  const Tiling &chosen);
/// Why `tiling` leaves no room for SM affinity's shared work slot (empty when it does).
std::string noRoomForWorkSlot(const ConvShape &shape, const Tiling &tiling);

/// Why `tiling` cannot split its chunks over `groups` warp groups, empty where it can: each
/// group needs whole warps and at least one chunk, the block at most 512 threads, and the
/// groups' tiles must fit the block's shared memory (docs/design.md, "Split chunks").
std::string splitInfeasibility(const ConvShape &shape, const Tiling &tiling, int64_t groups);

/// Sets `tiling.splitC` (kept when given and workable, else chosen for `gpu`) and shrinks
/// chunkC so that every group's tile fits; part of chooseTiling.
void chooseSplit(const ConvShape &shape, Tiling &tiling, const TargetGPU &gpu);

/// Channels a thread loads at one tile position before storing them: the loads in flight
/// per thread while staging (docs/tuning-log.md, "Staging", "Staging by position").
constexpr int64_t kStageBatch = 8;
/// Shared memory a block may use for its staged tile (the static .shared limit).
constexpr int64_t kMaxSharedBytes = 48 * 1024;
/// Shared memory a block may use with dynamic shared memory (Tiling::dynamicShared): the
/// opt-in maximum of sm_90 (227 KB; sm_80 allows 163 KB, and there the launch fails with
/// the driver's error past it). Static shared memory (an SM-affine kernel's work slot) counts
/// against it too.
constexpr int64_t kMaxDynamicSharedBytes = 227 * 1024;
/// The most input words a thread may load ahead (Tiling::loadAhead): each is a register
/// held through a chunk's FMAs.
constexpr int64_t kMaxLoadAhead = 64;
/// The most blocks a cluster split may take: the portable cluster size of sm_90.
constexpr int64_t kMaxClusterSplit = 8;
/// Static shared memory an SM-affine kernel adds to its tile: the work slot, 16-byte aligned.
constexpr int64_t kWorkSlotBytes = 16;
/// What the heuristic aims for. Registers, not shared memory, bound residency (128 registers
/// x 128 threads x 4 blocks fill an SM's register file; 24 KB x 4 is under half its shared
/// memory), and every chunk costs a copy of the staging code and two barriers in each
/// channel block's code, so chunks are as large as this and the per-region load cap allow
/// (docs/design.md, "Code-size budget"; it was 12 KB).
constexpr int64_t kTargetSharedBytes = 24 * 1024;
} // namespace spconv

#endif
