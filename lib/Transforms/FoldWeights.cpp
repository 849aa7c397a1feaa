//===- FoldWeights.cpp - fold real weights into a lowered template --------===//
//
// The paper's "fold + delete" step on LLVM-dialect IR: placeholder constants become the real
// weights; an FMA whose weight is zero is replaced by its addend (SSA replace-all-uses plays
// the paper's register map) and erased, and whatever fed only deleted FMAs (shared-memory
// loads, address arithmetic) is erased in turn. One linear walk per kernel.
//
//===----------------------------------------------------------------------===//
#include "spconv/Conversion/ConvTemplate/KernelInfo.h"
#include "spconv/Conversion/ConvTemplate/Placeholder.h"
#include "spconv/Dialect/Spconv/IR/SpconvOps.h"
#include "spconv/Transforms/FoldWeights.h"
#include "spconv/Transforms/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

namespace spconv {
#define GEN_PASS_DEF_SPCONVFOLDWEIGHTS
#include "spconv/Transforms/Passes.h.inc"
} // namespace spconv

using namespace mlir;
using namespace spconv;

static std::optional<float> getF32Constant(LLVM::ConstantOp c) {
  auto attr = llvm::dyn_cast<FloatAttr>(c.getValue());
  if (!attr || !attr.getType().isF32())
    return std::nullopt;
  return attr.getValue().convertToFloat();
}

/// A half-precision template's word constant, vector<2 x f16/bf16>, as its 32 bits (lo
/// half first), and its element type.
static std::optional<std::pair<uint32_t, FloatType>> getHalfWordConstant(LLVM::ConstantOp c) {
  auto attr = llvm::dyn_cast<DenseFPElementsAttr>(c.getValue());
  if (!attr || attr.getNumElements() != 2 || attr.getType().getRank() != 1)
    return std::nullopt;
  auto elem = llvm::dyn_cast<FloatType>(attr.getElementType());
  if (!elem || !(elem.isF16() || elem.isBF16()))
    return std::nullopt;
  auto values = attr.getValues<APFloat>();
  uint32_t lo = values[0].bitcastToAPInt().getZExtValue(),
           hi = values[1].bitcastToAPInt().getZExtValue();
  return std::make_pair(hi << 16 | lo, elem);
}

static bool isF32Constant(Operation *op) {
  auto c = dyn_cast<LLVM::ConstantOp>(op);
  return c && (getF32Constant(c).has_value() || getHalfWordConstant(c).has_value());
}

/// Whether `c` still holds a weight placeholder (f32 or half word).
static bool holdsWeightPlaceholder(LLVM::ConstantOp c) {
  if (std::optional<float> v = getF32Constant(c))
    return placeholder::decodeWeight(*v).has_value();
  if (auto word = getHalfWordConstant(c)) {
    std::optional<placeholder::HalfPlaceholder> p = placeholder::decodeHalfWord(word->first);
    return p && !p->isBias;
  }
  return false;
}

/// Erases `op` if it is dead and, transitively, the producers that become dead with it.
/// An op is queued only when its last use goes away, which happens once, so nothing is
/// visited after being erased. f32 constants stay: foldWeightsInto holds a list of them (a
/// padding select's 0.0 can die with the select of a direct input; an unused constant
/// emits nothing).
static int64_t eraseWithDeadProducers(Operation *op) {
  if (!op->use_empty() || !wouldOpBeTriviallyDead(op))
    return 0;
  SmallVector<Operation *> worklist{op};
  int64_t erased = 0;
  while (!worklist.empty()) {
    Operation *cur = worklist.pop_back_val();
    llvm::SmallSetVector<Operation *, 4> producers;
    for (Value operand : cur->getOperands())
      if (Operation *def = operand.getDefiningOp())
        producers.insert(def);
    cur->erase();
    ++erased;
    for (Operation *def : producers)
      if (def->use_empty() && wouldOpBeTriviallyDead(def) && !isF32Constant(def))
        worklist.push_back(def);
  }
  return erased;
}

