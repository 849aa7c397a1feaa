//===- ConvTemplate.h - direct-convolution template body --------*- C++ -*-===//
//
// Emits the pieces of the direct-convolution template shared by the GPU kernel and its
// serial CPU twin: staging an input tile into (shared) memory, the FMAs of one staged
// channel chunk for one block of output channels (an affine nest, unrolled by
// unrollTemplateNests), and the guarded output stores.
// Weights and biases are placeholders (Placeholder.h); the drivers decide how threads and
// barriers are realised.
//
//===----------------------------------------------------------------------===//
#ifndef SPCONV_CONVERSION_CONVTEMPLATE_CONVTEMPLATE_H
#define SPCONV_CONVERSION_CONVTEMPLATE_CONVTEMPLATE_H

#include "spconv/Conversion/ConvTemplate/ConvShape.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"

namespace spconv {
/// Where a block sits: image, first output row and first output column of its tile. With
/// images per block (Tiling::imagesPerBlock) emitImageCoords makes them a thread's: `n` its
/// image, `tileBase` where its image's tile starts in shared memory, `nOk` whether that
/// image exists (null: always; the last block of a batch that the images do not divide).
struct BlockCoords {
  mlir::Value n, p0, q0;
  mlir::Value tileBase = nullptr, nOk = nullptr;
};

/// Direct inputs (Tiling::directInputs 2): where a thread reads its own input element of
/// each channel of its channel block's window, computed once per channel block: channel c
/// of the window is input[n, cBase + c, y, x], clamped to C - 1 where the window runs past
/// C (the last block of a grouped conv that block-k does not divide: those channels feed
/// only output channels past K, never stored).
/// Half precision: where the hi element of a word lies (ConvShape::pairing), clamped, and
/// whether it exists and lies inside the input (`ok`; 0 is read where not: never stored).
/// ConvTemplateEmitter::emitPairedElement computes it, for staging and direct inputs alike.
struct PairedElement {
  mlir::Value n, y, x, ok;
};

/// Half precision: the thread's word also reads the lo element's pair (`hi`): two 16-bit
/// loads and a pack, as staging does, but into a register.
struct DirectInputs {
  mlir::Value input;
  mlir::Value n, y, x;            // the thread's image and input element (clamped inside)
  mlir::Value cBase = nullptr;    // the window's first channel (null: 0)
  mlir::Value inside = nullptr;   // the element lies inside the input (null: no padding)
  PairedElement hi;               // half precision only
};

class ConvTemplateEmitter {
public:

  ConvTemplateEmitter(const ConvShape &shape, const Tiling &tiling)
      : shape(shape), tiling(tiling), geom(shape, tiling) {}

  const KernelGeometry &geometry() const { return geom; }
  /// GPU kernels stage with cp.async (nvgpu.device_async_copy, zero-filling the padding)
  /// and wait for their copies at the end of each stage; the CPU twin loads and stores.
  void setAsyncStaging(bool async) { asyncStaging = async; }
  /// GPU kernels join the halves of two words (adjacent windows' odd taps) with one
  /// nvvm.prmt on the 32-bit words, so no 16-bit value reaches ptxas there: ptxas 13.0 can
  /// reload a spilled 16-bit half with a 32-bit load that clobbers the register's other
  /// half (docs/design.md, "Adjacent windows"). The CPU twin joins with a shufflevector.
  void setGpuJoins(bool gpu) { gpuJoins = gpu; }
  /// The kernel's residual tensor (ConvShape::residual; of the output's memref type), which
  /// emitStore adds to each output before the activation.
  void setResidual(mlir::Value r) { residual = r; }
  const Tiling &getTiling() const { return tiling; }
  const ConvShape &getShape() const { return shape; }

