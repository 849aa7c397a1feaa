//===- FoldChannelAffine.cpp - fold batch-norm-like epilogues into convs --===//
//
// A spconv.conv2d whose sole user is an elementwise linalg.generic computing, per output
// channel k, an affine function of the conv result
//     y = a[k] * x + b[k]        (e.g. inference batch norm: (x - mean) * gamma / sqrt(var +
//                                 eps) + beta, written with any mix of addf/subf/mulf/divf/
//                                 negf on per-channel constants, scalar constants, sqrt, rsqrt)
// optionally followed by max(., 0) (ReLU) or min(max(., 0), 6) (ReLU6), becomes one conv with
// weights a[k] * w and bias a[k] * bias + b[k] and the activation fused.
//
// The body is interpreted symbolically: every value is either free of x (a per-channel number,
// evaluated in double) or a[k] * x + b[k]; any other use of x (x * x, x in a divisor, a call)
// leaves the generic alone. Folding keeps the weights' zero pattern exactly: a zero weight is
// written as it was (never multiplied), and if a nonzero weight would round to zero or a
// finite one overflow, the generic is left alone (docs/design.md, "Folding epilogues").
//
//===----------------------------------------------------------------------===//
#include "spconv/Transforms/ImportPatterns.h"
#include "spconv/Dialect/Spconv/IR/SpconvOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/DenseMap.h"

#include <cmath>

using namespace mlir;
using namespace spconv;

namespace {
/// a * x + b, per output channel; `a` is all zeros for a value free of x.
struct AffineValue {
  std::vector<double> a, b;
};

/// Evaluates a linalg.generic body symbolically over the conv result.
class BodyEvaluator {
public:
  BodyEvaluator(int64_t k) : k(k) {}

  /// The block argument standing for the conv result.
  void bindConv(Value arg) { values[arg] = {std::vector<double>(k, 1.0), std::vector<double>(k)}; }
  /// A block argument reading a tensor<K> constant per channel.
  void bindChannelConstant(Value arg, ArrayRef<float> perChannel) {
    values[arg] = {std::vector<double>(k), std::vector<double>(perChannel.begin(),
                                                               perChannel.end())};
  }

  /// The affine value of `v`, or failure when `v` is not affine in x.
  FailureOr<AffineValue> eval(Value v) {
    if (auto it = values.find(v); it != values.end())
      return it->second;
    FloatAttr cst;
    if (matchPattern(v, m_Constant(&cst))) // in the body or captured from above
      return remember(v, {std::vector<double>(k), std::vector<double>(
                                                      k, cst.getValueAsDouble())});
    Operation *op = v.getDefiningOp();
    if (!op || op->getNumResults() != 1)
      return failure();
    SmallVector<AffineValue> in;
    for (Value operand : op->getOperands()) {
      FailureOr<AffineValue> e = eval(operand);
      if (failed(e))
        return failure();
      in.push_back(std::move(*e));
    }
    auto isFree = [](const AffineValue &e) {
      return llvm::all_of(e.a, [](double x) { return x == 0.0; });
    };
    AffineValue r{std::vector<double>(k), std::vector<double>(k)};
    auto each = [&](auto fn) {
      for (int64_t i = 0; i < k; ++i)
        fn(i);
    };
    if (isa<arith::AddFOp, arith::SubFOp>(op)) {
      double sign = isa<arith::SubFOp>(op) ? -1.0 : 1.0;
      each([&](int64_t i) {
        r.a[i] = in[0].a[i] + sign * in[1].a[i];
        r.b[i] = in[0].b[i] + sign * in[1].b[i];
      });
    } else if (isa<arith::MulFOp>(op)) {
      if (!isFree(in[0]) && !isFree(in[1]))
        return failure(); // x * x
      const AffineValue &x = isFree(in[0]) ? in[1] : in[0];
      const AffineValue &c = isFree(in[0]) ? in[0] : in[1];
      each([&](int64_t i) {
        r.a[i] = x.a[i] * c.b[i];
        r.b[i] = x.b[i] * c.b[i];
      });
    } else if (isa<arith::DivFOp>(op)) {
      if (!isFree(in[1]))
        return failure(); // x in a divisor
      each([&](int64_t i) {
        r.a[i] = in[0].a[i] / in[1].b[i];
        r.b[i] = in[0].b[i] / in[1].b[i];
      });
    } else if (isa<arith::NegFOp>(op)) {
      each([&](int64_t i) {
        r.a[i] = -in[0].a[i];
        r.b[i] = -in[0].b[i];
      });
    } else if (isa<math::SqrtOp, math::RsqrtOp>(op) && isFree(in[0])) {
      bool reciprocal = isa<math::RsqrtOp>(op);
      each([&](int64_t i) {
        double s = std::sqrt(in[0].b[i]);
        r.b[i] = reciprocal ? 1.0 / s : s;
      });
    } else {
      return failure();
    }
    return remember(v, std::move(r));
  }

private:
  AffineValue remember(Value v, AffineValue e) { return values[v] = std::move(e); }

