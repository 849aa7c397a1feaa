//===- ConvTemplate.cpp - direct-convolution template body ----------------===//
#include "spconv/Conversion/ConvTemplate/ConvTemplate.h"
#include "spconv/Conversion/ConvTemplate/Placeholder.h"
#include "spconv/Dialect/Spconv/IR/SpconvOps.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace spconv;

static Value cst(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

Type ConvTemplateEmitter::elementType(OpBuilder &b) const {
  switch (shape.precision) {
  case Precision::f16:
    return b.getF16Type();
  case Precision::bf16:
    return b.getBF16Type();
  case Precision::f32:
    break;
  }
  return b.getF32Type();
}

Type ConvTemplateEmitter::laneType(OpBuilder &b) const {
  Type elem = elementType(b);
  return shape.isHalf() ? Type(VectorType::get({2}, elem)) : elem;
}

std::pair<MemRefType, MemRefType> ConvTemplateEmitter::tensorTypes(OpBuilder &b) const {
  ConvShape t = shape.pairsWholeWords() ? shape : shape.logical();
  Type elem = shape.pairsWholeWords() ? laneType(b) : elementType(b);
  return {MemRefType::get({t.n, t.c, t.h, t.w}, elem),
          MemRefType::get({t.n, t.k, t.p, t.q}, elem)};
}

Value ConvTemplateEmitter::loadedZero(OpBuilder &b, Location loc) const {
  if (shape.pairsWholeWords())
    return laneConstant(b, loc, 0.0f);
  return arith::ConstantOp::create(b, loc, b.getZeroAttr(elementType(b)));
}

Value ConvTemplateEmitter::laneConstant(OpBuilder &b, Location loc, float v) const {
  if (!shape.isHalf())
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
  auto type = llvm::cast<VectorType>(laneType(b));
  return arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(type, b.getFloatAttr(type.getElementType(), v)));
}

Type ConvTemplateEmitter::accumulatorType(OpBuilder &b) const {
  return shape.promotesRuns() ? Type(VectorType::get({2}, b.getF32Type())) : laneType(b);
}

Value ConvTemplateEmitter::accumulatorConstant(OpBuilder &b, Location loc, float v) const {
  if (!shape.promotesRuns())
    return laneConstant(b, loc, v);
  auto type = llvm::cast<VectorType>(accumulatorType(b));
  return arith::ConstantOp::create(b, loc, DenseElementsAttr::get(type, b.getF32FloatAttr(v)));
}

/// The vector<2 x half> whose bits are `word` (the lo half element 0).
static Value halfWordConstant(OpBuilder &b, Location loc, VectorType type, uint32_t word) {
  const llvm::fltSemantics &sem =
      llvm::cast<FloatType>(type.getElementType()).getFloatSemantics();
  SmallVector<APFloat, 2> halves{APFloat(sem, APInt(16, word & 0xFFFF)),
                                 APFloat(sem, APInt(16, word >> 16))};
  return arith::ConstantOp::create(b, loc, DenseElementsAttr::get(type, halves));
}

Value ConvTemplateEmitter::emitPack(OpBuilder &b, Location loc, Value lo, Value hi) const {
  Type i32 = b.getI32Type();
  Value v = LLVM::PoisonOp::create(b, loc, laneType(b));
  v = LLVM::InsertElementOp::create(b, loc, v, lo, LLVM::ConstantOp::create(b, loc, i32, 0));
  return LLVM::InsertElementOp::create(b, loc, v, hi, LLVM::ConstantOp::create(b, loc, i32, 1));
}

std::pair<Value, Value> ConvTemplateEmitter::emitUnpack(OpBuilder &b, Location loc,
                                                        Value word) const {
  Type i32 = b.getI32Type();
  return {LLVM::ExtractElementOp::create(b, loc, word, LLVM::ConstantOp::create(b, loc, i32, 0)),
          LLVM::ExtractElementOp::create(b, loc, word, LLVM::ConstantOp::create(b, loc, i32, 1))};
}

BlockCoords ConvTemplateEmitter::emitBlockCoords(OpBuilder &b, Location loc, Value tileIdx,
                                                 Value n) const {
  Value tilesQ = cst(b, loc, geom.tilesQ);
  Value tp = arith::DivUIOp::create(b, loc, tileIdx, tilesQ);
  Value tq = arith::RemUIOp::create(b, loc, tileIdx, tilesQ);
  Value p0 = arith::MulIOp::create(b, loc, tp, cst(b, loc, tiling.tileP));
  Value q0 = arith::MulIOp::create(b, loc, tq, cst(b, loc, tiling.tileQ()));
  Value n0 = geom.imagesPerBlock > 1
                 ? arith::MulIOp::create(b, loc, n, cst(b, loc, geom.imagesPerBlock)).getResult()
                 : n;
  return {n0, p0, q0};
}

std::pair<Value, BlockCoords> ConvTemplateEmitter::emitImageCoords(OpBuilder &b, Location loc,
                                                                   Value blockTid,
                                                                   const BlockCoords &bc) const {
  if (geom.imagesPerBlock == 1)
    return {blockTid, bc};
  Value threads = cst(b, loc, tiling.threads());
  Value image = arith::DivUIOp::create(b, loc, blockTid, threads);
  Value tid = arith::RemUIOp::create(b, loc, blockTid, threads);
  BlockCoords coords = bc;
  coords.n = arith::AddIOp::create(b, loc, bc.n, image);
  coords.tileBase = arith::MulIOp::create(b, loc, image, cst(b, loc, geom.sharedFloats));
  if (shape.n % geom.imagesPerBlock != 0)
    coords.nOk = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, coords.n,
                                       cst(b, loc, shape.n));
  return {tid, coords};
}

/// 0 <= v < hi, `zero` the index 0.
static Value emitInRange(OpBuilder &b, Location loc, Value v, Value zero, int64_t hi) {
  return arith::AndIOp::create(
      b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, v, zero),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, v, cst(b, loc, hi)));
}

/// v clamped to [0, hi).
static Value emitClamp(OpBuilder &b, Location loc, Value v, Value zero, int64_t hi) {
  return arith::MinSIOp::create(b, loc, arith::MaxSIOp::create(b, loc, v, zero),
                                cst(b, loc, hi - 1));
}

Value ConvTemplateEmitter::emitWindowStart(OpBuilder &b, Location loc, int64_t kb,
                                           Value kBase) const {
  // First input channel of the block's window: (first output channel / kpg) * cpg.
  if (shape.groups == 1)
    return nullptr;
  Value k0 = kBase ? kBase : cst(b, loc, kb * tiling.blockK);
  return arith::MulIOp::create(b, loc,
                               arith::DivUIOp::create(b, loc, k0, cst(b, loc, shape.kpg())),
                               cst(b, loc, shape.cpg()));
}