  /// Where the chunk loop of a group's chunks [first, last) ends: chunks [first, end) run
  /// in a loop (Tiling::chunkLoop == 2 and two or more full chunks), [end, last)
  /// straight-line after it; end == first when the group does not loop. Only full chunks
  /// loop: staged from a run-time channel offset, a full chunk's channels all lie inside
  /// the input, so they need no clamp and each load sits at a constant distance from the
  /// previous one. A partial last chunk (the window's channels not a multiple of chunkC)
  /// follows the loop.
  int64_t chunkLoopEnd(int64_t first, int64_t last) const {
    int64_t end = last;
    if (end == geom.numChunks && geom.windowC % tiling.chunkC != 0)
      --end;
    return tiling.chunkLoop == 2 && end - first >= 2 ? end : first;
  }
  /// The chunk loop's dispatch: an scf.index_switch on the chunk index `j` with a case per
  /// chunk of [first, last), the last chunk the default case. `body` fills the case of chunk
  /// `chunk` at the builder's insertion point and returns what the case yields (values of
  /// `resultTypes`); the switch's results are returned.
  llvm::SmallVector<mlir::Value>
  emitChunkSwitch(mlir::OpBuilder &b, mlir::Location loc, mlir::Value j, int64_t first,
                  int64_t last, mlir::TypeRange resultTypes,
                  llvm::function_ref<llvm::SmallVector<mlir::Value>(int64_t chunk)> body) const;