  int64_t k;
  llvm::DenseMap<Value, AffineValue> values;
};

/// Peels a trailing ReLU (max(v, +0.0)) or ReLU6 (min(max(v, +0.0), 6.0)) off a body result.
Value peelActivation(Value v, Activation &activation) {
  activation = Activation::none;
  auto otherOperand = [](Operation *op, auto pred) -> Value {
    Value a = op->getOperand(0), b = op->getOperand(1);
    if (pred(a))
      std::swap(a, b);
    return pred(b) ? a : Value();
  };
  Operation *op = v.getDefiningOp();
  if (op && isa<arith::MinimumFOp, arith::MinNumFOp>(op)) {
    Value inner = otherOperand(op, [](Value x) {
      FloatAttr c;
      return matchPattern(x, m_Constant(&c)) && c.getValueAsDouble() == 6.0;
    });
    Operation *maxOp = inner ? inner.getDefiningOp() : nullptr;
    if (!maxOp || !isa<arith::MaximumFOp, arith::MaxNumFOp>(maxOp))
      return v;
    Value x = otherOperand(maxOp, [](Value z) { return matchPattern(z, m_PosZeroFloat()); });
    if (!x)
      return v;
    activation = Activation::relu6;
    return x;
  }
  if (op && isa<arith::MaximumFOp, arith::MaxNumFOp>(op)) {
    if (Value x = otherOperand(op, [](Value z) { return matchPattern(z, m_PosZeroFloat()); })) {
      activation = Activation::relu;
      return x;
    }
  }
  return v;
}

/// A tensor<K> f32 constant's values.
FailureOr<std::vector<float>> channelConstant(Value v, int64_t k) {
  ElementsAttr attr;
  if (!matchPattern(v, m_Constant(&attr)) || !attr.getElementType().isF32() ||
      attr.getShapedType().getRank() != 1 || attr.getShapedType().getDimSize(0) != k)
    return failure();
  return readF32Elements(attr);
}

ElementsAttr makeWeights(ShapedType type, ArrayRef<float> values, StringRef name) {
  AsmResourceBlob blob = HeapAsmResourceBlob::allocateAndCopyInferAlign(values);
  return DenseResourceElementsAttr::get(type, name, std::move(blob));
}

struct FoldChannelAffine : OpRewritePattern<Conv2DOp> {
  FoldChannelAffine(MLIRContext *ctx) : OpRewritePattern(ctx, /*benefit=*/2) {}