DirectInputs ConvTemplateEmitter::emitDirectInputs(OpBuilder &b, Location loc, Value tid,
                                                   const BlockCoords &bc, int64_t kb,
                                                   Value input, Value kBase) const {
  DirectInputs d;
  // The thread's output position, and the input element a 1x1 filter reads for it.
  Value tq = cst(b, loc, tiling.threadsQ);
  Value p = arith::AddIOp::create(b, loc, bc.p0, arith::DivUIOp::create(b, loc, tid, tq));
  Value q = arith::AddIOp::create(b, loc, bc.q0, arith::RemUIOp::create(b, loc, tid, tq));
  Value iy = arith::SubIOp::create(
      b, loc, arith::MulIOp::create(b, loc, p, cst(b, loc, shape.sh)), cst(b, loc, shape.pt));
  Value ix = arith::SubIOp::create(
      b, loc, arith::MulIOp::create(b, loc, q, cst(b, loc, shape.sw)), cst(b, loc, shape.pl));
  Value zero = cst(b, loc, 0);
  auto inRange = [&](Value v, int64_t hi) { return emitInRange(b, loc, v, zero, hi); };
  auto clamp = [&](Value v, int64_t hi) { return emitClamp(b, loc, v, zero, hi); };
  // Without padding every stored output reads inside the input; threads past P or Q (a
  // partial tile) and packed images past the batch read a clamped element they never store.
  if (shape.pt || shape.pb || shape.pl || shape.pr)
    d.inside = arith::AndIOp::create(b, loc, inRange(iy, shape.h), inRange(ix, shape.w));
  d.input = input;
  d.n = bc.nOk ? clamp(bc.n, shape.n) : bc.n;
  d.y = clamp(iy, shape.h);
  d.x = clamp(ix, shape.w);
  d.cBase = emitWindowStart(b, loc, kb, kBase);
  if (shape.gathersPairs())
    d.hi = emitPairedElement(b, loc, d.n, iy, ix, d.y, d.x, d.inside);
  return d;
}

PairedElement ConvTemplateEmitter::emitPairedElement(OpBuilder &b, Location loc, Value n,
                                                     Value iy, Value ix, Value y, Value x,
                                                     Value inside) const {
  Value zero = cst(b, loc, 0);
  auto inRange = [&](Value v, int64_t hi) { return emitInRange(b, loc, v, zero, hi); };
  auto clamp = [&](Value v, int64_t hi) { return emitClamp(b, loc, v, zero, hi); };
  auto both = [&](Value a, Value c) -> Value {
    return a ? arith::AndIOp::create(b, loc, a, c).getResult() : c;
  };
  PairedElement p{n, y, x, inside};
  if (shape.pairing == Pairing::images) {
    Value n2 = arith::AddIOp::create(b, loc, n, cst(b, loc, shape.n));
    int64_t images = shape.logical().n;
    p.ok = both(inside, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, n2,
                                              cst(b, loc, images)));
    p.n = clamp(n2, images);
  } else if (shape.pairing == Pairing::rows) {
    Value iy2 = arith::AddIOp::create(b, loc, iy, cst(b, loc, shape.p * shape.sh));
    p.ok = both(inRange(iy2, shape.h), inRange(ix, shape.w));
    p.y = clamp(iy2, shape.h);
  } else if (shape.pairing == Pairing::columns) {
    Value ix2 = arith::AddIOp::create(b, loc, ix, cst(b, loc, shape.q * shape.sw));
    p.ok = both(inRange(iy, shape.h), inRange(ix2, shape.w));
    p.x = clamp(ix2, shape.w);
  }
  return p;
}

void ConvTemplateEmitter::emitStage(OpBuilder &b, Location loc, Value tid, const BlockCoords &bc,
                                    int64_t kb, int64_t chunk, Value input, Value tile,
                                    Value kBase, int64_t tileOffset,
                                    ArrayRef<Value> ahead) const {
  int64_t c0 = chunk * tiling.chunkC;
  emitStage(b, loc, tid, bc, kb, cst(b, loc, c0), std::min(tiling.chunkC, geom.windowC - c0),
            input, tile, kBase, tileOffset, /*wait=*/true, ahead);
}

SmallVector<Value> ConvTemplateEmitter::emitStageLoadsAhead(OpBuilder &b, Location loc,
                                                            Value tid, const BlockCoords &bc,
                                                            int64_t kb, int64_t chunk,
                                                            Value input, Value kBase) const {
  SmallVector<Value> ahead;
  // chooseTiling keeps loadAhead only where this holds: the first tile position is every
  // thread's (no scf.if around it, whose values could not reach the stores after the
  // barrier; loading later positions too held more registers and ran slower, round 44b).
  if (tiling.loadAhead <= 0 || asyncStaging || tiling.readsInputsDirectly() ||
      geom.inTileH * geom.inTileW < tiling.threads())
    return ahead;
  int64_t c0 = chunk * tiling.chunkC;
  int64_t channels = std::min(tiling.chunkC, geom.windowC - c0);
  emitStage(b, loc, tid, bc, kb, cst(b, loc, c0), channels, input, /*tile=*/nullptr, kBase,
            /*tileOffset=*/0, /*wait=*/false, /*ahead=*/{}, &ahead);
  return ahead;
}

void ConvTemplateEmitter::emitStageWait(OpBuilder &b, Location loc) const {
  if (asyncStaging)
    NVVM::CpAsyncWaitGroupOp::create(b, loc, 0);
}

void ConvTemplateEmitter::emitStageIntoBuffer(OpBuilder &b, Location loc, Value tid,
                                              const BlockCoords &bc, int64_t kb, Value chunk,
                                              int64_t first, int64_t loopEnd, Value input,
                                              Value tile, Value kBase,
                                              int64_t tileOffset) const {
  Value more = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, chunk, cst(b, loc, loopEnd));
  auto ifMore = scf::IfOp::create(b, loc, more, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifMore.thenBlock());
  // The buffer's offset joins the tile base the stage adds to every store.
  Value parity = arith::RemUIOp::create(
      b, loc, arith::SubIOp::create(b, loc, chunk, cst(b, loc, first)), cst(b, loc, 2));
  Value offset = arith::MulIOp::create(b, loc, parity, cst(b, loc, geom.bufferFloats));
  BlockCoords coords = bc;
  coords.tileBase = bc.tileBase ? arith::AddIOp::create(b, loc, bc.tileBase, offset).getResult()
                                : offset;
  emitStage(b, loc, tid, coords, kb,
            arith::MulIOp::create(b, loc, chunk, cst(b, loc, tiling.chunkC)), tiling.chunkC,
            input, tile, kBase, tileOffset, /*wait=*/false);
}

/// `memref` seen as the 32-bit words it holds: nvgpu.device_async_copy copies integers or
/// floats, and its verifier takes a vector<2 x half> element for neither (it asks the element
/// type its bit width). The cast changes no byte: both memref types lower to the same
/// descriptor, and reconcile-unrealized-casts removes the cast after convert-gpu-to-nvvm
/// (buildNVVMTemplate). Other memrefs are returned as they are.
static Value asWords(OpBuilder &b, Location loc, Value memref) {
  auto type = llvm::cast<MemRefType>(memref.getType());
  if (!llvm::isa<VectorType>(type.getElementType()))
    return memref;
  auto words =
      MemRefType::get(type.getShape(), b.getI32Type(), type.getLayout(), type.getMemorySpace());
  return UnrealizedConversionCastOp::create(b, loc, TypeRange{words}, ValueRange{memref})
      .getResult(0);
}

