//===- UnrollNests.cpp - the template's affine nests to straight-line code -===//
//
// Unrolls outermost first: the kk loop's bounds depend on cc (groups), so they are constant
// only once cc is. Each loop is unrolled once with its body still rolled, so the work is
// linear in the size of the result. Folding and register forwarding run once per nest over
// the straight-line result, in program order, instead of a greedy rewrite of the whole
// kernel (docs/design.md, "The kernel").
//
//===----------------------------------------------------------------------===//
#include "spconv/Conversion/ConvTemplate/UnrollNests.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Affine/LoopUtils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/FoldUtils.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace spconv;

static LogicalResult foldMap(AffineMap map, ValueRange operands,
                             SmallVectorImpl<int64_t> &results);

/// The value of index `v` if it is a constant or an affine.apply of such (what the copies of
/// an unrolled loop's induction variable are until they are folded).
static std::optional<int64_t> constIndex(Value v) {
  if (std::optional<int64_t> c = getConstantIntValue(v))
    return c;
  auto apply = v.getDefiningOp<affine::AffineApplyOp>();
  SmallVector<int64_t> results;
  if (!apply || failed(foldMap(apply.getAffineMap(), apply.getMapOperands(), results)))
    return std::nullopt;
  return results.front();
}

/// Evaluates `map` on `operands`, which must all be constant indices.
static LogicalResult foldMap(AffineMap map, ValueRange operands,
                             SmallVectorImpl<int64_t> &results) {
  Builder b(map.getContext());
  SmallVector<Attribute> attrs;
  for (Value v : operands) {
    std::optional<int64_t> c = constIndex(v);
    if (!c)
      return failure();
    attrs.push_back(b.getIndexAttr(*c));
  }
  SmallVector<Attribute> folded;
  if (failed(map.constantFold(attrs, folded)))
    return failure();
  for (Attribute a : folded)
    results.push_back(cast<IntegerAttr>(a).getInt());
  return success();
}

/// The first op of the range after `prev` (the block's first op when `prev` is null).
static Operation *after(Block *block, Operation *prev) {
  return prev ? prev->getNextNode() : &block->front();
}

/// Fully unrolls `loop` and then, recursively, the loops of its unrolled body.
static LogicalResult unrollFully(affine::AffineForOp loop) {
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
  // The copies of the body now lie between prev and next.
  SmallVector<affine::AffineForOp> inner;
  for (Operation *op = after(block, prev); op != next; op = op->getNextNode())
    if (auto f = dyn_cast<affine::AffineForOp>(op))
      inner.push_back(f);
  for (affine::AffineForOp f : inner)
    if (failed(unrollFully(f)))
      return failure();
  return success();
}

/// Folds every op of [first, end) whose operands are all constants: the induction variable
/// copies, tile offsets and weight placeholders (affine.apply, index_cast, addi, bitcast).
/// In program order, so an op's operands are folded before it is visited.
static void foldConstants(Operation *first, Operation *end, OperationFolder &folder) {
  SmallVector<Operation *> ops;
  for (Operation *op = first; op != end; op = op->getNextNode())
    ops.push_back(op);
  for (Operation *op : ops) {
    if (op->getNumRegions() || op->getNumResults() == 0 || op->hasTrait<OpTrait::ConstantLike>())
      continue;
    if (llvm::all_of(op->getOperands(), [](Value v) { return matchPattern(v, m_Constant()); }))
      (void)folder.tryToFold(op);
  }
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
    OperationFolder folder(func->getContext());
    llvm::SetVector<Block *> blocks;
    for (affine::AffineForOp nest : nests) {
      Block *block = nest->getBlock();
      Operation *prev = nest->getPrevNode(), *next = nest->getNextNode();
      if (failed(unrollFully(nest)))
        return failure();
      foldConstants(after(block, prev), next, folder);
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