  LogicalResult matchAndRewrite(Conv2DOp conv, PatternRewriter &rewriter) const override {
    if (conv.getActivation() != Activation::none)
      return rewriter.notifyMatchFailure(conv, "already ends in an activation");
    if (!conv->hasOneUse())
      return rewriter.notifyMatchFailure(conv, "result has several users");
    auto g = dyn_cast<linalg::GenericOp>(*conv->getUsers().begin());
    Value res = conv.getResult();
    int64_t k = conv.getOutChannels();
    if (!g || !g.hasPureTensorSemantics() || g.getNumLoops() != 4 ||
        g.getNumParallelLoops() != 4 || g.getNumDpsInits() != 1 || g->getNumResults() != 1 ||
        g->getResult(0).getType() != res.getType() ||
        !g.getMatchingIndexingMap(g.getDpsInitOperand(0)).isIdentity())
      return rewriter.notifyMatchFailure(conv, "user is not an elementwise linalg.generic");
    AffineMap perChannel = AffineMap::get(4, 0, getAffineDimExpr(1, getContext()));
    BodyEvaluator evaluator(k);
    bool sawConv = false;
    for (OpOperand *operand : g.getDpsInputOperands()) {
      AffineMap map = g.getMatchingIndexingMap(operand);
      BlockArgument arg = g.getMatchingBlockArgument(operand);
      if (operand->get() == res && map.isIdentity()) {
        evaluator.bindConv(arg);
        sawConv = true;
      } else if (FailureOr<std::vector<float>> c = channelConstant(operand->get(), k);
                 succeeded(c) && map == perChannel) {
        evaluator.bindChannelConstant(arg, *c);
      } else {
        return rewriter.notifyMatchFailure(conv, "an input is neither the conv nor per-channel");
      }
    }
    if (!sawConv || !g.getRegionOutputArgs()[0].use_empty())
      return rewriter.notifyMatchFailure(conv, "the body reads the init or not the conv");
    Block &body = g.getRegion().front();
    Activation activation;
    Value affine = peelActivation(body.getTerminator()->getOperand(0), activation);
    FailureOr<AffineValue> f = evaluator.eval(affine);
    if (failed(f))
      return rewriter.notifyMatchFailure(conv, "the body is not affine in the conv result");

    FailureOr<std::vector<float>> weights = readF32Elements(conv.getWeights());
    if (failed(weights))
      return rewriter.notifyMatchFailure(conv, "weights unreadable");
    std::vector<float> bias(k, 0.0f);
    if (ElementsAttr b = conv.getBiasAttr()) {
      FailureOr<std::vector<float>> values = readF32Elements(b);
      if (failed(values))
        return rewriter.notifyMatchFailure(conv, "bias unreadable");
      bias = std::move(*values);
    }
    int64_t perK = weights->size() / k;
    for (int64_t i = 0; i < k; ++i) {
      double a = f->a[i];
      for (int64_t j = i * perK; j < (i + 1) * perK; ++j) {
        float w = (*weights)[j];
        if (w == 0.0f)
          continue; // stays exactly as it was: never 0 * a
        float scaled = float(double(w) * a);
        if (scaled == 0.0f || (std::isfinite(w) && !std::isfinite(scaled)))
          return rewriter.notifyMatchFailure(
              conv, "folding would turn a nonzero weight into zero or non-finite");
        (*weights)[j] = scaled;
      }
      bias[i] = float(double(bias[i]) * a + f->b[i]);
    }
    // A pure shift (a = 1, e.g. a bias add) keeps the weights attribute as it was.
    bool unscaled = llvm::all_of(f->a, [](double a) { return a == 1.0; });
    // The scale would apply to the residual too, which is no weight: only shifts fold.
    if (conv.getResidual() && !unscaled)
      return rewriter.notifyMatchFailure(conv, "a scale would scale the residual too");
    bool noBias =
        !conv.getBiasAttr() && llvm::all_of(f->b, [](double b) { return b == 0.0; });
    auto biasType = RankedTensorType::get({k}, rewriter.getF32Type());
    ElementsAttr newWeights = unscaled ? conv.getWeights()
                                       : makeWeights(conv.getWeightsType().clone(
                                                         rewriter.getF32Type()),
                                                     *weights, "folded_weights");
    // K floats: a plain dense attribute, printed readably.
    ElementsAttr newBias =
        noBias ? ElementsAttr()
               : ElementsAttr(DenseElementsAttr::get(biasType, ArrayRef<float>(bias)));
    rewriter.replaceOpWithNewOp<Conv2DOp>(
        g, res.getType(), conv.getInput(), conv.getResidual(), newWeights, newBias,
        conv.getStridesAttr(),
        conv.getPaddingAttr(), conv.getDilationsAttr(), conv.getGroupsAttr(),
        ActivationAttr::get(getContext(), activation), conv.getPairingAttr(),
        conv.getAccumulateAttr(), conv.getLayoutAttr());
    rewriter.eraseOp(conv);
    return success();
  }
};
} // namespace

void spconv::populateFoldChannelAffinePatterns(RewritePatternSet &patterns) {
  patterns.add<FoldChannelAffine>(patterns.getContext());
}