void ConvTemplateEmitter::emitStage(OpBuilder &b, Location loc, Value tid, const BlockCoords &bc,
                                    int64_t kb, Value c0, int64_t chunkChannels, Value input,
                                    Value tile, Value kBase, int64_t tileOffset, bool wait,
                                    ArrayRef<Value> ahead,
                                    SmallVectorImpl<Value> *loadOnly) const {
  // Direct inputs are read where they are used (emitChunkNest).
  if (tiling.readsInputsDirectly())
    return;
  Value cBase = emitWindowStart(b, loc, kb, kBase);
  // The last block of a grouped conv whose block-k does not divide K has a window that
  // runs past C: those channels are staged as 0 (their output channels are never stored).
  bool guardC = windowMayPassC();
  int64_t plane = geom.inTileH * geom.inTileW;
  int64_t threads = tiling.threads();
  // Positions outside, channels inside (docs/tuning-log.md, "Staging by position"): thread
  // `tid` owns tile positions tid, tid + threads, ... of the plane and stages every channel
  // of the chunk at each. The row, column, bounds test and clamped input offset of a position
  // are computed once per chunk; each channel then costs a load at a constant distance
  // (H x W floats) from the previous, a select for the padding and a store (plane floats
  // apart): about 3 instructions an element where dividing every element's index out cost
  // about 25. Consecutive lanes take consecutive positions: loads coalesce along a tile row,
  // stores hit consecutive banks. A batch of loads is issued before its stores, so a thread
  // has that many in flight (docs/tuning-log.md, "Staging").
  int64_t batch = std::min(geom.stageBatch, chunkChannels);
  // Channel vectors: the chunk's first vectorChannels channels lie in groups of `vector`.
  int64_t vector = tiling.channelsPerLoad();
  int64_t vectorChannels = chunkChannels / vector * vector;
  // Top-left input coordinate of the tile (may be negative inside the padding).
  Value y0 = arith::SubIOp::create(
      b, loc, arith::MulIOp::create(b, loc, bc.p0, cst(b, loc, shape.sh)), cst(b, loc, shape.pt));
  Value x0 = arith::SubIOp::create(
      b, loc, arith::MulIOp::create(b, loc, bc.q0, cst(b, loc, shape.sw)),
      cst(b, loc, geom.overhangW));
  Value zero = cst(b, loc, 0);
  auto scaled = [&](Value v, int64_t step) -> Value {
    return step == 1 ? v : arith::MulIOp::create(b, loc, v, cst(b, loc, step)).getResult();
  };
  auto inRange = [&](Value v, int64_t hi) { return emitInRange(b, loc, v, zero, hi); };
  auto clamp = [&](Value v, int64_t hi) { return emitClamp(b, loc, v, zero, hi); };
  Value fzero = loadedZero(b, loc);
  // A packed image past the batch (BlockCoords::nOk) stages the last image: never stored.
  Value imageIndex = bc.nOk ? clamp(bc.n, shape.n) : bc.n;
  Value cStart = cBase ? arith::AddIOp::create(b, loc, c0, cBase).getResult() : c0;
  Value dstBase = cst(b, loc, tileOffset);
  if (bc.tileBase)
    dstBase = arith::AddIOp::create(b, loc, dstBase, bc.tileBase);
  // Whole words (ConvShape::pairsWholeWords) are copied as i32: one 4-byte cp.async a word.
  Value copiedInput = asyncStaging ? asWords(b, loc, input) : input;
  Value copiedTile = asyncStaging ? asWords(b, loc, tile) : tile;

  for (int64_t first = 0; first < plane; first += threads) {
    OpBuilder::InsertionGuard guard(b);
    Value pos = first ? arith::AddIOp::create(b, loc, tid, cst(b, loc, first)).getResult() : tid;
    if (first + threads > plane) {
      // The plane's last positions: the threads past its end have none.
      Value has = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, pos, cst(b, loc, plane));
      auto ifOp = scf::IfOp::create(b, loc, has, /*withElseRegion=*/false);
      b.setInsertionPointToStart(ifOp.thenBlock());
    }
    Value y = arith::DivUIOp::create(b, loc, pos, cst(b, loc, geom.inTileW));
    Value x = arith::RemUIOp::create(b, loc, pos, cst(b, loc, geom.inTileW));
    Value iy = arith::AddIOp::create(b, loc, y0, scaled(y, geom.stageStepH));
    Value ix = arith::AddIOp::create(b, loc, x0, scaled(x, geom.stageStepW));
    Value inside = arith::AndIOp::create(b, loc, inRange(iy, shape.h), inRange(ix, shape.w));
    Value iyc = clamp(iy, shape.h), ixc = clamp(ix, shape.w);
    Value dst = arith::AddIOp::create(b, loc, dstBase, pos);
    // Channel vectors (Tiling::channelVector): where channel `cc` of this position lies.
    Value dstVector;
    if (vector > 1)
      dstVector = arith::AddIOp::create(b, loc, dstBase,
                                        arith::MulIOp::create(b, loc, pos, cst(b, loc, vector)));
    auto tileIndex = [&](Value cc) -> Value {
      auto plain = [&]() -> Value {
        return arith::AddIOp::create(b, loc, dst,
                                     arith::MulIOp::create(b, loc, cc, cst(b, loc, plane)));
      };
      if (vector == 1)
        return plain();
      Value lane = arith::RemUIOp::create(b, loc, cc, cst(b, loc, vector));
      Value first = arith::SubIOp::create(b, loc, cc, lane);
      Value grouped =
          arith::AddIOp::create(b, loc, arith::AddIOp::create(b, loc, dstVector, lane),
                                arith::MulIOp::create(b, loc, first, cst(b, loc, plane)));
      if (vectorChannels == chunkChannels)
        return grouped;
      Value inGroup =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, cc, cst(b, loc, vectorChannels));
      return arith::SelectOp::create(b, loc, inGroup, grouped, plain());
    };
    // Half precision: a tile word holds the element the word shape stages (lo) and its pair
    // (hi).
    PairedElement hiAt;
    if (shape.gathersPairs())
      hiAt = emitPairedElement(b, loc, imageIndex, iy, ix, iyc, ixc, inside);
    // Asynchronous staging: one cp.async per element (per word in half precision), reading 1
    // element where the position is inside the input and 0 (a zero fill) in the padding.
    auto elementsRead = [&](Value ok) -> Value {
      return arith::SelectOp::create(b, loc, ok, cst(b, loc, 1), zero);
    };
    Value insideElements = asyncStaging && !guardC ? elementsRead(inside) : Value();
    // Register staging: channel `cc`'s word of this position, 0 in the padding.
    auto loadChannel = [&](Value cc) -> Value {
      Value c = arith::AddIOp::create(b, loc, cStart, cc);
      Value ok = inside, okHi = hiAt.ok;
      if (guardC) {
        Value cOk =
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, c, cst(b, loc, shape.c));
        ok = arith::AndIOp::create(b, loc, ok, cOk);
        if (okHi)
          okHi = arith::AndIOp::create(b, loc, okHi, cOk);
        c = arith::MinUIOp::create(b, loc, c, cst(b, loc, shape.c - 1));
      }
      Value v = memref::LoadOp::create(b, loc, input, ValueRange{imageIndex, c, iyc, ixc});
      v = arith::SelectOp::create(b, loc, ok, v, fzero);
      if (shape.gathersPairs()) {
        Value hi = memref::LoadOp::create(b, loc, input, ValueRange{hiAt.n, c, hiAt.y, hiAt.x});
        v = emitPack(b, loc, v, arith::SelectOp::create(b, loc, okHi, hi, fzero));
      }
      return v;
    };
    // Channels [from, from + count) of the chunk, `from` an index value: loads, then stores.
    auto stageChannels = [&](Value from, int64_t count) {
      if (asyncStaging) {
        for (int64_t i = 0; i < count; ++i) {
          Value cc = i ? arith::AddIOp::create(b, loc, from, cst(b, loc, i)).getResult() : from;
          Value c = arith::AddIOp::create(b, loc, cStart, cc);
          Value read = insideElements;
          if (guardC) {
            read = elementsRead(arith::AndIOp::create(
                b, loc, inside,
                arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, c,
                                      cst(b, loc, shape.c))));
            c = arith::MinUIOp::create(b, loc, c, cst(b, loc, shape.c - 1));
          }
          Value at = tileIndex(cc);
          nvgpu::DeviceAsyncCopyOp::create(b, loc, copiedTile, ValueRange{at}, copiedInput,
                                           ValueRange{imageIndex, c, iyc, ixc},
                                           b.getIndexAttr(1), read, UnitAttr());
        }
        return;
      }
      SmallVector<Value> values;
      SmallVector<Value> rows;
      for (int64_t i = 0; i < count; ++i) {
        Value cc = i ? arith::AddIOp::create(b, loc, from, cst(b, loc, i)).getResult() : from;
        values.push_back(loadChannel(cc));
        rows.push_back(cc);
      }
      for (int64_t i = 0; i < count; ++i) {
        memref::StoreOp::create(b, loc, values[i], tile, ValueRange{tileIndex(rows[i])});
      }
    };
    // Loads ahead: the first position's first channels, loaded before the barrier
    // (emitStageLoadsAhead), are stored first; the batches stage the rest.
    int64_t start = 0;
    if (first == 0 && loadOnly) {
      for (int64_t i = 0, n = std::min(tiling.loadAhead, chunkChannels); i < n; ++i)
        loadOnly->push_back(loadChannel(cst(b, loc, i)));
      return;
    }
    if (first == 0 && !ahead.empty()) {
      for (size_t i = 0; i < ahead.size(); ++i)
        memref::StoreOp::create(b, loc, ahead[i], tile, ValueRange{tileIndex(cst(b, loc, i))});
      start = ahead.size();
    }
    Value from = start ? cst(b, loc, start) : zero;
    int64_t full = (chunkChannels - start) / batch * batch;
    if (full > batch) {
      auto loop =
          scf::ForOp::create(b, loc, from, cst(b, loc, start + full), cst(b, loc, batch));
      OpBuilder::InsertionGuard loopGuard(b);
      b.setInsertionPointToStart(loop.getBody());
      stageChannels(loop.getInductionVar(), batch);
    } else if (full == batch) {
      stageChannels(from, batch);
    }
    if (start + full < chunkChannels)
      stageChannels(cst(b, loc, start + full), chunkChannels - start - full);
  }
  if (asyncStaging) {
    // The thread's copies land before the barrier the caller puts after the stage.
    NVVM::CpAsyncCommitGroupOp::create(b, loc);
    if (wait)
      emitStageWait(b, loc);
  }
}

