//===- ConvShape.cpp - convolution shape and tiling heuristic -------------===//
#include "spconv/Conversion/ConvTemplate/ConvShape.h"

#include "spconv/Dialect/Spconv/IR/SpconvOps.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>

using namespace mlir;
using namespace spconv;

ConvShape ConvShape::fromOp(Conv2DOp op) {
  ConvShape s;
  s.n = op.getBatch();
  s.c = op.getInChannels();
  s.h = op.getInHeight();
  s.w = op.getInWidth();
  s.k = op.getOutChannels();
  s.r = op.getFilterHeight();
  s.s = op.getFilterWidth();
  s.p = op.getOutHeight();
  s.q = op.getOutWidth();
  s.sh = op.getStrides()[0];
  s.sw = op.getStrides()[1];
  auto pad = op.getPadding();
  s.pt = pad[0];
  s.pl = pad[1];
  s.pb = pad[2];
  s.pr = pad[3];
  s.dh = op.getDilations()[0];
  s.dw = op.getDilations()[1];
  s.hasBias = static_cast<bool>(op.getBiasAttr());
  s.activation = static_cast<Epilogue>(op.getActivation());
  s.residual = static_cast<bool>(op.getResidual());
  s.groups = op.getGroups();
  Type elem = op.getInputType().getElementType();
  s.precision = elem.isF16() ? Precision::f16 : elem.isBF16() ? Precision::bf16 : Precision::f32;
  if (!s.isHalf())
    return s;
  // Half-precision sums unless the op asks for f32 ones (bounded runs promoted to f32):
  // measured 1.3-2.3x faster on paper10's large layers at N = 64 for about twice the error
  // (docs/tuning-log.md, "Half precision").
  std::optional<Type> acc = op.getAccumulate();
  s.accumulate = acc && acc->isF32() ? Precision::f32 : s.precision;
  Pairing pairing =
      op.getPairing() ? static_cast<Pairing>(*op.getPairing()) : Pairing::none;
  // The image-pair layout stores the images pairing's words (the verifier refuses another).
  if (op.getLayout() == TensorLayout::image_pairs) {
    s.layout = Layout::imagePairs;
    pairing = Pairing::images;
  }
  return paired(s, pairing == Pairing::none ? choosePairing(s) : pairing);
}

ConvShape ConvShape::paired(ConvShape s, Pairing p) {
  s.pairing = p;
  if (p == Pairing::adjacent) {
    // Output columns 2i, 2i + 1 read input columns 2i, 2i + 1 (canPairAdjacent): the word
    // shape halves both.
    s.pairedExtent = s.q;
    s.q /= 2;
    s.w /= 2;
    return s;
  }
  int64_t *dim = p == Pairing::images ? &s.n : p == Pairing::rows ? &s.p
                 : p == Pairing::columns ? &s.q : nullptr;
  if (!dim)
    return s;
  s.pairedExtent = *dim;
  *dim = (*dim + 1) / 2;
  return s;
}

ConvShape ConvShape::logical() const {
  ConvShape s = *this;
  if (pairing == Pairing::images)
    s.n = pairedExtent;
  else if (pairing == Pairing::rows)
    s.p = pairedExtent;
  else if (pairing == Pairing::columns)
    s.q = pairedExtent;
  else if (pairing == Pairing::adjacent) {
    // (canPairAdjacent: the input's width is even.)
    s.q = pairedExtent;
    s.w *= 2;
  }
  s.pairing = Pairing::none;
  s.pairedExtent = 0;
  return s;
}

Pairing spconv::choosePairing(const ConvShape &logical) {
  // Adjacent pairs move whole words: on ResNet-50's stride-1 1x1 convs at batch 64 1.23-1.82x
  // faster than two images, and googlenet-1x1 1.33x at batch 1 (docs/tuning-log.md,
  // "Adjacent pairs").
  if (prefersAdjacent(logical))
    return Pairing::adjacent;
  if (logical.n >= 2)
    return Pairing::images;
  return logical.q >= 2 ? Pairing::columns : Pairing::rows;
}

bool spconv::prefersAdjacent(const ConvShape &l) {
  return l.r == 1 && l.s == 1 && l.sh == 1 && l.sw == 1 && !l.pt && !l.pl && !l.pb && !l.pr &&
         l.q == l.w && l.q % 2 == 0;
}

bool spconv::canPairAdjacent(const ConvShape &l) {
  if (l.s == 1)
    return prefersAdjacent(l);
  // Rows of whole words in and out; the window's odd taps straddle two words.
  return l.sw == 1 && l.w % 2 == 0 && l.q % 2 == 0;
}

ConvShape::WordWindow ConvShape::adjacentWindow() const {
  // Tap s reads elements 2i + e, 2i + e + 1 with e = s * dw - pl: from word i + floor(e / 2)
  // to word i + floor((e + 1) / 2).
  int64_t first = llvm::divideFloorSigned(-pl, 2);
  int64_t last = llvm::divideFloorSigned((s - 1) * dw - pl + 1, 2);
  return {first, last - first + 1};
}

const char *spconv::precisionName(Precision p) {
  switch (p) {
  case Precision::f32:
    return "f32";
  case Precision::f16:
    return "f16";
  case Precision::bf16:
    return "bf16";
  }
  return "f32";
}

const char *spconv::pairingName(Pairing p) {
  switch (p) {
  case Pairing::none:
    return "none";
  case Pairing::images:
    return "images";
  case Pairing::rows:
    return "rows";
  case Pairing::columns:
    return "columns";
  case Pairing::adjacent:
    return "adjacent";
  }
  return "none";
}

const char *spconv::layoutName(Layout l) {
  return l == Layout::imagePairs ? "image_pairs" : "nchw";
}

const char *spconv::epilogueName(Epilogue e) {
  switch (e) {
  case Epilogue::none:
    return "none";
  case Epilogue::relu:
    return "relu";
  case Epilogue::relu6:
    return "relu6";
  }
  return "none";
}

std::string ConvShape::str() const {
  return llvm::formatv("n{0}c{1}h{2}w{3}k{4}r{5}s{6}p{7}q{8}st{9}x{10}pad{11}.{12}.{13}.{14}"
                       "dil{15}x{16}b{17}a{18}",
                       n, c, h, w, k, r, s, p, q, sh, sw, pt, pl, pb, pr, dh, dw, hasBias,
                       epilogueName(activation))
             .str() +
         (groups > 1 ? "g" + std::to_string(groups) : std::string()) +
         // f32 keys are what they were before half precision: cached templates stay valid.
         (isHalf() ? llvm::formatv("{0}pair{1}e{2}acc{3}", precisionName(precision),
                                   pairingName(pairing), pairedExtent,
                                   precisionName(accumulate))
                         .str()
                   : std::string()) +
         // NCHW keys are what they were before layouts: cached templates stay valid.
         (layout != Layout::nchw ? std::string("lay") + layoutName(layout) : std::string()) +
         // Keys without a residual are what they were before it: cached templates stay valid.
         (residual ? "res" : "");
}

