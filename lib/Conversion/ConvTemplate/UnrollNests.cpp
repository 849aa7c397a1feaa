//===- UnrollNests.cpp - the template's affine nests to straight-line code -===//
//
// Unrolls outermost first: the kk loop's bounds depend on cc (groups), so they are constant
// only once cc is. Each loop is unrolled once with its body still rolled, so the work is
// linear in the size of the result. The constant arithmetic of the copies is folded as soon
// as a loop is unrolled (its induction variable copies) or an innermost loop is (the
// weights), while the code is small; register forwarding runs once per block, in program
// order. No greedy rewrite of the whole kernel: what unrolling costs is per op, and a
// template holds 10^5 FMAs (docs/design.md, "The kernel").
//
//===----------------------------------------------------------------------===//
#include "spconv/Conversion/ConvTemplate/UnrollNests.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Affine/LoopUtils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace spconv;

static std::optional<int64_t> constIndex(Value v);

/// Evaluates `e` on constant dims and symbols (`values`: dims, then symbols) without
/// building affine expressions: this runs for every access and bound of an unrolled nest.
static std::optional<int64_t> evaluate(AffineExpr e, unsigned numDims,
                                       ArrayRef<int64_t> values) {
  if (auto c = dyn_cast<AffineConstantExpr>(e))
    return c.getValue();
  if (auto d = dyn_cast<AffineDimExpr>(e))
    return values[d.getPosition()];
  if (auto sym = dyn_cast<AffineSymbolExpr>(e))
    return values[numDims + sym.getPosition()];
  auto bin = cast<AffineBinaryOpExpr>(e);
  std::optional<int64_t> l = evaluate(bin.getLHS(), numDims, values);
  std::optional<int64_t> r = evaluate(bin.getRHS(), numDims, values);
  if (!l || !r)
    return std::nullopt;
  switch (e.getKind()) {
  case AffineExprKind::Add:
    return *l + *r;
  case AffineExprKind::Mul:
    return *l * *r;
  case AffineExprKind::FloorDiv:
    return *r == 0 ? std::nullopt : std::optional<int64_t>(llvm::divideFloorSigned(*l, *r));
  case AffineExprKind::CeilDiv:
    return *r == 0 ? std::nullopt : std::optional<int64_t>(llvm::divideCeilSigned(*l, *r));
  case AffineExprKind::Mod:
    return *r <= 0 ? std::nullopt : std::optional<int64_t>(llvm::mod(*l, *r));
  default:
    return std::nullopt;
  }
}

/// Evaluates `map` on `operands`, which must all be constant indices.
static LogicalResult foldMap(AffineMap map, ValueRange operands,
                             SmallVectorImpl<int64_t> &results) {
  SmallVector<int64_t, 8> values;
  for (Value v : operands) {
    std::optional<int64_t> c = constIndex(v);
    if (!c)
      return failure();
    values.push_back(*c);
  }
  for (AffineExpr e : map.getResults()) {
    std::optional<int64_t> r = evaluate(e, map.getNumDims(), values);
    if (!r)
      return failure();
    results.push_back(*r);
  }
  return success();
}

/// The value of index `v` if it is a constant or an affine.apply of such (what the copies of
/// an unrolled loop's induction variable are until they are folded).
static std::optional<int64_t> constIndex(Value v) {
  Operation *def = v.getDefiningOp();
  if (!def)
    return std::nullopt;
  // arith.constant first, without the generic matcher: this runs for every operand.
  if (auto c = dyn_cast<arith::ConstantOp>(def))
    if (auto i = dyn_cast<IntegerAttr>(c.getValue()))
      return i.getInt();
  auto apply = dyn_cast<affine::AffineApplyOp>(def);
  if (!apply)
    return getConstantIntValue(v);
  SmallVector<int64_t, 1> results;
  if (failed(foldMap(apply.getAffineMap(), apply.getMapOperands(), results)))
    return std::nullopt;
  return results.front();
}

/// The first op of the range after `prev` (the block's first op when `prev` is null).
static Operation *after(Block *block, Operation *prev) {
  return prev ? prev->getNextNode() : &block->front();
}

/// A half-precision template's weight word: two f16 or bf16 halves (ConvTemplate.h,
/// laneType).
static bool isHalfWord(Type type) {
  auto v = llvm::dyn_cast<VectorType>(type);
  return v && v.getRank() == 1 && v.getNumElements() == 2 &&
         (v.getElementType().isF16() || v.getElementType().isBF16());
}