SmallVector<Value> ConvTemplateEmitter::emitChunkSwitch(
    OpBuilder &b, Location loc, Value j, int64_t first, int64_t last, TypeRange resultTypes,
    function_ref<SmallVector<Value>(int64_t chunk)> body) const {
  SmallVector<int64_t> cases;
  for (int64_t chunk = first; chunk + 1 < last; ++chunk)
    cases.push_back(chunk);
  auto sw = scf::IndexSwitchOp::create(b, loc, resultTypes, j, cases, cases.size());
  for (int64_t chunk = first; chunk < last; ++chunk) {
    OpBuilder::InsertionGuard guard(b);
    Region &region =
        chunk + 1 == last ? sw.getDefaultRegion() : sw.getCaseRegions()[chunk - first];
    b.setInsertionPointToStart(&region.emplaceBlock());
    scf::YieldOp::create(b, loc, body(chunk));
  }
  return SmallVector<Value>(sw.getResults());
}

int64_t ConvTemplateEmitter::numAccumulators(int64_t kb) const {
  int64_t kN = std::min(tiling.blockK, shape.k - kb * tiling.blockK);
  return kN * tiling.outputsPerThread;
}

SmallVector<Value> ConvTemplateEmitter::emitInitialAccumulators(OpBuilder &b, Location loc,
                                                                int64_t kb) const {
  SmallVector<Value> accs;
  int64_t kN = std::min(tiling.blockK, shape.k - kb * tiling.blockK);
  for (int64_t kk = 0; kk < kN; ++kk) {
    int64_t k = kb * tiling.blockK + kk;
    Value v;
    if (!shape.hasBias) {
      v = accumulatorConstant(b, loc, 0.0f);
    } else if (shape.isHalf()) {
      v = halfWordConstant(b, loc, llvm::cast<VectorType>(laneType(b)),
                           placeholder::halfBiasWord(k));
      // llvm.fpext, which no MLIR folder touches: the placeholder stays a half word
      // constant for spconv-fold-weights (an arith.extf could be folded to f32 values).
      if (shape.promotesRuns())
        v = LLVM::FPExtOp::create(b, loc, accumulatorType(b), v);
    } else
      v = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(placeholder::bias(k)));
    for (int64_t o = 0; o < tiling.outputsPerThread; ++o)
      accs.push_back(v);
  }
  return accs;
}

Value ConvTemplateEmitter::emitThreadBase(OpBuilder &b, Location loc, Value tid) const {
  // The thread's first input element in a channel plane; every load of a chunk adds a
  // constant to it, which the backend folds into the address.
  Value tq = cst(b, loc, tiling.threadsQ);
  Value ty = arith::DivUIOp::create(b, loc, tid, tq);
  Value tx = arith::RemUIOp::create(b, loc, tid, tq);
  return arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, ty, cst(b, loc, geom.tileStrideH * geom.inTileW)),
      arith::MulIOp::create(b, loc, tx, cst(b, loc, geom.tileStrideW * columnsPerThreadStep())));
}

int64_t ConvTemplateEmitter::columnsPerThreadStep() const {
  return tiling.adjacentColumns() ? tiling.outputsPerThread : 1;
}

int64_t ConvTemplateEmitter::columnDistance() const {
  return tiling.adjacentColumns() ? 1 : tiling.threadsQ;
}

Value ConvTemplateEmitter::joinHalves(OpBuilder &b, Location loc, Value lo, Value hi) const {
  if (!gpuJoins)
    return LLVM::ShuffleVectorOp::create(b, loc, lo, hi, ArrayRef<int32_t>{1, 2});
  // prmt's byte pool is {hi, lo} = bytes 7..0; selector 0x5432 takes bytes 5, 4 (hi's lo
  // half) over bytes 3, 2 (lo's hi half). On whole words NVPTX keeps one prmt.b32 and
  // both words in 32-bit registers; the shufflevector became a 16-bit load and a
  // mov.b32 {lo, hi} pack, and those 16-bit halves are what ptxas 13.0 mis-spilled.
  Type i32 = b.getI32Type();
  Value loWord = LLVM::BitcastOp::create(b, loc, i32, lo);
  Value hiWord = LLVM::BitcastOp::create(b, loc, i32, hi);
  Value selector = LLVM::ConstantOp::create(b, loc, i32, b.getI32IntegerAttr(0x5432));
  Value joined = NVVM::PermuteOp::create(b, loc, i32, loWord, hiWord, selector,
                                         NVVM::PermuteMode::DEFAULT);
  return LLVM::BitcastOp::create(b, loc, lo.getType(), joined);
}