std::string Tiling::str() const {
  // Without a split the key is what it was before splits existed: cached templates stay valid.
  return llvm::formatv("bk{0}opt{1}tp{2}tq{3}cc{4}", blockK, outputsPerThread, tileP, threadsQ,
                       chunkC)
             .str() +
         (splitC > 1 ? "sc" + std::to_string(splitC) : std::string()) +
         (chunkLoop == 2 ? "cl" : "") +
         (imagesPerBlock > 1 ? "ib" + std::to_string(imagesPerBlock) : std::string()) +
         (blockOrder == 2 ? "cbm" : "") + (asyncStaging == 2 ? "cpa" : "") +
         (columnOrder == 2 && outputsPerThread > 1 ? "adj" : "") +
         (directInputs == 2 ? "dir" : "") +
         (channelVector > 1 ? "cv" + std::to_string(channelVector) : std::string()) +
         (loadAhead > 0 ? "la" + std::to_string(loadAhead) : std::string()) +
         (dynamicShared == 2 ? "dyn" : "") +
         (clusterSplit > 1 ? "cs" + std::to_string(clusterSplit) : std::string());
}

int64_t Tiling::sharedLimitBytes() const {
  return usesDynamicShared() ? kMaxDynamicSharedBytes : kMaxSharedBytes;
}

static constexpr int64_t kMaxLoadsPerRegion = 256;

static int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

static int64_t inTileExtent(int64_t outExtent, int64_t stride, int64_t filter,
                            int64_t dilation) {
  return (outExtent - 1) * stride + (filter - 1) * dilation + 1;
}

KernelGeometry::KernelGeometry(const ConvShape &sh, const Tiling &t) {
  bool denseH = sh.r == 1, denseW = sh.s == 1;
  inTileH = denseH ? t.tileP : inTileExtent(t.tileP, sh.sh, sh.r, sh.dh);
  inTileW = denseW ? t.tileQ() : inTileExtent(t.tileQ(), sh.sw, sh.s, sh.dw);
  stageStepH = denseH ? sh.sh : 1;
  stageStepW = denseW ? sh.sw : 1;
  tileStrideH = denseH ? 1 : sh.sh;
  tileStrideW = denseW ? 1 : sh.sw;
  rowLoads = t.adjacentColumns() ? (t.outputsPerThread - 1) * tileStrideW + (sh.s - 1) * sh.dw + 1
                                 : sh.s * t.outputsPerThread;
  overhangW = sh.pl;
  if (sh.pairsAdjacentWindow()) {
    // Words at stride 1: an output word's window of whole words, one per thread column
    // further (chooseTiling keeps several outputs a thread adjacent here).
    ConvShape::WordWindow win = sh.adjacentWindow();
    inTileW = t.tileQ() + win.words - 1;
    overhangW = -win.first;
    rowLoads = t.outputsPerThread - 1 + win.words;
  }
  tilesP = ceilDiv(sh.p, t.tileP);
  tilesQ = ceilDiv(sh.q, t.tileQ());
  kBlocks = ceilDiv(sh.k, t.blockK);
  windowC = sh.groups == 1 ? sh.c : std::max<int64_t>(1, t.blockK / sh.kpg()) * sh.cpg();
  numChunks = ceilDiv(windowC, t.chunkC);
  int64_t threads = t.threads();
  // Staging by position (ConvTemplateEmitter::emitStage): per tile position a thread loads
  // up to kStageBatch channels before it stores them. With the per-element index arithmetic
  // gone, batching costs no instructions on 1x1 filters either (under the old element-order
  // staging it doubled layer4.1.conv1's; docs/tuning-log.md, "Staging" and "Staging by
  // position").
  stageBatch = std::max<int64_t>(1, std::min<int64_t>(kStageBatch, t.chunkC));
  // Direct inputs stage nothing: shared memory holds only split groups' partial sums.
  sharedFloats = t.readsInputsDirectly() ? 0 : t.chunkC * inTileH * inTileW;
  // Channel vectors: every tile (of a group, an image, a buffer) starts at a multiple of the
  // vector, so a vector load is aligned wherever the tile is.
  sharedFloats = ceilDiv(sharedFloats, t.channelsPerLoad()) * t.channelsPerLoad();
  splitC = std::max<int64_t>(1, t.splitC);
  clusterSplit = std::max<int64_t>(1, t.clusterSplit);
  imagesPerBlock = std::max<int64_t>(1, t.imagesPerBlock);
  // The groups' partial sums travel through the tiles at the end: every group's but the
  // first, in a block of a cluster split every group's (the other blocks' first groups send
  // theirs too).
  int64_t partials =
      (clusterSplit > 1 ? splitC : splitC - 1) * threads * t.blockK * t.outputsPerThread;
  stagingBuffers = t.asyncStaging == 2 && t.chunkLoop == 2 ? 2 : 1;
  bufferFloats = sharedFloats * splitC * imagesPerBlock;
  blockSharedFloats = std::max(bufferFloats * stagingBuffers, partials);
  grid[0] = tilesP * tilesQ * clusterSplit;
  imageGroups = ceilDiv(sh.n, imagesPerBlock);
  grid[1] = t.channelBlockMajor() ? imageGroups : kBlocks;
  grid[2] = t.channelBlockMajor() ? kBlocks : imageGroups;
  block[0] = t.blockThreads();
  block[1] = block[2] = 1;
}

/// The block-k nearest below `blockK` whose blocks do not straddle groups: a multiple of the
/// output channels per group, or a divisor of them. (Depthwise convs, kpg = 1, keep any
/// block-k: each block covers blockK whole groups.)
static int64_t alignToGroups(const ConvShape &sh, int64_t blockK) {
  int64_t kpg = sh.kpg();
  if (sh.groups == 1 || blockK % kpg == 0 || kpg % blockK == 0)
    return blockK;
  if (blockK > kpg)
    return blockK / kpg * kpg;
  while (kpg % blockK != 0)
    --blockK;
  return blockK;
}

static int64_t gridBlocks(const ConvShape &sh, const Tiling &t) {
  KernelGeometry g(sh, t);
  return g.grid[0] * g.grid[1] * g.grid[2];
}