  /// Block coordinates from the linear tile index and the image index (blockIdx.z: the
  /// block's first image is n * imagesPerBlock).
  BlockCoords emitBlockCoords(mlir::OpBuilder &b, mlir::Location loc, mlir::Value tileIdx,
                              mlir::Value n) const;
  /// Images per block: thread `blockTid` of the block works on image blockTid / threads()
  /// of it as thread blockTid % threads() of that image's group. Returns that thread index
  /// and the thread's coordinates (BlockCoords); without packing, `blockTid` and `bc`.
  std::pair<mlir::Value, BlockCoords> emitImageCoords(mlir::OpBuilder &b, mlir::Location loc,
                                                      mlir::Value blockTid,
                                                      const BlockCoords &bc) const;
  /// Thread `tid` copies its share of channel chunk `chunk`'s input tile into `tile`
  /// (a 1-D f32 memref of geometry().sharedFloats), writing 0 where the tile hangs over the
  /// padding. The chunk counts from the first input channel of channel block `kb`'s window
  /// (0 without groups), or of the block starting at output channel `kBase` when given.
  /// `tid` counts within the thread's group; the group's tile starts at `tileOffset`.
  /// `ahead`: the words emitStageLoadsAhead loaded for this chunk, stored first.
  void emitStage(mlir::OpBuilder &b, mlir::Location loc, mlir::Value tid,
                 const BlockCoords &bc, int64_t kb, int64_t chunk, mlir::Value input,
                 mlir::Value tile, mlir::Value kBase = nullptr, int64_t tileOffset = 0,
                 llvm::ArrayRef<mlir::Value> ahead = {}) const;
  /// Loads ahead (Tiling::loadAhead): the global loads (with their padding selects and
  /// packs) of the first words thread `tid` stages for chunk `chunk`, the channels
  /// 0, 1, ... of its first tile position, at most tiling.loadAhead of them, storing
  /// nothing: emitStage stores them after the barrier. None where the thread may have no
  /// tile position (the group outnumbers the plane) or the chunk is staged otherwise.
  llvm::SmallVector<mlir::Value> emitStageLoadsAhead(mlir::OpBuilder &b, mlir::Location loc,
                                                     mlir::Value tid, const BlockCoords &bc,
                                                     int64_t kb, int64_t chunk,
                                                     mlir::Value input,
                                                     mlir::Value kBase = nullptr) const;
  /// The same for the `chunkChannels` channels from window channel `c0` (an index value):
  /// a loop over the chunks (Tiling::chunkLoop) stages a full chunk from a run-time c0
  /// (chunkLoopEnd: its channels lie inside the window).
  /// With asynchronous staging the thread commits its copies and, if `wait`, waits for
  /// them; a double-buffered loop waits at the top of the next iteration instead.
  void emitStage(mlir::OpBuilder &b, mlir::Location loc, mlir::Value tid,
                 const BlockCoords &bc, int64_t kb, mlir::Value c0, int64_t chunkChannels,
                 mlir::Value input, mlir::Value tile, mlir::Value kBase = nullptr,
                 int64_t tileOffset = 0, bool wait = true,
                 llvm::ArrayRef<mlir::Value> ahead = {},
                 llvm::SmallVectorImpl<mlir::Value> *loadOnly = nullptr) const;
  /// Waits for the thread's outstanding copies (asynchronous staging).
  void emitStageWait(mlir::OpBuilder &b, mlir::Location loc) const;
  /// A double-buffered chunk loop over chunks [first, loopEnd) (stagingBuffers 2): chunk J
  /// lives in buffer (J - first) mod 2; this is its tile offset, given the group's first
  /// buffer's `tileOffset`.
  int64_t bufferedTileOffset(int64_t chunk, int64_t first, int64_t tileOffset) const {
    return tileOffset + (chunk - first) % 2 * geom.bufferFloats;
  }
  /// Stages full chunk `chunk` (an index value) into its buffer, without waiting for the
  /// copies, if it is before `loopEnd` (a uniform scf.if: the loop's last iteration has no
  /// next chunk).
  void emitStageIntoBuffer(mlir::OpBuilder &b, mlir::Location loc, mlir::Value tid,
                           const BlockCoords &bc, int64_t kb, mlir::Value chunk,
                           int64_t first, int64_t loopEnd, mlir::Value input,
                           mlir::Value tile, mlir::Value kBase, int64_t tileOffset) const;
  /// Number of accumulators of a thread for channel block `kb`.
  int64_t numAccumulators(int64_t kb) const;
  /// The accumulators' initial values: bias placeholders, or 0.
  llvm::SmallVector<mlir::Value> emitInitialAccumulators(mlir::OpBuilder &b,
                                                         mlir::Location loc,
                                                         int64_t kb) const;
  /// The FMAs of channel chunk `chunk` for channel block `kb` as an affine nest over
  /// (cc, r, s, [o,] kk[, o]) whose weights are computed from the induction variables
  /// (docs/design.md, "The FMAs as an affine nest"); `accs` in, out. The accumulators live
  /// in a private register array during the nest: `accs` are stored into it before and
  /// reloaded from it after, and unrollTemplateNests (UnrollNests.h) turns the whole into
  /// straight-line FMAs on SSA values.
  /// `tileBase` (BlockCoords::tileBase) adds a run-time offset to the tile's.
  /// With `direct` (readsInputsDirectly) the inputs come from global memory, not the tile.
  void emitChunkNest(mlir::OpBuilder &b, mlir::Location loc, mlir::Value tid, int64_t kb,
                     int64_t chunk, mlir::Value tile,
                     llvm::SmallVectorImpl<mlir::Value> &accs, int64_t tileOffset = 0,
                     mlir::Value tileBase = nullptr,
                     const DirectInputs *direct = nullptr) const;
  /// The word whose lo half is `lo`'s hi half and whose hi half is `hi`'s lo half (two
  /// vector<2 x half> words): an adjacent window's odd tap (setGpuJoins says how).
  mlir::Value joinHalves(mlir::OpBuilder &b, mlir::Location loc, mlir::Value lo,
                         mlir::Value hi) const;
  /// Direct inputs of thread `tid` (at `bc`) for channel block `kb` (or the block starting
  /// at output channel `kBase`); see DirectInputs.
  DirectInputs emitDirectInputs(mlir::OpBuilder &b, mlir::Location loc, mlir::Value tid,
                                const BlockCoords &bc, int64_t kb, mlir::Value input,
                                mlir::Value kBase = nullptr) const;
  /// Split chunks (Tiling::splitC): the accumulators of a group other than the first start
  /// at 0 (the bias is the first group's).
  llvm::SmallVector<mlir::Value> emitZeroAccumulators(mlir::OpBuilder &b, mlir::Location loc,
                                                      int64_t kb) const;
  /// Thread `tid` of group `group` (>= 1) writes its partial sums into the tiles; once every
  /// group has (a barrier), emitAddPartials adds them, in group order, to the first group's
  /// accumulators of the same thread.
  void emitWritePartials(mlir::OpBuilder &b, mlir::Location loc, mlir::Value group,
                         mlir::Value tid, llvm::ArrayRef<mlir::Value> accs,
                         mlir::Value tile) const;
  void emitAddPartials(mlir::OpBuilder &b, mlir::Location loc, mlir::Value tid,
                       llvm::SmallVectorImpl<mlir::Value> &accs, mlir::Value tile) const;
  /// Cluster split (Tiling::clusterSplit): every group g >= 1 of the cluster wrote its
  /// partial sums with emitWritePartials(group g mod splitC + 1) into its block's tile; the
  /// first group adds them in group order, those of block r = g / splitC > 0 read from that
  /// block's tile through distributed shared memory (mapa, ld.shared::cluster). The sums
  /// and roundings are emitAddPartials' at split-c splitC * clusterSplit.
  void emitAddClusterPartials(mlir::OpBuilder &b, mlir::Location loc, mlir::Value tid,
                              llvm::SmallVectorImpl<mlir::Value> &accs, mlir::Value tile) const;
  /// Stores the thread's outputs (after the residual, read at the same element, and the
  /// activation) where they fall inside the output.
  /// Channel kk of block `kb` goes to output channel kb * blockK + kk, or, when `kBase` is
  /// given (a block template, whose channel block is only known at run time), to
  /// kBase + kk, skipped when that is past K.
  void emitStore(mlir::OpBuilder &b, mlir::Location loc, mlir::Value tid, const BlockCoords &bc,
                 int64_t kb, llvm::ArrayRef<mlir::Value> accs, mlir::Value output,
                 mlir::Value kBase = nullptr) const;