void ConvTemplateEmitter::emitChunkNest(OpBuilder &b, Location loc, Value tid, int64_t kb,
                                        int64_t chunk, Value tile,
                                        SmallVectorImpl<Value> &accs, int64_t tileOffset,
                                        Value tileBase, const DirectInputs *direct) const {
  MLIRContext *ctx = b.getContext();
  int64_t opt = tiling.outputsPerThread;
  int64_t kLo = kb * tiling.blockK;
  int64_t kN = std::min(tiling.blockK, shape.k - kLo);
  int64_t c0 = chunk * tiling.chunkC;
  int64_t chunkChannels = std::min(tiling.chunkC, geom.windowC - c0);
  int64_t plane = geom.inTileH * geom.inTileW;
  int64_t cpg = shape.cpg(), kpg = shape.kpg();
  Type lane = laneType(b);
  // The thread's tile index; direct inputs read no tile.
  Value base;
  // Channel vectors (Tiling::channelVector): the thread's first word of the chunk's
  // interleaved channel groups.
  int64_t vector = tiling.channelsPerLoad();
  assert((vector == 1 || (!direct && opt == 1)) &&
         "chooseTiling keeps channel vectors to staged inputs with one output a thread");
  Value vectorBase;
  if (!direct) {
    base = emitThreadBase(b, loc, tid);
    Value tileStart;
    if (tileOffset)
      tileStart = cst(b, loc, tileOffset);
    if (tileBase)
      tileStart =
          tileStart ? arith::AddIOp::create(b, loc, tileStart, tileBase).getResult() : tileBase;
    if (vector > 1) {
      vectorBase = arith::MulIOp::create(b, loc, base, cst(b, loc, vector));
      if (tileStart)
        vectorBase = arith::AddIOp::create(b, loc, vectorBase, tileStart);
    }
    if (tileStart)
      base = arith::AddIOp::create(b, loc, base, tileStart);
  }

  // Private register arrays: the accumulators (kk, o) and, with several outputs per thread,
  // the inputs of one (c, r, s) (o), or with adjacent columns those of one (c, r) row (its
  // window). Once the nest is fully unrolled every access has constant indices, and unrollTemplateNests forwards stores to loads so that neither array
  // is left in memory. With one output per thread there is no o loop (it would have one
  // iteration, and unrolling big templates is paid per op): the input is an SSA value.
  auto accType = MemRefType::get({kN, opt}, lane);
  // Bounded runs (ConvShape::promotesRuns): this chunk's products accumulate in half
  // precision from 0, and the run is added to the f32 sums after the nest.
  SmallVector<Value> sums;
  if (shape.promotesRuns()) {
    sums.assign(accs.begin(), accs.end());
    std::fill(accs.begin(), accs.end(), laneConstant(b, loc, 0.0f));
  }
  Value accBuf = memref::AllocaOp::create(b, loc, accType);
  // Adjacent pairs under a wider filter (ConvShape::pairsAdjacentWindow) read the window of
  // each row through it too, with one output a thread as well.
  bool wordWindow = shape.pairsAdjacentWindow();
  Value inBuf;
  if (opt > 1 || wordWindow)
    inBuf = memref::AllocaOp::create(
        b, loc,
        MemRefType::get({tiling.adjacentColumns() || wordWindow ? geom.rowLoads : opt}, lane));
  // The tap's input of each output (wordWindow with several outputs a thread).
  Value tapBuf;
  if (wordWindow && opt > 1)
    tapBuf = memref::AllocaOp::create(b, loc, MemRefType::get({opt}, lane));
  auto constMap = [&](int64_t i, int64_t j) {
    return AffineMap::get(0, 0, {getAffineConstantExpr(i, ctx), getAffineConstantExpr(j, ctx)},
                          ctx);
  };
  for (int64_t kk = 0; kk < kN; ++kk)
    for (int64_t o = 0; o < opt; ++o)
      affine::AffineStoreOp::create(b, loc, accs[kk * opt + o], accBuf, constMap(kk, o),
                                    ValueRange{});

  AffineExpr dCc = getAffineDimExpr(0, ctx), dR = getAffineDimExpr(1, ctx),
             dS = getAffineDimExpr(2, ctx), d3 = getAffineDimExpr(3, ctx);
  // cw: the input channel's position in the channel block's window.
  AffineExpr cw = dCc + c0;
  // Tile offset of input (cc, r, s) for output o (d3), relative to the thread's base.
  AffineExpr off = dCc * plane + dR * (shape.dh * geom.inTileW) + dS * shape.dw;
  AffineMap offMap =
      opt > 1 ? AffineMap::get(4, 0, off + d3 * (columnDistance() * geom.tileStrideW))
              : AffineMap::get(3, 0, off);
  // Adjacent columns: input j of the thread's window in row (cc, r), and where output o's
  // input for s lies in that window.
  bool adjacent = tiling.adjacentColumns();
  AffineExpr dJ = getAffineDimExpr(2, ctx), dO = getAffineDimExpr(0, ctx);
  AffineMap windowOffMap =
      AffineMap::get(3, 0, dCc * plane + dR * (shape.dh * geom.inTileW) + dJ);
  AffineMap windowIndexMap =
      AffineMap::get(2, 0, dO * geom.tileStrideW + getAffineDimExpr(1, ctx) * shape.dw);
  // The placeholder bits of weight (kLo + kk (d3), cw % cpg, r, s): the f32 with bits
  // kWeightBits | (widx + 1) for its flat KCRS index widx (Placeholder.h); widx + 1 < 2^22,
  // so the or is an add. Without groups cw < C = cpg.
  AffineExpr cInGroup = shape.groups > 1 ? cw % cpg : cw;
  AffineExpr widx = (((d3 + kLo) * cpg + cInGroup) * shape.r + dR) * shape.s + dS;
  // Half precision: the word placeholder::halfWeightWord(widx), both halves normal.
  int64_t payload = int64_t(1) << placeholder::kHalfPayloadBits;
  int64_t payloadBase = placeholder::kHalfPayloadBase;
  AffineExpr bits = shape.isHalf() ? (widx.floorDiv(payload) + payloadBase) * 65536 +
                                         widx % payload + payloadBase
                        : widx + (int64_t(placeholder::kWeightBits) + 1);
  AffineMap bitsMap = AffineMap::get(4, 0, bits);
  // acc[kk, o], or acc[kk, 0] without an o loop.
  AffineMap accMap = opt > 1 ? AffineMap::getMultiDimIdentityMap(2, ctx)
                             : AffineMap::get(1, 0, {dCc, getAffineConstantExpr(0, ctx)}, ctx);

  auto loopOver = [&](int64_t n, function_ref<void(Value)> body) {
    if (n <= 0) // (nothing to emit: no empty loop for the unroller)
      return;
    auto loop = affine::AffineForOp::create(b, loc, 0, n);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    body(loop.getInductionVar());
  };
  // The FMAs of weight (cc, r, s, kk) for each of the thread's outputs, `inputOf(o)` the
  // input of output o (o null without an o loop).
  auto emitWeightLoop = [&](Value cc, Value r, Value s, function_ref<Value(Value)> inputOf) {
    // Groups: only output channels of window channel cw's group have weights for it,
    // kLo + kk in [g * kpg, (g + 1) * kpg) with g = kLo / kpg + cw / cpg (without
    // groups, cpg = C and kpg = K make that every kk). Cross-group FMAs are never emitted.
    AffineMap lbMap = AffineMap::getConstantMap(0, ctx);
    AffineMap ubMap = AffineMap::getConstantMap(kN, ctx);
    SmallVector<Value> boundOperands;
    if (shape.groups > 1) {
      AffineExpr g = (getAffineDimExpr(0, ctx) + c0).floorDiv(cpg);
      int64_t k0 = kLo / kpg * kpg - kLo; // first channel of the block's first group
      lbMap = AffineMap::get(1, 0, {getAffineConstantExpr(0, ctx), g * kpg + k0}, ctx);
      ubMap = AffineMap::get(1, 0, {getAffineConstantExpr(kN, ctx), g * kpg + (k0 + kpg)},
                             ctx);
      boundOperands.push_back(cc);
    }
    auto kLoop = affine::AffineForOp::create(b, loc, boundOperands, lbMap, boundOperands, ubMap);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(kLoop.getBody());
    Value kk = kLoop.getInductionVar();
    // The weight, from the IVs; constant IVs fold it to the placeholder immediate. (The
    // add of kWeightBits + 1 is in the map rather than an arith.addi on i32: one op less
    // per FMA to clone and fold, which is what unrolling costs.)
    Value bits = affine::AffineApplyOp::create(b, loc, bitsMap, ValueRange{cc, r, s, kk});
    Value bitsI32 = arith::IndexCastOp::create(b, loc, b.getI32Type(), bits);
    // (arith.bitcast cannot make a vector of a scalar; llvm.bitcast can.)
    Value w = shape.isHalf() ? LLVM::BitcastOp::create(b, loc, lane, bitsI32).getResult()
                             : arith::BitcastOp::create(b, loc, lane, bitsI32).getResult();
    auto fma = [&](Value o) {
      SmallVector<Value, 2> idx{kk};
      if (o)
        idx.push_back(o);
      Value in = inputOf(o);
      Value acc = affine::AffineLoadOp::create(b, loc, accBuf, accMap, idx);
      // llvm.intr.fma rather than math.fma: the latter becomes a libdevice call on NVVM.
      Value sum = LLVM::FMAOp::create(b, loc, in, w, acc);
      affine::AffineStoreOp::create(b, loc, sum, accBuf, accMap, idx);
    };
    if (opt > 1)
      loopOver(opt, fma);
    else
      fma(nullptr);
  };
  // One shared load per input, reused by every channel of the block. The address is arith on
  // an affine.apply of the IVs, not an affine.load: the base comes from gpu.thread_id, which
  // is not a valid affine symbol inside gpu.func (no affine scope), and the tile is read by
  // other threads (memref.load keeps it an ordinary shared-memory access for the unroller to
  // leave alone).
  auto loadTile = [&](AffineMap map, ValueRange ivs) -> Value {
    Value offset = affine::AffineApplyOp::create(b, loc, map, ivs);
    return memref::LoadOp::create(b, loc, tile,
                                  ValueRange{arith::AddIOp::create(b, loc, base, offset)});
  };
  // Direct inputs (a 1x1 filter, one output a thread): channel cc of the chunk from global
  // memory, H x W elements after channel cc - 1, 0 in the padding.
  Value paddingZero;
  if (direct && (direct->inside || direct->hi.ok))
    paddingZero = loadedZero(b, loc);
  auto loadDirect = [&](Value cc) -> Value {
    Value c = affine::AffineApplyOp::create(b, loc, AffineMap::get(1, 0, dCc + c0),
                                            ValueRange{cc});
    if (direct->cBase)
      c = arith::AddIOp::create(b, loc, direct->cBase, c);
    if (windowMayPassC())
      c = arith::MinUIOp::create(b, loc, c, cst(b, loc, shape.c - 1));
    Value v = memref::LoadOp::create(b, loc, direct->input,
                                     ValueRange{direct->n, c, direct->y, direct->x});
    if (direct->inside)
      v = arith::SelectOp::create(b, loc, direct->inside, v, paddingZero);
    if (!shape.gathersPairs())
      return v;
    const PairedElement &at = direct->hi;
    Value hi = memref::LoadOp::create(b, loc, direct->input, ValueRange{at.n, c, at.y, at.x});
    if (at.ok)
      hi = arith::SelectOp::create(b, loc, at.ok, hi, paddingZero);
    return emitPack(b, loc, v, hi);
  };
  // Channel vectors: the chunk's full groups of `vector` channels, one load of a group's
  // words per (r, s) (consecutive words: the backend's load-store vectorizer makes it one
  // ld.shared.v2/.v4), then each channel's FMAs; the channels past the last full group
  // after them, from planes of their own.
  int64_t vectorChannels = vector > 1 ? chunkChannels / vector * vector : 0;
  // The V consecutive words of one channel group at vectorBase + map(ivs), appended to
  // `words` (the backend's load-store vectorizer makes them one load), and channel i of a
  // group.
  auto loadGroupWords = [&](AffineMap map, ValueRange ivs, SmallVectorImpl<Value> &words) {
    Value at =
        arith::AddIOp::create(b, loc, vectorBase, affine::AffineApplyOp::create(b, loc, map, ivs));
    for (int64_t i = 0; i < vector; ++i)
      words.push_back(memref::LoadOp::create(
          b, loc, tile,
          ValueRange{i ? arith::AddIOp::create(b, loc, at, cst(b, loc, i)).getResult() : at}));
  };
  auto groupChannel = [&](Value group, int64_t i) -> Value {
    return affine::AffineApplyOp::create(b, loc, AffineMap::get(1, 0, dCc * vector + i),
                                         ValueRange{group});
  };
  if (vectorChannels > 0 && wordWindow) {
    // Adjacent windows: per row, each window word of the group's V channels in one load,
    // then channel by channel the row's taps, odd ones joined as below.
    AffineMap groupWordMap = AffineMap::get(
        3, 0, dCc * (vector * plane) + (dR * (shape.dh * geom.inTileW) + dJ) * vector);
    ConvShape::WordWindow win = shape.adjacentWindow();
    loopOver(vectorChannels / vector, [&](Value group) {
      loopOver(shape.r, [&](Value r) {
        // words[j * vector + i]: window word j of the group's channel i.
        SmallVector<Value> words;
        for (int64_t j = 0; j < geom.rowLoads; ++j)
          loadGroupWords(groupWordMap, ValueRange{group, r, cst(b, loc, j)}, words);
        for (int64_t i = 0; i < vector; ++i) {
          Value cc = groupChannel(group, i);
          for (int64_t sIdx = 0; sIdx < shape.s; ++sIdx) {
            int64_t e = sIdx * shape.dw - shape.pl;
            int64_t at = llvm::divideFloorSigned(e, 2) - win.first;
            Value x = words[at * vector + i];
            if (e % 2 != 0)
              x = joinHalves(b, loc, x, words[(at + 1) * vector + i]);
            emitWeightLoop(cc, r, arith::ConstantIndexOp::create(b, loc, sIdx),
                           [&](Value) -> Value { return x; });
          }
        }
      });
    });
  } else if (vectorChannels > 0) {
    AffineMap groupMap = AffineMap::get(
        3, 0, dCc * (vector * plane) + (dR * (shape.dh * geom.inTileW) + dS * shape.dw) * vector);
    loopOver(vectorChannels / vector, [&](Value group) {
      loopOver(shape.r, [&](Value r) {
        loopOver(shape.s, [&](Value s) {
          SmallVector<Value, 4> words;
          loadGroupWords(groupMap, ValueRange{group, r, s}, words);
          for (int64_t i = 0; i < vector; ++i)
            emitWeightLoop(groupChannel(group, i), r, s, [&](Value) -> Value { return words[i]; });
        });
      });
    });
  }
  loopOver(chunkChannels - vectorChannels, [&](Value tailCc) {
    Value cc = vectorChannels
                   ? affine::AffineApplyOp::create(
                         b, loc, AffineMap::get(1, 0, dCc + vectorChannels), ValueRange{tailCc})
                         .getResult()
                   : tailCc;
    loopOver(shape.r, [&](Value r) {
      if (wordWindow) {
        // Adjacent pairs under a wider filter: the row's window of whole words once, then
        // for tap s (e = s * dw - pl) output o's word floor(e / 2) of its window, or, where e
        // is odd, the hi half of that word and the lo half of the next, joined once per tap
        // before the tap's FMAs (joinHalves).
        loopOver(geom.rowLoads, [&](Value j) {
          affine::AffineStoreOp::create(b, loc, loadTile(windowOffMap, {cc, r, j}), inBuf,
                                        ValueRange{j});
        });
        ConvShape::WordWindow win = shape.adjacentWindow();
        for (int64_t sIdx = 0; sIdx < shape.s; ++sIdx) {
          int64_t e = sIdx * shape.dw - shape.pl;
          int64_t at = llvm::divideFloorSigned(e, 2) - win.first;
          bool odd = e % 2 != 0;
          auto windowWord = [&](Value o, int64_t i) -> Value {
            if (!o)
              return affine::AffineLoadOp::create(
                  b, loc, inBuf, AffineMap::getConstantMap(at + i, ctx), ValueRange{});
            return affine::AffineLoadOp::create(b, loc, inBuf,
                                                AffineMap::get(1, 0, dO + (at + i)),
                                                ValueRange{o});
          };
          auto tapInput = [&](Value o) -> Value {
            Value lo = windowWord(o, 0);
            if (!odd)
              return lo;
            return joinHalves(b, loc, lo, windowWord(o, 1));
          };
          Value sv = arith::ConstantIndexOp::create(b, loc, sIdx);
          if (opt == 1) {
            Value x = tapInput(nullptr);
            emitWeightLoop(cc, r, sv, [&](Value) -> Value { return x; });
            continue;
          }
          // Several outputs a thread: the tap's inputs of each, then the FMAs.
          loopOver(opt, [&](Value o) {
            affine::AffineStoreOp::create(b, loc, tapInput(o), tapBuf, ValueRange{o});
          });
          emitWeightLoop(cc, r, sv, [&](Value o) -> Value {
            return affine::AffineLoadOp::create(b, loc, tapBuf, ValueRange{o});
          });
        }
        return;
      }
      if (adjacent) {
        // The thread's outputs are adjacent: load the window of row (cc, r) once, then
        // output o reads input o * tileStrideW + s * dw of it for tap s.
        loopOver(geom.rowLoads, [&](Value j) {
          affine::AffineStoreOp::create(b, loc, loadTile(windowOffMap, {cc, r, j}), inBuf,
                                        ValueRange{j});
        });
        loopOver(shape.s, [&](Value s) {
          emitWeightLoop(cc, r, s, [&](Value o) -> Value {
            return affine::AffineLoadOp::create(b, loc, inBuf, windowIndexMap,
                                                ValueRange{o, s});
          });
        });
        return;
      }
      loopOver(shape.s, [&](Value s) {
        Value x;
        if (opt > 1)
          loopOver(opt, [&](Value o) {
            affine::AffineStoreOp::create(b, loc, loadTile(offMap, {cc, r, s, o}), inBuf,
                                          ValueRange{o});
          });
        else
          x = direct ? loadDirect(cc) : loadTile(offMap, {cc, r, s});
        emitWeightLoop(cc, r, s, [&](Value o) -> Value {
          return o ? affine::AffineLoadOp::create(b, loc, inBuf, ValueRange{o}).getResult() : x;
        });
      });
    });
  });
  for (int64_t kk = 0; kk < kN; ++kk)
    for (int64_t o = 0; o < opt; ++o)
      accs[kk * opt + o] =
          affine::AffineLoadOp::create(b, loc, accBuf, constMap(kk, o), ValueRange{});
  if (shape.promotesRuns())
    for (size_t a = 0; a < accs.size(); ++a)
      accs[a] = arith::AddFOp::create(
          b, loc, sums[a], LLVM::FPExtOp::create(b, loc, accumulatorType(b), accs[a]));
}