/// The constant `bits` of type `type` (an integer or index, f32 bits, or a half word's 32
/// bits, lo half first) as an attribute.
static TypedAttr toAttr(Type type, int64_t bits) {
  if (type.isF32())
    return FloatAttr::get(type, APFloat(APFloat::IEEEsingle(), APInt(32, uint32_t(bits))));
  if (isHalfWord(type)) {
    auto v = llvm::cast<VectorType>(type);
    const llvm::fltSemantics &sem =
        llvm::cast<FloatType>(v.getElementType()).getFloatSemantics();
    SmallVector<APFloat, 2> halves{APFloat(sem, APInt(16, uint64_t(bits) & 0xFFFF)),
                                   APFloat(sem, APInt(16, (uint64_t(bits) >> 16) & 0xFFFF))};
    return DenseElementsAttr::get(v, halves);
  }
  return IntegerAttr::get(type, bits);
}

/// Constants materialized at the function entry, one per value (what OperationFolder does,
/// without building an attribute per use).
class EntryConstants {
public:
  explicit EntryConstants(Operation *func)
      : entry(&func->getRegion(0).front()), builder(func->getContext()) {}
  Value get(Type type, int64_t bits, Location loc) {
    Value &c = cache[{type, bits}];
    if (!c) {
      // At the block's start each time: the op that was first may have been unrolled away.
      builder.setInsertionPointToStart(entry);
      c = arith::ConstantOp::create(builder, loc, toAttr(type, bits));
    }
    return c;
  }

private:
  Block *entry;
  OpBuilder builder;
  DenseMap<std::pair<Type, int64_t>, Value> cache;
};

/// Width of an integer or index value (index: 64, as the fold evaluates it).
static unsigned widthOf(Type type) {
  return type.isIndex() ? 64 : type.getIntOrFloatBitWidth();
}

/// Folds the constant arithmetic of [first, end), an unrolled nest, in program order: the
/// induction variable copies, tile offsets and weight placeholders (affine.apply, then
/// arith.index_cast, arith.addi and arith.bitcast to f32 of constants: what emitChunkNest
/// writes and affine transformations add). Values are kept as integers (f32 as bits) and
/// materialized only where an op that stays (an address add, an FMA) uses them: the generic
/// OperationFolder, which builds an attribute per folded op, made unrolling 3x slower.
static void foldConstants(Operation *first, Operation *end, EntryConstants &constants) {
  DenseMap<Value, int64_t> known;
  SmallVector<Operation *> folded;
  auto valueOf = [&](Value v) -> std::optional<int64_t> {
    auto it = known.find(v);
    if (it != known.end())
      return it->second;
    return constIndex(v);
  };
  auto fold = [&](Operation *op) -> std::optional<int64_t> {
    if (auto apply = dyn_cast<affine::AffineApplyOp>(op)) {
      SmallVector<int64_t, 4> values;
      for (Value v : apply.getMapOperands()) {
        std::optional<int64_t> c = valueOf(v);
        if (!c)
          return std::nullopt;
        values.push_back(*c);
      }
      AffineMap map = apply.getAffineMap();
      return evaluate(map.getResult(0), map.getNumDims(), values);
    }
    Type type = op->getNumResults() == 1 ? op->getResult(0).getType() : Type();
    if (!type || !(type.isIntOrIndex() || type.isF32() || isHalfWord(type)))
      return std::nullopt;
    if (auto cast = dyn_cast<arith::IndexCastOp>(op)) {
      std::optional<int64_t> v = valueOf(cast.getIn());
      if (v && cast.getIn().getType().isIndex())
        return llvm::SignExtend64(uint64_t(*v), widthOf(type));
    } else if (auto add = dyn_cast<arith::AddIOp>(op)) {
      std::optional<int64_t> l = valueOf(add.getLhs()), r = valueOf(add.getRhs());
      if (l && r)
        return llvm::SignExtend64(uint64_t(*l) + uint64_t(*r), widthOf(type));
    } else if (auto bitcast = dyn_cast<arith::BitcastOp>(op)) {
      std::optional<int64_t> v = valueOf(bitcast.getIn());
      if (v && type.isF32() && bitcast.getIn().getType().isInteger(32))
        return int64_t(uint32_t(*v));
    } else if (auto bitcast = dyn_cast<LLVM::BitcastOp>(op)) {
      // A half-precision weight word (arith.bitcast makes no vector of a scalar).
      std::optional<int64_t> v = valueOf(bitcast.getArg());
      if (v && isHalfWord(type) && bitcast.getArg().getType().isInteger(32))
        return int64_t(uint32_t(*v));
    }
    return std::nullopt;
  };
  for (Operation *op = first; op != end; op = op->getNextNode()) {
    if (op->hasTrait<OpTrait::ConstantLike>())
      continue;
    if (std::optional<int64_t> v = fold(op)) {
      known[op->getResult(0)] = *v;
      folded.push_back(op);
      continue;
    }
    for (OpOperand &use : op->getOpOperands()) {
      auto it = known.find(use.get());
      if (it != known.end())
        use.set(constants.get(use.get().getType(), it->second, op->getLoc()));
    }
  }
  for (Operation *op : llvm::reverse(folded)) {
    Value r = op->getResult(0);
    if (!r.use_empty())
      r.replaceAllUsesWith(constants.get(r.getType(), known.lookup(r), op->getLoc()));
    op->erase();
  }
}