  /// The element type of the conv's tensors: f32, f16 or bf16.
  mlir::Type elementType(mlir::OpBuilder &b) const;
  /// What one FMA lane computes on: f32, or a vector<2 x f16/bf16> word holding a pair of
  /// outputs (ConvShape::pairing). The staged tile, the partial sums and the accumulators
  /// are of this type.
  mlir::Type laneType(mlir::OpBuilder &b) const;
  /// The kernel's input and output memrefs: the conv's NCHW / NKPQ tensors of elementType,
  /// or, where a word's halves are adjacent in them (ConvShape::pairsWholeWords), the same
  /// bytes as the word shape's tensors of laneType: every access then moves a whole word.
  std::pair<mlir::MemRefType, mlir::MemRefType> tensorTypes(mlir::OpBuilder &b) const;
  /// The zero a masked input load yields: an element, or a whole word where the kernel
  /// loads whole words (ConvShape::pairsWholeWords).
  mlir::Value loadedZero(mlir::OpBuilder &b, mlir::Location loc) const;
  /// What a thread's sums are kept in between chunks: the lane type, or vector<2 x f32>
  /// where a half-precision kernel promotes each chunk's run (ConvShape::promotesRuns).
  mlir::Type accumulatorType(mlir::OpBuilder &b) const;
  /// `v` in every element of a lane.
  mlir::Value laneConstant(mlir::OpBuilder &b, mlir::Location loc, float v) const;
  /// `v` in every element of an accumulator.
  mlir::Value accumulatorConstant(mlir::OpBuilder &b, mlir::Location loc, float v) const;

private:
  /// Half precision: the word (lo, hi), and back.
  mlir::Value emitPack(mlir::OpBuilder &b, mlir::Location loc, mlir::Value lo,
                       mlir::Value hi) const;
  std::pair<mlir::Value, mlir::Value> emitUnpack(mlir::OpBuilder &b, mlir::Location loc,
                                                 mlir::Value word) const;
  /// Half precision: the pair of the word whose lo element is input (n, iy, ix), half the
  /// paired extent further along images, rows or columns. `n` is clamped; `iy`, `ix` are
  /// not (they may lie in the padding) and `y`, `x` are their clamped values; `inside` says
  /// whether lo lies inside the input (null: always). Staging and direct inputs read the
  /// pair through this one rule.
  PairedElement emitPairedElement(mlir::OpBuilder &b, mlir::Location loc, mlir::Value n,
                                  mlir::Value iy, mlir::Value ix, mlir::Value y, mlir::Value x,
                                  mlir::Value inside) const;
  /// The window's first input channel (null without groups: 0).
  mlir::Value emitWindowStart(mlir::OpBuilder &b, mlir::Location loc, int64_t kb,
                              mlir::Value kBase) const;
  /// The last block of a grouped conv whose block-k does not divide K has a window that
  /// runs past C.
  bool windowMayPassC() const { return shape.groups > 1 && shape.k % tiling.blockK != 0; }
  /// Tile index of the thread's first input in a channel plane.
  mlir::Value emitThreadBase(mlir::OpBuilder &b, mlir::Location loc, mlir::Value tid) const;
  /// Output columns from one thread of a row to the next (Tiling::columnOrder): 1 strided,
  /// outputsPerThread adjacent.
  int64_t columnsPerThreadStep() const;
  /// Output columns between a thread's output o and o + 1: threadsQ strided, 1 adjacent.
  int64_t columnDistance() const;

  ConvShape shape;
  Tiling tiling;
  KernelGeometry geom;
  bool asyncStaging = false;
  bool gpuJoins = false;
  mlir::Value residual;
};

/// Checks what every template lowering needs and reports a located error otherwise.
mlir::LogicalResult checkLowerable(class Conv2DOp op);
} // namespace spconv

#endif