SmallVector<Value> ConvTemplateEmitter::emitZeroAccumulators(OpBuilder &b, Location loc,
                                                             int64_t kb) const {
  return SmallVector<Value>(numAccumulators(kb), accumulatorConstant(b, loc, 0.0f));
}

/// Where partial sum `a` of thread `tid` of group `group` (>= 1) travels: the tiles, reused
/// once every group is done with them; consecutive threads at consecutive words.
static Value partialIndex(OpBuilder &b, Location loc, Value group, Value tid, int64_t a,
                          int64_t threads, int64_t numAccs) {
  Value slot = arith::MulIOp::create(
      b, loc, arith::SubIOp::create(b, loc, group, cst(b, loc, 1)), cst(b, loc, numAccs));
  slot = arith::AddIOp::create(b, loc, slot, cst(b, loc, a));
  return arith::AddIOp::create(b, loc, arith::MulIOp::create(b, loc, slot, cst(b, loc, threads)),
                               tid);
}

void ConvTemplateEmitter::emitWritePartials(OpBuilder &b, Location loc, Value group, Value tid,
                                            ArrayRef<Value> accs, Value tile) const {
  // f32 sums travel rounded to the tile's half words: one rounding per group, within the
  // stated bound (LaunchSidecar.cpp, numericsJson).
  for (size_t a = 0; a < accs.size(); ++a)
    memref::StoreOp::create(
        b, loc,
        shape.promotesRuns() ? LLVM::FPTruncOp::create(b, loc, laneType(b), accs[a]).getResult()
                             : accs[a],
        tile,
        ValueRange{partialIndex(b, loc, group, tid, a, tiling.threads(), accs.size())});
}