/// The chunk each of `groups` split groups stages: the tiling's, shrunk until every group's
/// tile gets its share of the block's shared memory (Tiling::sharedLimitBytes).
static int64_t splitChunk(const ConvShape &sh, const Tiling &t, int64_t groups) {
  KernelGeometry g(sh, t);
  int64_t perChannel = g.inTileH * g.inTileW * 4;
  return std::min(t.chunkC, std::max<int64_t>(1, t.sharedLimitBytes() / groups / perChannel));
}

std::string spconv::splitInfeasibility(const ConvShape &sh, const Tiling &t, int64_t groups) {
  if (groups <= 1)
    return "";
  int64_t threads = t.threads();
  if (threads % 32 != 0)
    return "a group's " + std::to_string(threads) + " threads (" + std::to_string(t.threadsQ) +
           " x " + std::to_string(t.tileP) +
           ") are not whole warps, which its barrier counts";
  if (threads * groups > 512)
    return std::to_string(groups) + " groups of " + std::to_string(threads) +
           " threads exceed the 512 threads a block may have for 128 registers a thread";
  KernelGeometry g(sh, t);
  Tiling split = t;
  split.chunkC = splitChunk(sh, t, groups);
  split.splitC = groups;
  KernelGeometry gs(sh, split);
  if (gs.numChunks < gs.numGroups())
    return "its " + std::to_string(gs.windowC) + " channels make " + std::to_string(gs.numChunks) +
           " chunk(s) of " + std::to_string(split.chunkC) + " (each group's tile of " +
           std::to_string(g.inTileH) + " x " + std::to_string(g.inTileW) + " positions gets 1/" +
           std::to_string(groups) + " of the " + std::to_string(t.sharedLimitBytes()) +
           " bytes of shared memory), fewer than the " +
           (gs.clusterSplit > 1 ? std::to_string(gs.numGroups()) + " groups of the cluster"
                                : std::string("groups"));
  if (gs.blockSharedFloats * 4 > t.sharedLimitBytes())
    return "the groups' tiles take " + std::to_string(gs.blockSharedFloats * 4) +
           " bytes, past the " + std::to_string(t.sharedLimitBytes()) +
           " bytes of shared memory a block may have";
  return "";
}

/// Splits a block's chunks over warp groups when the grid is small (docs/design.md, "Split
/// chunks"): with fewer blocks than two waves of SMs, each SM has one or two blocks of a few
/// warps, and every warp waits on its staging loads chunk after chunk with nothing else to
/// run (docs/tuning-log.md, "Shared staging"). A group needs whole warps (its barrier counts
/// threads in warps) and at least one chunk; a block stays within 512 threads so that 128
/// registers per thread still fit; each group's tile gets its share of the block's shared
/// memory, so the heuristic's chunk shrinks to fit. An explicit split is kept when it can
/// work, else 1.
void spconv::chooseSplit(const ConvShape &sh, Tiling &t, const TargetGPU &gpu) {
  const int64_t kSplitBlocks = gpu.twoWaves();
  bool requested = t.splitC > 0;
  auto feasible = [&](int64_t groups) { return splitInfeasibility(sh, t, groups).empty(); };
  if (!requested) {
    int64_t blocks = gridBlocks(sh, t);
    t.splitC = 1;
    for (int64_t groups : {4, 2})
      if (blocks * groups <= kSplitBlocks && feasible(groups)) {
        t.splitC = groups;
        break;
      }
  } else if (!feasible(t.splitC)) {
    t.splitC = 1;
  }
  if (t.splitC > 1)
    t.chunkC = splitChunk(sh, t, t.splitC);
}

/// Images per block (Tiling::imagesPerBlock). Packing images into a block lets its warps
/// share each instruction fetched: every image's group runs the same channel block's code,
/// chunk by chunk between the same barriers. Measured on ResNet-50 at batch 64
/// (docs/tuning-log.md, "Images per block"), it pays where blocks of different channel
/// blocks would otherwise share an SM's instruction cache a few warps each:
///  - blocks of at most two warps (7x7 planes): up to 256 threads while one wave of blocks
///    remains (layer4's 3x3 convs 3.7-5x faster, its 1x1 convs 1.04-1.8x);
///  - blocks of four warps with a filter larger than 1x1 and 8 or more channel blocks: two
///    images while two waves remain (layer3's 3x3 convs 1.29x). With one to three channel
///    blocks co-resident blocks run the same code anyway and packing cost 1-14% (layer1-2,
///    vgg-conv3 7%); 1x1 convs gained nothing.
/// Not with split chunks (those groups run different code). Each image stages its own tile:
/// chooseTiling then shrinks the chunk to keep the block's tiles within the shared-memory
/// limit.
static void chooseImagesPerBlock(const ConvShape &sh, const Tiling &requested, Tiling &t,
                                 const TargetGPU &gpu) {
  t.imagesPerBlock = 1;
  if (t.splitC > 1)
    return;
  if (requested.imagesPerBlock > 0) {
    t.imagesPerBlock = std::min(requested.imagesPerBlock, sh.n);
    return;
  }
  const int64_t twoWaves = gpu.twoWaves();
  int64_t maxImages = 1, minBlocks = twoWaves, imagesPerWord = 1;
  // Filters larger than 1x1 with 8+ channel blocks have large blocks of distinct code, and
  // co-resident blocks run different blocks' code: fetch-bound (11 no-instruction cycles
  // per issue on ResNet-50's layer4.1.conv2 at batch 64). Unstrided, up to 512 threads of
  // images run one block's code in lock-step: layer4.1.conv2 0.132 ms with 8 images against
  // 0.178 with 4, VGG-16's conv5_x 0.533 against 0.68 with 4 images against 2. Strided
  // tiles are 4x larger, so 8 images shrink the chunk: layer4.0.conv2 ran 0.445 ms with 8
  // against 0.210 with 4 (docs/tuning-log.md, "512-thread image blocks").
  bool bigCode = sh.r * sh.s > 1 && KernelGeometry(sh, t).kBlocks >= 8;
  int64_t maxThreads = bigCode && sh.sh == 1 && sh.sw == 1 ? 512 : 256;
  if (t.threads() <= 64) {
    maxImages = maxThreads / t.threads();
    // One wave, or one at most 3% of the SMs short of it: ResNet-50's layer4.1.conv1 at
    // batch 64 (block-k 64, 8 channel blocks) runs 0.097 ms on 132 SMs as 128 blocks of 4
    // images (43 chunks of 48 channels, in the chunk loop) and 0.180 ms as 256 blocks of 2
    // (docs/tuning-log.md, "Cheap chunk loop").
    minBlocks = twoWaves / 2 - twoWaves / 64;
  } else if (t.threads() <= 128 && bigCode) {
    maxImages = maxThreads / 128;
    // Half precision paired by images (measured on an H200 at batch 64, docs/tuning-log.md,
    // "Images per block in half precision"):
    //  - the grid's n counts words of two images, so the waves test counts a block's blocks
    //    as the FP32 kernel of the same images would have them. Counting words left ResNet-50's
    //    layer3 3x3 convs (block-k 32, 512 blocks) at one word a block: two ran 1.4-1.5x
    //    faster;
    //  - two words (256 threads, two blocks per SM, which then take SM affinity) beat four in
    //    one 512-thread block: VGG-16's conv4_1, conv4_2 and conv5_2 shapes 1.47x, 1.32x and
    //    1.47x, where FP32 measured the other way.
    if (sh.pairing == Pairing::images && sh.groups == 1) {
      maxImages = std::min<int64_t>(maxImages, 2);
      imagesPerWord = 2;
    }
  }
  while (t.imagesPerBlock * 2 <= std::min(sh.n, maxImages)) {
    Tiling packed = t;
    packed.imagesPerBlock *= 2;
    if (gridBlocks(sh, packed) * imagesPerWord < minBlocks)
      break;
    t.imagesPerBlock = packed.imagesPerBlock;
  }
}