/// Fully unrolls `loop` and then, recursively, the loops of its unrolled body.
static LogicalResult unrollFully(affine::AffineForOp loop, EntryConstants &constants) {
  // Max of the lower bounds, min of the upper bounds (the kk loop of a grouped conv), with
  // the enclosing loops' induction variables already constants.
  SmallVector<int64_t> lbs, ubs;
  if (failed(foldMap(loop.getLowerBoundMap(), loop.getLowerBoundOperands(), lbs)) ||
      failed(foldMap(loop.getUpperBoundMap(), loop.getUpperBoundOperands(), ubs)) ||
      lbs.empty() || ubs.empty())
    return loop.emitOpError("in a spconv template must have constant bounds once its "
                            "enclosing loops are unrolled: it is fully unrolled so that "
                            "its weights become immediates");
  int64_t lb = *llvm::max_element(lbs), ub = *llvm::min_element(ubs);
  // No iteration, or nothing to repeat (loopUnrollFull leaves such loops in place).
  bool emptyBody = loop.getBody()->without_terminator().empty();
  if (emptyBody && loop.getNumResults())
    return loop.emitOpError("in a spconv template carries values through an empty body");
  if (ub <= lb || emptyBody) {
    loop->replaceAllUsesWith(loop.getInits());
    loop.erase();
    return success();
  }
  loop.setConstantLowerBound(lb);
  loop.setConstantUpperBound(ub);
  Block *block = loop->getBlock();
  Operation *prev = loop->getPrevNode(), *next = loop->getNextNode();
  if (failed(affine::loopUnrollFull(loop)))
    return loop.emitOpError("could not be fully unrolled");
  // The copies of the body now lie between prev and next, each starting with its copy of
  // the induction variable (affine.apply of the first one): made constants right away, so
  // the inner loops' bounds and weights see constants.
  SmallVector<affine::AffineForOp> inner;
  for (Operation *op = after(block, prev); op != next;) {
    Operation *cur = op;
    op = op->getNextNode();
    if (auto f = dyn_cast<affine::AffineForOp>(cur)) {
      inner.push_back(f);
    } else if (auto apply = dyn_cast<affine::AffineApplyOp>(cur)) {
      if (apply->getNumOperands() != 1)
        continue;
      if (std::optional<int64_t> c = constIndex(apply)) {
        apply.getResult().replaceAllUsesWith(
            constants.get(apply.getType(), *c, apply.getLoc()));
        apply.erase();
      }
    }
  }
  for (affine::AffineForOp f : inner)
    if (failed(unrollFully(f, constants)))
      return failure();
  // Fold an innermost loop's copies (the weights) while they are small and hot; what the
  // outer levels add (their induction variables, the tile offsets) is folded once the
  // whole nest is unrolled.
  if (inner.empty())
    foldConstants(after(block, prev), next, constants);
  return success();
}

/// A private register array: a memref.alloca of `block` read and written only by
/// affine.load/store in `block`.
static bool isRegisterArray(memref::AllocaOp alloca, Block *block) {
  return llvm::all_of(alloca->getUsers(), [&](Operation *user) {
    return isa<affine::AffineLoadOp, affine::AffineStoreOp>(user) && user->getBlock() == block;
  });
}