/// Adds to `accs` the partial sums group slot `group` (>= 1) of this block wrote, or with
/// `clusterRank` block clusterRank's of the cluster, read through distributed shared memory.
static void addPartials(OpBuilder &b, Location loc, const ConvTemplateEmitter &emitter,
                        int64_t group, Value tid, SmallVectorImpl<Value> &accs, Value tile,
                        std::optional<int64_t> clusterRank) {
  // The other block's word: the tile's shared address, mapped into that block's window.
  Value remoteBase;
  Type lane = emitter.laneType(b);
  if (clusterRank) {
    Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, tile);
    Value asInt = arith::IndexCastOp::create(b, loc, b.getI64Type(), base);
    remoteBase = NVVM::MapaOp::create(
        b, loc, LLVM::LLVMPointerType::get(b.getContext(), /*shared::cluster*/ 7),
        LLVM::IntToPtrOp::create(b, loc, LLVM::LLVMPointerType::get(b.getContext(), 3), asInt),
        arith::ConstantIntOp::create(b, loc, b.getI32Type(), *clusterRank));
  }
  for (size_t a = 0; a < accs.size(); ++a) {
    Value index = partialIndex(b, loc, cst(b, loc, group), tid, a, emitter.getTiling().threads(),
                               accs.size());
    Value p;
    if (remoteBase) {
      Value at = LLVM::GEPOp::create(
          b, loc, remoteBase.getType(), lane, remoteBase,
          ValueRange{arith::IndexCastOp::create(b, loc, b.getI64Type(), index)});
      p = LLVM::LoadOp::create(b, loc, lane, at);
    } else {
      p = memref::LoadOp::create(b, loc, tile, ValueRange{index});
    }
    if (emitter.getShape().promotesRuns())
      p = LLVM::FPExtOp::create(b, loc, emitter.accumulatorType(b), p);
    accs[a] = arith::AddFOp::create(b, loc, accs[a], p);
  }
}

void ConvTemplateEmitter::emitAddPartials(OpBuilder &b, Location loc, Value tid,
                                          SmallVectorImpl<Value> &accs, Value tile) const {
  for (int64_t g = 1; g < geom.splitC; ++g)
    addPartials(b, loc, *this, g, tid, accs, tile, std::nullopt);
}

void ConvTemplateEmitter::emitAddClusterPartials(OpBuilder &b, Location loc, Value tid,
                                                 SmallVectorImpl<Value> &accs, Value tile) const {
  for (int64_t g = 1; g < geom.numGroups(); ++g) {
    int64_t rank = g / geom.splitC, slot = g % geom.splitC + 1;
    addPartials(b, loc, *this, slot, tid, accs, tile,
                rank ? std::optional<int64_t>(rank) : std::nullopt);
  }
}