/// Registers for warps (Tiling::minBlocksPerSM). Unstrided 3x3 convs over 128+ input
/// channels at block-k 64 in straight-line chunks are bound by instruction fetch: 64
/// accumulators take the 128-register cap, so 16 warps per SM, 4 per scheduler, each waiting
/// on its own stream of code (vgg-conv3 at batch 64: 9.8 no-instruction cycles per issue,
/// issue rate 0.26). Half the channels per block, in 64 registers at 8 blocks per SM, gives
/// each scheduler 8 warps: 1.03-1.46x faster on every such shape measured (C = 128-192, 28x28
/// to 112x112, K = 64-256, batch 64; vgg-conv3 1.21x: issue 0.40), although the shared loads
/// per FMA double. Not taken elsewhere: with 64 input channels (VGG-16's conv1_2, conv2_1),
/// 5x5 (alexnet-conv2) or 1x1 (memory-bound) the same tiling lost 8-44%, and in the chunk
/// loop (C >= 256) the exposed staging latency lost 31-49% (docs/tuning-log.md,
/// "Occupancy").
static bool isUnstrided3x3(const ConvShape &sh) {
  return sh.r == 3 && sh.s == 3 && sh.sh == 1 && sh.sw == 1 && sh.dh == 1 && sh.dw == 1 &&
         sh.groups == 1;
}

bool spconv::mayTakeOccupancyTiling(const Tiling &requested, const Tiling &t) {
  bool heuristic = requested.blockK <= 0 && requested.imagesPerBlock <= 0 &&
                   requested.splitC <= 0 && requested.chunkLoop <= 0 &&
                   requested.outputsPerThread <= 0 && requested.minBlocksPerSM <= 0;
  // Not for direct inputs: layer3.0.downsample at batch 64 ran 0.244 ms at block-k 32 / 8
  // per SM and 0.173 at 64 / 4 (docs/tuning-log.md, "Direct inputs").
  return heuristic && t.blockK == 64 && t.imagesPerBlock == 1 && t.splitC == 1 &&
         t.chunkLoop == 1 && t.outputsPerThread == 1 && t.blockThreads() == 128 &&
         !t.readsInputsDirectly();
}

void spconv::requestOccupancyTiling(Tiling &requested) {
  requested.blockK = 32;
  requested.minBlocksPerSM = 8;
  // One image, no split: with the heuristic's packing a 256-thread block at 8 per SM gets 32
  // registers (ResNet-50's layer3 3x3 ran 2.4x slower so).
  requested.splitC = 1;
  requested.imagesPerBlock = 1;
}

static void chooseOccupancy(const ConvShape &sh, const Tiling &requested, Tiling &t) {
  if (isUnstrided3x3(sh) && sh.c >= 128 && mayTakeOccupancyTiling(requested, t)) {
    t.blockK = 32;
    t.minBlocksPerSM = 8;
  }
}

// The heuristic (docs/design.md, "Tiling heuristic"):
//  - a warp spans consecutive output columns so global stores coalesce and shared loads hit
//    distinct banks (threads of a warp read consecutive words at stride 1);
//  - one output column per thread: the template holds K*C*R*S*outputsPerThread FMAs, so this
//    keeps it (and the compile time) smallest;
//  - each thread owns blockK channels: one shared-memory load feeds blockK FMAs and one
//    staged tile serves blockK channels, so blockK sets both the loads-per-FMA ratio and the
//    staging overhead; 64 channels keep them low at 90% sparsity (a (c,r,s) position is
//    then almost never all-zero across the block) with 64 accumulators per thread. It is
//    halved while the grid would leave SMs idle (small batches, small images);
//  - chunkC is the most input channels whose tile fits kTargetSharedBytes.
std::string spconv::invalidTilingRequest(const Tiling &requested) {
  if (requested.chunkLoop < 0 || requested.chunkLoop > 2)
    return "chunk-loop must be 0, 1 or 2, got " + std::to_string(requested.chunkLoop);
  if (requested.imagesPerBlock < 0)
    return "images-per-block must be 0 (heuristic) or positive, got " +
           std::to_string(requested.imagesPerBlock);
  if (requested.imagesPerBlock > 1 && requested.splitC > 1)
    return "images-per-block > 1 and split-c > 1 cannot be combined";
  if (requested.clusterSplit < 0 || requested.clusterSplit > kMaxClusterSplit)
    return "cluster-split must be 0 or 1 (no cluster) to " + std::to_string(kMaxClusterSplit) +
           ", got " + std::to_string(requested.clusterSplit);
  if (requested.imagesPerBlock > 1 && requested.clusterSplit > 1)
    return "images-per-block > 1 and cluster-split > 1 cannot be combined";
  if (requested.blockOrder < 0 || requested.blockOrder > 2)
    return "block-order must be 0, 1 or 2, got " + std::to_string(requested.blockOrder);
  if (requested.asyncStaging < 0 || requested.asyncStaging > 2)
    return "async-staging must be 0, 1 or 2, got " + std::to_string(requested.asyncStaging);
  if (requested.columnOrder < 0 || requested.columnOrder > 2)
    return "column-order must be 0, 1 or 2, got " + std::to_string(requested.columnOrder);
  if (requested.directInputs < 0 || requested.directInputs > 2)
    return "direct-inputs must be 0, 1 or 2, got " + std::to_string(requested.directInputs);
  if (requested.channelVector != 0 && requested.channelVector != 1 &&
      requested.channelVector != 2 && requested.channelVector != 4)
    return "channel-vector must be 0, 1, 2 or 4, got " + std::to_string(requested.channelVector);
  if (requested.loadAhead < 0 || requested.loadAhead > kMaxLoadAhead)
    return "load-ahead must be 0 to " + std::to_string(kMaxLoadAhead) + ", got " +
           std::to_string(requested.loadAhead);
  if (requested.dynamicShared < 0 || requested.dynamicShared > 2)
    return "dynamic-shared must be 0, 1 or 2, got " + std::to_string(requested.dynamicShared);
  return "";
}