/// Replaces every load from a register array of `block` by the value last stored to the
/// same element, then erases the stores and the array. Linear in the block, unlike
/// affine-scalrep (which checks every store against every load, and runs on func.func
/// only) or sroa + mem2reg (upstream SROA does not split memrefs of more than 16 elements,
/// and the accumulators are up to block-k x outputs-per-thread).
static LogicalResult forwardRegisterArrays(Block *block) {
  llvm::SmallDenseSet<Value> arrays;
  SmallVector<memref::AllocaOp> allocas;
  for (Operation &op : *block)
    if (auto alloca = dyn_cast<memref::AllocaOp>(op))
      if (alloca.getType().hasStaticShape() && isRegisterArray(alloca, block)) {
        arrays.insert(alloca);
        allocas.push_back(alloca);
      }
  if (arrays.empty())
    return success();
  DenseMap<std::pair<Value, int64_t>, Value> current;
  auto element = [&](Operation *op, Value memref, AffineMap map,
                     ValueRange operands) -> FailureOr<std::pair<Value, int64_t>> {
    SmallVector<int64_t> idx;
    if (failed(foldMap(map, operands, idx)))
      return op->emitOpError("accesses a register array of a spconv template at an index "
                             "that is not constant after unrolling");
    auto type = cast<MemRefType>(memref.getType());
    int64_t flat = 0;
    for (auto [i, extent] : llvm::zip(idx, type.getShape()))
      flat = flat * extent + i;
    return std::make_pair(memref, flat);
  };
  for (Operation &op : llvm::make_early_inc_range(*block)) {
    if (auto store = dyn_cast<affine::AffineStoreOp>(op)) {
      if (!arrays.contains(store.getMemRef()))
        continue;
      auto key = element(store, store.getMemRef(), store.getAffineMap(), store.getMapOperands());
      if (failed(key))
        return failure();
      current[*key] = store.getValueToStore();
      store.erase();
    } else if (auto load = dyn_cast<affine::AffineLoadOp>(op)) {
      if (!arrays.contains(load.getMemRef()))
        continue;
      auto key = element(load, load.getMemRef(), load.getAffineMap(), load.getMapOperands());
      if (failed(key))
        return failure();
      auto it = current.find(*key);
      if (it == current.end())
        return load.emitOpError("reads an element of a register array of a spconv template "
                                "before it is written");
      load.replaceAllUsesWith(it->second);
      load.erase();
    }
  }
  for (memref::AllocaOp alloca : allocas)
    alloca.erase();
  return success();
}

LogicalResult spconv::unrollTemplateNests(Operation *func) {
  SmallVector<affine::AffineForOp> nests;
  func->walk<WalkOrder::PreOrder>([&](affine::AffineForOp loop) {
    nests.push_back(loop);
    return WalkResult::skip();
  });
  {
    EntryConstants constants(func);
    llvm::SetVector<Block *> blocks;
    for (affine::AffineForOp nest : nests) {
      Block *block = nest->getBlock();
      Operation *prev = nest->getPrevNode(), *next = nest->getNextNode();
      if (failed(unrollFully(nest, constants)))
        return failure();
      foldConstants(after(block, prev), next, constants);
      // Constants left unused by folding (the cloned 0x40000001 of each weight).
      for (Operation *op = after(block, prev); op != next;) {
        Operation *cur = op;
        op = op->getNextNode();
        if (cur->hasTrait<OpTrait::ConstantLike>() && cur->use_empty())
          cur->erase();
      }
      blocks.insert(block);
    }
    for (Block *block : blocks)
      if (failed(forwardRegisterArrays(block)))
        return failure();
  }
  // Induction variable constants and folded intermediates left unused at the entry.
  if (func->getNumRegions() && !func->getRegion(0).empty())
    for (Operation &op : llvm::make_early_inc_range(func->getRegion(0).front()))
      if (op.hasTrait<OpTrait::ConstantLike>() && op.use_empty())
        op.erase();
  // Anything affine left (nothing, for what emitChunkNest writes) becomes arith.
  bool affineLeft = false;
  func->walk([&](Operation *op) {
    if (isa<affine::AffineDialect>(op->getDialect()))
      affineLeft = true;
  });
  if (!affineLeft)
    return success();
  RewritePatternSet patterns(func->getContext());
  populateAffineToStdConversionPatterns(patterns);
  return applyPatternsGreedily(func->getRegions().front(), std::move(patterns));
}