void ConvTemplateEmitter::emitStore(OpBuilder &b, Location loc, Value tid, const BlockCoords &bc,
                                    int64_t kb, ArrayRef<Value> accs, Value output,
                                    Value kBase) const {
  int64_t opt = tiling.outputsPerThread;
  int64_t kLo = kb * tiling.blockK;
  int64_t kN = std::min(tiling.blockK, shape.k - kLo);
  // A block template serves every channel block, the last one possibly partial: its
  // channels past K exist in the code but must not be stored.
  bool guardK = kBase && shape.k % tiling.blockK != 0;
  Value tq = cst(b, loc, tiling.threadsQ);
  Value ty = arith::DivUIOp::create(b, loc, tid, tq);
  Value tx = arith::RemUIOp::create(b, loc, tid, tq);
  Value p = arith::AddIOp::create(b, loc, bc.p0, ty);
  Value pOk = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, p, cst(b, loc, shape.p));
  if (bc.nOk)
    pOk = arith::AndIOp::create(b, loc, pOk, bc.nOk);
  Value zero = laneConstant(b, loc, 0.0f);
  Value six = laneConstant(b, loc, 6.0f);
  // Half precision: the hi half of each word goes half the paired extent further along
  // images, rows or columns, where that is inside the output.
  auto pairedOk = [&](Value index, int64_t extent) -> Value {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                 arith::AddIOp::create(b, loc, index, cst(b, loc, extent)),
                                 cst(b, loc, shape.pairedExtent));
  };
  // The thread's first output column in the tile.
  Value col = columnsPerThreadStep() == 1
                  ? tx
                  : arith::MulIOp::create(b, loc, tx, cst(b, loc, columnsPerThreadStep()))
                        .getResult();
  assert(shape.residual == static_cast<bool>(residual) && "setResidual for a residual conv");
  Value fzero = residual && shape.gathersPairs() ? loadedZero(b, loc) : Value();
  // The residual of the output at `at` (the lo element's NCHW coordinates), in the lane
  // type: one load where words are whole, else lo and hi gathered (hi half the paired
  // extent further, zero past the output) and packed, as staging gathers inputs.
  auto loadResidual = [&](ArrayRef<Value> at) -> Value {
    Value lo = memref::LoadOp::create(b, loc, residual, at);
    if (!shape.gathersPairs())
      return lo;
    SmallVector<Value, 4> hiAt(at.begin(), at.end());
    unsigned d = shape.pairing == Pairing::images ? 0 : shape.pairing == Pairing::rows ? 2 : 3;
    int64_t half = d == 0 ? shape.n : d == 2 ? shape.p : shape.q;
    Value hiIndex = arith::AddIOp::create(b, loc, hiAt[d], cst(b, loc, half));
    Value ok = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, hiIndex,
                                     cst(b, loc, shape.pairedExtent));
    // clamped, so that the load is in bounds whether or not it is used
    hiAt[d] = arith::MinUIOp::create(b, loc, hiIndex, cst(b, loc, shape.pairedExtent - 1));
    Value hi = memref::LoadOp::create(b, loc, residual, hiAt);
    return emitPack(b, loc, lo, arith::SelectOp::create(b, loc, ok, hi, fzero));
  };
  for (int64_t o = 0; o < opt; ++o) {
    Value q = arith::AddIOp::create(b, loc, arith::AddIOp::create(b, loc, bc.q0, col),
                                    cst(b, loc, o * columnDistance()));
    Value qOk = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, q, cst(b, loc, shape.q));
    Value ok = arith::AndIOp::create(b, loc, pOk, qOk);
    auto ifOp = scf::IfOp::create(b, loc, ok, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    auto channel = [&](int64_t kk) -> Value {
      return kBase ? arith::AddIOp::create(b, loc, kBase, cst(b, loc, kk)).getResult()
                   : cst(b, loc, kLo + kk);
    };
    // The residuals of a batch of channels are loaded before the batch's stores: the
    // kernel cannot know that the output does not alias the residual, so a load after a
    // store waits for it, and one load per store would expose the memory latency per
    // output (ResNet-50's FP16 kernels ran 1.4x slower so). The batch bounds the registers
    // it holds: on ResNet-50's conv3 kernels 16 ran 3-14% faster than 8 without spilling,
    // 32 spilled on one, 64 on three (docs/tuning-log.md, "Image pairs end to end"). A
    // channel past K (block templates) reads channel K - 1, unused.
    constexpr int64_t kResidualBatch = 16;
    SmallVector<Value> residuals;
    for (int64_t kk = 0; kk < kN; ++kk) {
      if (residual && kk % kResidualBatch == 0) {
        residuals.clear();
        for (int64_t j = kk; j < std::min(kN, kk + kResidualBatch); ++j) {
          Value kj = channel(j);
          if (guardK)
            kj = arith::MinUIOp::create(b, loc, kj, cst(b, loc, shape.k - 1));
          residuals.push_back(loadResidual({bc.n, kj, p, q}));
        }
      }
      Value v = accs[kk * opt + o];
      // f32 sums are rounded once, to the output's type; the activation commutes with it.
      if (shape.promotesRuns())
        v = LLVM::FPTruncOp::create(b, loc, laneType(b), v);
      Value k = channel(kk);
      OpBuilder::InsertionGuard kGuard(b);
      if (guardK) {
        Value kOk =
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, k, cst(b, loc, shape.k));
        auto kIf = scf::IfOp::create(b, loc, kOk, /*withElseRegion=*/false);
        b.setInsertionPointToStart(kIf.thenBlock());
      }
      // The residual is added in the output's type (half precision: one more rounding, in
      // the stated bound's error terms), before the activation.
      if (residual)
        v = arith::AddFOp::create(b, loc, v, residuals[kk % kResidualBatch]);
      if (shape.activation != Epilogue::none)
        v = arith::MaximumFOp::create(b, loc, v, zero);
      if (shape.activation == Epilogue::relu6)
        v = arith::MinimumFOp::create(b, loc, v, six);
      if (!shape.gathersPairs()) {
        memref::StoreOp::create(b, loc, v, output, ValueRange{bc.n, k, p, q});
        continue;
      }
      auto [lo, hi] = emitUnpack(b, loc, v);
      memref::StoreOp::create(b, loc, lo, output, ValueRange{bc.n, k, p, q});
      SmallVector<Value, 4> at{bc.n, k, p, q};
      Value *paired = shape.pairing == Pairing::images ? &at[0]
                      : shape.pairing == Pairing::rows ? &at[2]
                                                        : &at[3];
      int64_t half = shape.pairing == Pairing::images ? shape.n
                     : shape.pairing == Pairing::rows ? shape.p
                                                      : shape.q;
      auto hiIf = scf::IfOp::create(b, loc, pairedOk(*paired, half), /*withElseRegion=*/false);
      b.setInsertionPointToStart(hiIf.thenBlock());
      *paired = arith::AddIOp::create(b, loc, *paired, cst(b, loc, half));
      memref::StoreOp::create(b, loc, hi, output, at);
    }
  }
}

LogicalResult spconv::checkLowerable(Conv2DOp op) {
  int64_t numWeights = op.getWeightsType().getNumElements();
  if (!op.getInputType().getElementType().isF32()) {
    if (numWeights - 1 > placeholder::kHalfMaxIndex)
      return op.emitOpError("has ") << numWeights << " weights; the half-precision template "
                                    << "encodes at most " << placeholder::kHalfMaxIndex + 1
                                    << " per conv";
    return success();
  }
  if (numWeights - 1 > placeholder::kMaxIndex)
    return op.emitOpError("has ") << numWeights << " weights; the template encodes at most "
                                  << placeholder::kMaxIndex + 1 << " per conv";
  if (op.getOutChannels() - 1 > placeholder::kMaxIndex)
    return op.emitOpError("has too many output channels for bias placeholders");
  return success();
}