std::string spconv::invalidMinBlocksRequest(const Tiling &tiling, int64_t requested) {
  int64_t threads = tiling.blockThreads();
  if (requested > kMaxBlocksPerSM)
    return "min-blocks-per-sm " + std::to_string(requested) + " exceeds the " +
           std::to_string(kMaxBlocksPerSM) + " blocks an SM holds";
  if (requested > 0 && requested * threads > kMaxThreadsPerSM)
    return "min-blocks-per-sm " + std::to_string(requested) + " blocks of " +
           std::to_string(threads) + " threads exceed the " + std::to_string(kMaxThreadsPerSM) +
           " threads an SM holds (at most " + std::to_string(kMaxThreadsPerSM / threads) +
           " for this tiling)";
  return "";
}

std::vector<std::string> spconv::unhonouredTilingRequests(const ConvShape &sh,
                                                          const Tiling &requested,
                                                          const Tiling &chosen) {
  std::vector<std::string> why;
  if (requested.asyncStaging == 2 && sh.gathersPairs())
    why.push_back("async-staging=2 does not apply to this conv: its half-precision words are "
                  "gathered from NCHW tensors (two 16-bit loads and a pack), which cp.async "
                  "cannot copy, so it stages through registers; the image-pair layout and "
                  "adjacent pairs copy whole words");
  if (requested.columnOrder == 1 && chosen.adjacentColumns() && sh.pairsAdjacentWindow())
    why.push_back("column-order=1 does not apply to this conv: its adjacent pairs read each "
                  "input row's window of words once for all of a thread's outputs, which "
                  "must then be adjacent (column-order=2)");
  KernelGeometry g(sh, chosen);
  if (requested.chunkC > 0 && chosen.chunkC < std::min(requested.chunkC, g.windowC))
    why.push_back("chunk-c=" + std::to_string(requested.chunkC) + " is lowered to " +
                  std::to_string(chosen.chunkC) + " for this conv: a block stages " +
                  std::to_string(g.splitC * g.imagesPerBlock * g.stagingBuffers) +
                  " tile(s) of " + std::to_string(g.inTileH) + " x " +
                  std::to_string(g.inTileW) + " positions (4 bytes a channel), which must " +
                  "fit the " + std::to_string(chosen.sharedLimitBytes()) +
                  " bytes of shared memory a block may have; fewer threads, rows or images "
                  "a block leave room for more channels" +
                  (chosen.usesDynamicShared() ? ""
                                              : ", and --dynamic-shared=2 for up to " +
                                                    std::to_string(kMaxDynamicSharedBytes)));
  if (requested.splitC > 1 && chosen.splitC != requested.splitC) {
    Tiling unsplit = chosen;
    unsplit.splitC = 1;
    std::string reason = splitInfeasibility(sh, unsplit, requested.splitC);
    why.push_back("split-c=" + std::to_string(requested.splitC) +
                  " does not apply to this conv: " +
                  (reason.empty() ? std::string("the rest of its tiling leaves no room for it")
                                  : reason) +
                  ", so a block runs " + std::to_string(chosen.splitC) +
                  " group(s) of its chunks");
  }
  if (requested.clusterSplit > 1 && chosen.clusterSplit == 1) {
    Tiling asked = chosen;
    asked.clusterSplit = requested.clusterSplit;
    why.push_back("cluster-split=" + std::to_string(requested.clusterSplit) +
                  " does not apply to this conv: " + clusterSplitInfeasibility(sh, asked) +
                  ", so a block runs the whole tile");
  }
  if (requested.channelVector > 1 && chosen.channelVector == 1)
    why.push_back("channel-vector=" + std::to_string(requested.channelVector) +
                  " does not apply to this conv: " +
                  (chosen.readsInputsDirectly()
                       ? "its threads read their inputs from global memory (direct inputs)"
                       : "a thread computes several outputs, with a load per output") +
                  ", so it loads one channel at a time");
  if (requested.loadAhead > 0 && chosen.loadAhead == 0)
    why.push_back("load-ahead=" + std::to_string(requested.loadAhead) +
                  " does not apply to this conv: " +
                  (chosen.readsInputsDirectly() ? std::string("it stages nothing (direct inputs)")
                   : chosen.asyncStaging == 2   ? std::string("it stages by cp.async")
                   : chosen.chunkLoop == 2      ? std::string("its chunks run in a loop")
                   : g.numChunks / g.numGroups() < 2
                       ? (chosen.splitC > 1 ? "each of its " + std::to_string(chosen.splitC) +
                                                  " warp groups stages a single chunk"
                                            : std::string("it stages a single chunk"))
                       : std::string("a group has more threads than its tile has positions")) +
                  ", so its loads are issued after the barrier that precedes their stores");
  return why;
}

std::string spconv::clusterSplitInfeasibility(const ConvShape &sh, const Tiling &t) {
  if (t.clusterSplit <= 1)
    return "";
  KernelGeometry g(sh, t);
  if (g.numChunks < g.numGroups())
    return "its " + std::to_string(g.numChunks) + " chunk(s) of " + std::to_string(t.chunkC) +
           " channels are fewer than its " + std::to_string(g.numGroups()) + " groups (split-c " +
           std::to_string(g.splitC) +
           " in each block of the cluster); a smaller chunk-c or split-c leaves each a chunk";
  if (g.blockSharedFloats * 4 > t.sharedLimitBytes())
    return "each block's partial sums (" + std::to_string(g.numGroups() / g.clusterSplit) +
           " group(s) of " + std::to_string(t.threads()) + " threads, " +
           std::to_string(t.blockK * t.outputsPerThread) + " words a thread) take " +
           std::to_string(g.blockSharedFloats * 4) + " bytes, past the " +
           std::to_string(t.sharedLimitBytes()) +
           " bytes of shared memory a block may have; a smaller block-k, or " +
           "--dynamic-shared=2, leaves room";
  return "";
}