FailureOr<FoldCounts> spconv::foldWeightsInto(Operation *kernel, ElementsAttr weightsAttr,
                                              ElementsAttr biasAttr, bool strictIEEE,
                                              Location diagLoc) {
  // Its placeholders number block 0's weights only; folding them here would give every
  // channel block block 0's weights.
  if (kernel->hasAttr(kBlockTemplateAttr))
    return emitError(diagLoc, "this kernel is a one-channel-block template; it is folded "
                              "at the PTX level (spconv-translate --fold-at=ptx)");
  FailureOr<std::vector<float>> weights = readF32Elements(weightsAttr);
  if (failed(weights))
    return emitError(diagLoc, "cannot read the f32 weights to fold into this kernel "
                             "(missing or truncated dense_resource blob?)");
  std::vector<float> bias;
  if (biasAttr) {
    FailureOr<std::vector<float>> b = readF32Elements(biasAttr);
    if (failed(b))
      return emitError(diagLoc, "cannot read the f32 bias to fold into this kernel");
    bias = std::move(*b);
  }

  SmallVector<LLVM::ConstantOp> constants;
  FloatType halfType;
  kernel->walk([&](LLVM::ConstantOp c) {
    if (getF32Constant(c)) {
      constants.push_back(c);
    } else if (auto word = getHalfWordConstant(c)) {
      constants.push_back(c);
      halfType = word->second;
    }
  });
  // Half precision: the weights and bias rounded to the kernel's type, refused where a
  // nonzero value would become zero or a finite one infinite (SpconvOps.td).
  if (halfType) {
    int64_t crossed;
    for (auto [values, what] : {std::make_pair(&*weights, "weight"),
                                std::make_pair(&bias, "bias value")}) {
      FailureOr<std::vector<float>> r = roundToPrecision(*values, halfType, crossed);
      if (failed(r))
        return emitError(diagLoc, "") << what << " " << crossed << " ("
                                      << (*values)[crossed]
                                      << ") would round to zero or overflow in " << halfType
                                      << "; rescale the layer or keep it in f32";
      *values = std::move(*r);
    }
  }

  FoldCounts counts;
  OpBuilder b(kernel->getContext());
  for (LLVM::ConstantOp c : constants) {
    std::optional<int64_t> wi, bi;
    auto word = getHalfWordConstant(c);
    if (word) {
      if (auto p = placeholder::decodeHalfWord(word->first))
        (p->isBias ? bi : wi) = p->index;
    } else {
      float value = *getF32Constant(c);
      bi = placeholder::decodeBias(value);
      wi = placeholder::decodeWeight(value);
    }
    // The real value, in the constant's type: f32, or the pair (v, v).
    auto valueAttr = [&](float v) -> TypedAttr {
      if (!word)
        return b.getF32FloatAttr(v);
      return DenseElementsAttr::get(llvm::cast<ShapedType>(c.getType()),
                                    b.getFloatAttr(word->second, v));
    };
    if (bi) {
      if (*bi >= static_cast<int64_t>(bias.size()))
        return emitError(diagLoc, "bias placeholder ") << *bi << " is out of range";
      c.setValueAttr(valueAttr(bias[*bi]));
      continue;
    }
    if (!wi)
      continue;
    if (*wi >= static_cast<int64_t>(weights->size()))
      return emitError(diagLoc, "weight placeholder ") << *wi << " is out of range";
    float w = (*weights)[*wi];
    c.setValueAttr(valueAttr(w));
    bool isZero = w == 0.0f; // true for +0.0 and -0.0
    SmallVector<Operation *> users(c->getUsers().begin(), c->getUsers().end());
    for (Operation *user : users) {
      auto fma = llvm::dyn_cast<LLVM::FMAOp>(user);
      if (!fma)
        continue;
      if (!isZero || strictIEEE) {
        ++counts.kept;
        continue;
      }
      // fma(x, 0, acc) == acc once NaN/Inf propagation from x is given up.
      fma.getResult().replaceAllUsesWith(fma.getC());
      ++counts.deleted;
      Value x = fma.getA() == c.getResult() ? fma.getB() : fma.getA();
      fma->dropAllReferences();
      fma->erase();
      if (Operation *def = x.getDefiningOp())
        counts.deadErased += eraseWithDeadProducers(def);
    }
    if (c->use_empty())
      c->erase();
  }
  // Debian's LLVM is built without statistics, so -mlir-pass-statistics stays empty there:
  // the counts also go on the kernel, where tests, tools and the sidecar can read them.
  Builder attrs(kernel->getContext());
  kernel->setAttr("spconv.fmas_kept", attrs.getI64IntegerAttr(counts.kept));
  kernel->setAttr("spconv.fmas_deleted", attrs.getI64IntegerAttr(counts.deleted));
  kernel->removeAttr(kTemplateAttr);
  return counts;
}

namespace {
struct SpconvFoldWeightsPass
    : public spconv::impl::SpconvFoldWeightsBase<SpconvFoldWeightsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<Operation *> tables;
    getOperation()->walk([&](Operation *op) {
      if (op->hasAttr(kWeightsAttr))
        tables.push_back(op);
    });
    for (Operation *table : tables) {
      auto entries = table->getAttrOfType<DictionaryAttr>(kWeightsAttr);
      if (!entries) {
        table->emitError("'") << kWeightsAttr << "' must be a dictionary";
        return signalPassFailure();
      }
      for (NamedAttribute entry : entries) {
        Operation *kernel = SymbolTable::lookupSymbolIn(table, entry.getName());
        auto d = llvm::dyn_cast<DictionaryAttr>(entry.getValue());
        auto weights = d ? d.getAs<ElementsAttr>("weights") : ElementsAttr();
        if (!kernel || !weights) {
          table->emitError("no kernel or weights for '") << entry.getName().getValue() << "'";
          return signalPassFailure();
        }
        FailureOr<FoldCounts> counts =
            foldWeightsInto(kernel, weights, d.getAs<ElementsAttr>("bias"), strictIEEE,
                            kernel->getLoc());
        if (failed(counts))
          return signalPassFailure();
        numFMAsKept += counts->kept;
        numFMAsDeleted += counts->deleted;
        numDeadOpsErased += counts->deadErased;
      }
      // Folded: the weights live in the code now.
      table->removeAttr(kWeightsAttr);
    }
    // A template nobody gave weights to would compute with placeholder values. (Wrappers
    // that inherit the marker, such as _mlir_ciface_ functions, hold no placeholders.)
    WalkResult unfolded = getOperation()->walk([&](Operation *op) {
      if (!op->hasAttr(kTemplateAttr))
        return WalkResult::advance();
      op->removeAttr(kTemplateAttr);
      WalkResult hasPlaceholder = op->walk([](LLVM::ConstantOp c) {
        return holdsWeightPlaceholder(c) ? WalkResult::interrupt() : WalkResult::advance();
      });
      if (!hasPlaceholder.wasInterrupted())
        return WalkResult::advance();
      op->emitError("kernel still holds placeholder weights: no '")
          << kWeightsAttr << "' entry names it";
      return WalkResult::interrupt();
    });
    if (unfolded.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