std::string spconv::invalidNumSMsRequest(int64_t requested) {
  if (requested < 0 || requested > TargetGPU::kMaxSMs)
    return "num-sms must be 0 (the default, " + std::to_string(TargetGPU::kDefaultSMs) +
           ") or 1 to " + std::to_string(TargetGPU::kMaxSMs) + ", got " +
           std::to_string(requested);
  return "";
}

std::string spconv::invalidTilingRequest(const Tiling &requested, int64_t numSMs) {
  std::string why = invalidTilingRequest(requested);
  return why.empty() ? invalidNumSMsRequest(numSMs) : why;
}

std::string spconv::invalidSmAffinityRequest(int64_t requested) {
  if (requested < 0 || requested > 2)
    return "sm-affinity must be 0, 1 or 2, got " + std::to_string(requested);
  return "";
}

std::string spconv::invalidClusterSizeRequest(int64_t requested) {
  if (requested < 0 || requested > 8)
    return "cluster-size must be 0 or 1 (no cluster) to 8, got " + std::to_string(requested);
  return "";
}

std::string spconv::clusterMismatch(int64_t clusterSize, const int64_t grid[3]) {
  if (clusterSize <= 1 || grid[0] % clusterSize == 0)
    return "";
  return "cluster-size=" + std::to_string(clusterSize) +
         " does not divide the grid's x, its tiles (" + std::to_string(grid[0]) +
         " blocks; the grid is " + std::to_string(grid[0]) + " x " + std::to_string(grid[1]) +
         " x " + std::to_string(grid[2]) +
         "): a cluster launch needs whole clusters; choose a size that divides it, or a "
         "tiling whose grid it divides";
}

bool spconv::occupancyForCodeHeavyBlocks(const ConvShape &sh, int64_t blockInstructions) {
  return isUnstrided3x3(sh) && sh.c >= 64 && sh.c < 128 && blockInstructions > 8192;
}

std::string spconv::noRoomForWorkSlot(const ConvShape &sh, const Tiling &t) {
  int64_t tile = KernelGeometry(sh, t).blockSharedFloats * 4;
  if (tile + kWorkSlotBytes <= t.sharedLimitBytes())
    return "";
  return "sm-affinity=2 needs " + std::to_string(kWorkSlotBytes) +
         " bytes of static shared memory beside this tiling's " + std::to_string(tile) +
         "-byte tile, and a block may have " + std::to_string(t.sharedLimitBytes()) +
         "; ask for a smaller --chunk-c";
}

WorkOrder spconv::chooseWorkOrder(const ConvShape &sh, const Tiling &t,
                                  int64_t blockInstructions, int64_t blocksPerSM,
                                  int64_t requestedBlockOrder, int64_t requestedSmAffinity,
                                  const TargetGPU &gpu) {
  WorkOrder order;
  order.blockOrder = t.blockOrder == 2 ? 2 : 1;
  order.smAffine = requestedSmAffinity == 2;
  bool chooseOrder = requestedBlockOrder == 0, chooseAffinity = requestedSmAffinity == 0;
  if (!chooseOrder && !chooseAffinity)
    return order;
  // Measured on the H100 (docs/design.md, "Instruction fetch"): straight-line code shared by
  // an SM's blocks streams near the issue limit; past about 128 KB of distinct code per SM
  // (SASS: 16 bytes an instruction) the rate falls 2.5-4x. Co-resident blocks of the grid
  // order run different channel blocks (ids numSMs apart share an SM).
  constexpr int64_t kFetchBytes = 128 * 1024, kBytesPerInstruction = 16;
  KernelGeometry g(sh, t);
  int64_t blocks = std::max<int64_t>(1, std::min(blocksPerSM, kMaxThreadsPerSM / t.blockThreads()));
  int64_t distinct = std::min(g.kBlocks, blocks);
  if (distinct < 2 || distinct * blockInstructions * kBytesPerInstruction <= kFetchBytes)
    return order;
  int64_t resident = gpu.numSMs * blocks;
  int64_t itemsPerChannelBlock = gridBlocks(sh, t) / g.kBlocks;
  // A channel block whose code fits the fetch budget by itself, with enough work that the
  // whole GPU runs it for a while: the channel-block-major grid (vgg-conv3 1.18x, VGG-16's
  // conv2_1 1.12x and conv3_1 1.13x at batch 64). Each channel block then reads the input
  // from DRAM in its own pass: with less work (ResNet-50's layer2 3x3 0.80x), or with code
  // that misses the caches anyway (VGG-16's conv3_2 at block-k 64, vgg-conv3 at p = 0.5:
  // 17-20 K instructions a block, 0.78-0.83x), that costs more than it saves.
  bool fitsAlone = blockInstructions * kBytesPerInstruction <= kFetchBytes;
  if (2 * itemsPerChannelBlock >= 3 * resident) {
    // Not SM affinity either: vgg-conv3 0.96x, VGG-16's conv3_2 0.90x, vgg-conv3 at p = 0.5
    // 1.00x with it.
    if (chooseOrder && fitsAlone)
      order.blockOrder = 2;
    return order;
  }
  // With fewer waves each SM runs one channel block while the grid order keeps the channel
  // blocks reading one input tile together: alexnet-conv2 1.14x (1.80x at p = 0.5),
  // resnet-conv2 at p = 0.5 1.31x, ResNet-50's layer3 3x3 1.04x. Not below a wave (no
  // data) nor at 2 channel blocks (ResNet-50's layer2 1x1 0.96x); where nothing is gained
  // the claim costs a few percent.
  // Not under a cluster split: a block's cluster, not its SM, decides what it runs.
  if (chooseAffinity && !order.smAffine && t.clusterSplit <= 1 && g.kBlocks >= 3 &&
      g.kBlocks * itemsPerChannelBlock >= resident && noRoomForWorkSlot(sh, t).empty())
    order.smAffine = true;
  return order;
}

Tiling spconv::chooseTiling(const ConvShape &sh, Tiling t, const TargetGPU &gpu) {
  const Tiling requested = t;
  // Static shared memory unless dynamic is asked for: every limit below depends on it.
  if (t.dynamicShared != 2)
    t.dynamicShared = 1;
  // A cluster split only where asked for (the chunks it needs are checked at the end), and
  // then never packed images (invalidTilingRequest refuses an explicit packing with it).
  t.clusterSplit = std::max<int64_t>(1, t.clusterSplit);
  if (t.clusterSplit > 1)
    t.imagesPerBlock = 1;
  // Packed images and split chunks exclude each other; an explicit packing wins over the
  // heuristic's split.
  if (requested.imagesPerBlock > 1 && requested.splitC <= 0)
    t.splitC = 1;
  if (t.outputsPerThread <= 0)
    t.outputsPerThread = 1;
  if (t.threadsQ <= 0) {
    int64_t cols = ceilDiv(sh.q, t.outputsPerThread);
    t.threadsQ = std::min<int64_t>(32, llvm::PowerOf2Ceil(std::max<int64_t>(cols, 1)));
  }
  if (t.tileP <= 0) {
    t.tileP = std::max<int64_t>(1, std::min<int64_t>(128 / t.threadsQ, sh.p));
    // Rows up to a whole warp: the rows past P occupy lanes the last warp had idle anyway
    // (their outputs are not stored), and a tile of whole warps can split its chunks over
    // warp groups (chooseSplit). On 7x7 outputs the 56-thread tile becomes 64 threads and
    // then 4 groups of them: docs/tuning-log.md, "Whole-warp tiles". The extra rows are
    // staged too, so only where they add at most a quarter to the tile.
    int64_t warpRows = std::max<int64_t>(1, 32 / t.threadsQ);
    int64_t rounded = static_cast<int64_t>(llvm::alignTo(t.tileP, warpRows));
    if (4 * rounded <= 5 * t.tileP)
      t.tileP = rounded;
  }
  if (t.blockK <= 0) {
    const int64_t kMinBlocks = gpu.twoWaves();
    int64_t tiles = ceilDiv(sh.p, t.tileP) * ceilDiv(sh.q, t.threadsQ * t.outputsPerThread);
    // A staged input channel feeds min(blockK, kpg) output channels: past kpg (a block of
    // several small groups, e.g. depthwise) a larger block amortises no staging, it only
    // makes each block stage more channels one after the other. There blocks start at
    // max(kpg, 8) channels and may halve to max(kpg, 4) for small grids: on MobileNetV2's
    // depthwise convs 1.4x faster in sum than 64 at N = 64 and 1.3x at N = 1, though the
    // 7 x 7, 960-channel ones lose 2.4x (docs/tuning-log.md, "Grouped and depthwise convs").
    bool smallGroups = sh.groups > 1 && sh.kpg() < 64;
    int64_t start = smallGroups ? std::max<int64_t>(sh.kpg(), 8) : 64;
    // Promoted half runs (ConvShape::promotesRuns) hold three registers an output pair
    // (the f32 pair and the run's half word) where f32 and half sums hold one: a quarter of
    // the channels keeps a thread's sums in the registers f32 block-k 64 uses. At block-k
    // 32 and 64 vgg-conv3, resnet-conv2 and alexnet-conv2 at N = 64 spilled 470-2100 bytes
    // and ran 1.8-2.2x slower than with half sums (docs/tuning-log.md, "Half precision").
    if (sh.promotesRuns() && !smallGroups)
      start = 16;
    int64_t floor = smallGroups ? std::max<int64_t>(sh.kpg(), 4) : 8;
    t.blockK = std::min<int64_t>(sh.k, start);
    while (t.blockK > floor && tiles * ceilDiv(sh.k, t.blockK) * sh.n < kMinBlocks)
      t.blockK /= 2;
  }
  t.blockK = std::min(t.blockK, sh.k);
  t.blockK = alignToGroups(sh, t.blockK);
  if (t.chunkC <= 0) {
    Tiling one = t;
    one.chunkC = 1;
    KernelGeometry g(sh, one);
    int64_t perChannel = g.inTileH * g.inTileW * 4;
    // ptxas hoists the shared-memory loads between two barriers to the top of the region.
    // Before the register cap and the per-chunk pins, 135 loads per region gave vgg-conv3
    // a 3 KB stack frame, hence a cap of 64; with them, 128 and 256 measured faster on every
    // layer the cap bound (alexnet-conv2 N=1 1.5x, lenet-conv2 N=64 2.1x, none slower) and
    // cut ptxas time 4x on 5x5 filters (fewer chunks, fewer staging loops and barriers):
    // docs/tuning-log.md. The shared-memory target now binds first for 3x3 filters.
    int64_t loadsPerChannel = sh.r * g.rowLoads;
    int64_t byLoads = std::max<int64_t>(1, kMaxLoadsPerRegion / loadsPerChannel);
    t.chunkC = std::max<int64_t>(
        1, std::min({g.windowC, kTargetSharedBytes / perChannel, byLoads}));
  }
  t.chunkC = std::min(t.chunkC, KernelGeometry(sh, t).windowC);
  chooseSplit(sh, t, gpu);
  // One to two waves of blocks at the smallest block-k are too many to split (two groups
  // would pass two waves), yet leave each SM one or two blocks waiting on their staging.
  // Four times the channels per block in four groups keeps as many warps in flight and
  // stages each input tile once for 4x the channels: 1.26-2.0x faster on the ResNet-50
  // shapes measured (docs/tuning-log.md, "Whole-warp tiles"). Plain convs with block-k,
  // chunk-c and split-c all the heuristic's.
  if (requested.blockK <= 0 && requested.splitC <= 0 && requested.chunkC <= 0 &&
      requested.imagesPerBlock <= 1 &&
      t.splitC == 1 && sh.groups == 1 && t.blockK * 4 <= std::min<int64_t>(sh.k, 64) &&
      gridBlocks(sh, t) <= gpu.twoWaves()) {
    Tiling wide = t;
    wide.blockK = t.blockK * 4;
    wide.splitC = 4;
    chooseSplit(sh, wide, gpu);
    if (wide.splitC == 4 && gridBlocks(sh, wide) * 4 <= gpu.twoWaves())
      t = wide;
  }
  // Two waves of blocks at block-k 8 split in two, with many chunks (a deep 1x1 such as
  // ResNet-50's layer4.0.conv1, 1024 -> 512 at 14x14): twice the channels per block in four
  // groups, each still walking at least 8 chunks, 1.9x faster there; with fewer chunks per
  // group (the 28x28 layers, 4-6) it measured 6% slower (docs/tuning-log.md, "Chunk loop").
  if (requested.blockK <= 0 && requested.splitC <= 0 && requested.chunkC <= 0 &&
      requested.imagesPerBlock <= 1 &&
      t.splitC == 2 && sh.groups == 1 && t.blockK * 2 <= std::min<int64_t>(sh.k, 64)) {
    Tiling wide = t;
    wide.blockK = t.blockK * 2;
    wide.splitC = 4;
    chooseSplit(sh, wide, gpu);
    if (wide.splitC == 4 && KernelGeometry(sh, wide).numChunks >= 8 * 4 &&
        gridBlocks(sh, wide) * 4 <= gpu.twoWaves())
      t = wide;
  }
  chooseImagesPerBlock(sh, requested, t, gpu);
  // Direct inputs wherever a thread reads only what it would stage (a 1x1 filter, one
  // output per thread), unless asked not to: ResNet-50 at batch 64 5.62 -> 5.03 ms, every
  // 1x1 conv 1.01-1.50x (docs/tuning-log.md, "Direct inputs"). They have no staging to
  // loop over or to copy asynchronously.
  // Half precision reads both halves of its word (two 16-bit loads and a pack,
  // DirectInputs), as its staging does.
  if (t.directInputs == 1 || sh.r != 1 || sh.s != 1 || t.outputsPerThread != 1)
    t.directInputs = 1;
  else
    t.directInputs = 2;
  if (t.readsInputsDirectly()) {
    t.chunkLoop = 1;
    t.asyncStaging = 1;
  }
  // Channel vectors: one channel a load unless asked (docs/design.md, "Channel vectors"),
  // and only where a thread reads its staged inputs for one output (under adjacent windows,
  // one load per window word of V channels).
  if (t.channelVector <= 0 || t.readsInputsDirectly() || t.outputsPerThread != 1)
    t.channelVector = 1;
  // An explicit chunk-c may not exceed the hard limit either: each group's (and image's)
  // tile gets its share of it.
  KernelGeometry g(sh, t);
  int64_t tiles = g.splitC * g.imagesPerBlock;
  if (g.sharedFloats * 4 * tiles > t.sharedLimitBytes())
    t.chunkC =
        std::max<int64_t>(1, t.sharedLimitBytes() / tiles / (g.inTileH * g.inTileW * 4));
  // A loop over the chunks keeps one copy of the staging code per group instead of one per
  // chunk (smaller code: less to fetch, less for ptxas), but it exposes the staging loads'
  // latency that ptxas overlaps with the FMAs around them in straight-line code. Where four
  // warp groups at block-k <= 16 share the work the other groups' FMAs cover one group's
  // staging (up to 1.43x faster; docs/tuning-log.md, "Chunk loop"). Elsewhere it pays where
  // a group walks kManyChunks or more: ResNet-50's 53 convs with the loop wherever a group
  // has two full chunks ran 5.906 ms at batch 64 against 6.087 straight-line (the 1x1 and
  // strided convs up to 1.5x faster, unstrided 3x3 convs 4-18% slower), at batch 1 1.7%
  // slower; taking it from 8 chunks a group: 5.906 ms at batch 64 (c6f4c3b), batch 1
  // unchanged (docs/tuning-log.md, "Cheap chunk loop"), and layer4.x.conv2 at batch 64
  // compile in about 20 s alone instead of 26-36 s.
  if (t.chunkLoop != 1 && t.chunkLoop != 2) {
    constexpr int64_t kManyChunks = 8;
    KernelGeometry chunks(sh, t);
    int64_t perGroup = chunks.numChunks / chunks.numGroups();
    bool fourGroups = chunks.splitC == 4 && t.blockK <= 16 && perGroup >= 2;
    t.chunkLoop = fourGroups || perGroup >= kManyChunks ? 2 : 1;
  }
  chooseOccupancy(sh, requested, t);
  if (t.blockOrder != 2)
    t.blockOrder = 1;
  // Adjacent pairs under a wider filter read one window of words per thread and row
  // (ConvTemplateEmitter::emitChunkNest): several outputs a thread are adjacent there.
  if (t.columnOrder != 2)
    t.columnOrder = sh.pairsAdjacentWindow() && t.outputsPerThread > 1 ? 2 : 1;
  // cp.async staging, double-buffered in the chunk loop, where a block fills its SM: a chunk
  // loop over packed images (blocks of up to 512 threads, one or two per SM) has little else
  // to run while its staging loads are in flight; the copies of the next chunk run under this
  // chunk's FMAs. Unstrided filters larger than 1x1 only: at batch 64 VGG-16's conv4_x and
  // conv5_x 1.25-1.30x, ResNet-50's layer4.1/4.2 3x3 1.06-1.07x; but its layer4 1x1s
  // 0.8-1.02x (many small chunks: the wait and barrier per chunk cost more than the copies
  // save) and its strided layer4.0.conv2 0.87x (a stride-2 tile holds 2.9x the positions, so
  // the second buffer halves its chunk to 5 channels). Elsewhere other blocks cover the
  // latency (docs/tuning-log.md, "Asynchronous staging").
  // Half precision: cp.async copies whole words only (a gathered word is two loads and a
  // pack); where the words lie whole (the image-pair layout), the same rule, measured on
  // VGG-16's FP16 shapes at batch 64 on an H200, where the heuristic packs two words a block
  // in a chunk loop: conv3_x 1.24x, conv4_1 1.64x, conv4_2 1.03x, conv5_x 1.04x; long
  // scoreboard stalls 1.2-4.0 -> 0.6-1.0 per issue (docs/tuning-log.md, "cp.async by default
  // in half precision").
  if (sh.isHalf() && !sh.pairsWholeWords())
    t.asyncStaging = 1;
  if (t.asyncStaging != 1 && t.asyncStaging != 2)
    t.asyncStaging = t.chunkLoop == 2 && KernelGeometry(sh, t).imagesPerBlock > 1 &&
                             sh.r * sh.s > 1 && sh.sh == 1 && sh.sw == 1
                         ? 2
                         : 1;
  // A cluster split whose partial sums alone overflow shared memory is dropped before the
  // chunk shrinks for them (and again below if a group is left without a chunk).
  if (!clusterSplitInfeasibility(sh, t).empty())
    t.clusterSplit = 1;
  // A double-buffered chunk loop holds two sets of tiles: the chunk shrinks until they fit.
  while (t.chunkC > 1 && KernelGeometry(sh, t).blockSharedFloats * 4 > t.sharedLimitBytes())
    --t.chunkC;
  // Loads ahead only where a chunk's staging loads are register loads in straight-line code
  // that a later chunk follows, and every thread of a group has a first tile position (its
  // words are loaded outside any condition): only asked for (the tuning table's entries).
  KernelGeometry staged(sh, t);
  if (t.loadAhead < 0 || t.asyncStaging == 2 || t.chunkLoop == 2 || t.readsInputsDirectly() ||
      staged.numChunks / staged.numGroups() < 2 || staged.inTileH * staged.inTileW < t.threads())
    t.loadAhead = 0;
  if (!clusterSplitInfeasibility(sh, t).empty())
    t.clusterSplit = 1;
  return t;
}
