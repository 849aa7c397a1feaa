//===- ImportLinalg.cpp - linalg.conv_2d_nchw_fchw -> spconv.conv2d -------===//
//
// Three greedy patterns:
//  - ImportConv turns a conv_2d_nchw_fchw with a constant filter into spconv.conv2d, absorbing
//    a zero tensor.pad on its input and a per-channel bias broadcast in its init.
//  - FuseEpilogue folds the sole consumer of a spconv.conv2d into it when that consumer adds a
//    per-channel constant and/or applies max(x, 0). Rooting it on spconv.conv2d (not on the
//    linalg conv) lets a chain of separate bias and ReLU ops fuse one step at a time.
//  - FoldChannelAffine (FoldChannelAffine.cpp) folds a per-channel affine epilogue such as an
//    inference batch norm, with a ReLU or ReLU6, into the weights and bias.
//
//===----------------------------------------------------------------------===//
#include "spconv/Dialect/Spconv/IR/SpconvOps.h"
#include "spconv/Transforms/ImportPatterns.h"
#include "spconv/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/TypeSwitch.h"

#include <limits>

namespace spconv {
#define GEN_PASS_DEF_SPCONVIMPORTLINALG
#include "spconv/Transforms/Passes.h.inc"
} // namespace spconv

using namespace mlir;
using namespace spconv;

namespace {
constexpr int64_t kI32Max = std::numeric_limits<int32_t>::max();

/// A constant f32 tensor in a form readF32Elements understands; null otherwise (e.g. a
/// sparse<> constant would verify but could not be compiled).
ElementsAttr matchF32Constant(Value v) {
  ElementsAttr attr;
  if (!matchPattern(v, m_Constant(&attr)) || !attr.getElementType().isF32() ||
      !isa<DenseFPElementsAttr, DenseResourceElementsAttr>(attr))
    return {};
  return attr;
}

ElementsAttr matchBiasConstant(Value v, int64_t k) {
  ElementsAttr attr = matchF32Constant(v);
  if (!attr || attr.getShapedType().getRank() != 1 || attr.getShapedType().getDimSize(0) != k)
    return {};
  return attr;
}

bool isAllParallel4(linalg::LinalgOp op) {
  return op.hasPureTensorSemantics() && op.getNumLoops() == 4 &&
         op.getNumParallelLoops() == 4;
}

/// (d0, d1, d2, d3) -> (d1): how a per-channel value is read in an NKPQ loop nest.
AffineMap channelMap(MLIRContext *ctx) {
  return AffineMap::get(4, 0, getAffineDimExpr(1, ctx));
}

/// `v` is a constant tensor<K> broadcast along (n, p, q): linalg.broadcast with dimensions
/// [0, 2, 3], or the linalg.generic that reads it through channelMap and yields it.
ElementsAttr matchBroadcastBias(Value v, int64_t k) {
  if (auto b = v.getDefiningOp<linalg::BroadcastOp>()) {
    if (!b.hasPureTensorSemantics() || b.getDimensions() != ArrayRef<int64_t>{0, 2, 3})
      return {};
    return matchBiasConstant(b.getInput(), k);
  }
  auto g = v.getDefiningOp<linalg::GenericOp>();
  if (!g || !isAllParallel4(g) || g.getNumDpsInputs() != 1 || g.getNumDpsInits() != 1)
    return {};
  SmallVector<AffineMap> maps = g.getIndexingMapsArray();
  if (maps[0] != channelMap(g.getContext()) || !maps[1].isIdentity())
    return {};
  Block &body = g.getRegion().front();
  if (body.getOperations().size() != 1 ||
      body.getTerminator()->getOperand(0) != body.getArgument(0))
    return {};
  return matchBiasConstant(g.getDpsInputs()[0], k);
}

/// The bias a conv init implies: none for a zero fill, a splat for another constant fill, the
/// constant of a per-channel broadcast. Failure for any other init, whose values we cannot
/// express as a bias.
FailureOr<ElementsAttr> matchInitBias(Value init, int64_t k) {
  if (auto fill = init.getDefiningOp<linalg::FillOp>()) {
    FloatAttr value;
    if (!fill.hasPureTensorSemantics() || !matchPattern(fill.getInputs()[0], m_Constant(&value)) ||
        !value.getType().isF32())
      return failure();
    if (value.getValue().isZero())
      return ElementsAttr();
    auto type = RankedTensorType::get({k}, value.getType());
    return cast<ElementsAttr>(DenseElementsAttr::get(type, value.getValue()));
  }
  if (ElementsAttr bias = matchBroadcastBias(init, k))
    return bias;
  return failure();
}

/// Peels a tensor.pad of a constant 0.0 on H/W only into [top, left, bottom, right]. Other
/// pads are left as the conv's (already padded) input.
Value peelZeroPad(Value input, SmallVectorImpl<int64_t> &padding) {
  padding.assign({0, 0, 0, 0});
  auto pad = input.getDefiningOp<tensor::PadOp>();
  if (!pad)
    return input;
  Value padValue = pad.getConstantPaddingValue();
  if (!padValue || !matchPattern(padValue, m_AnyZeroFloat()))
    return input;
  ArrayRef<int64_t> lo = pad.getStaticLow(), hi = pad.getStaticHigh();
  if (lo.size() != 4 || hi.size() != 4)
    return input;
  for (int64_t v : llvm::concat<const int64_t>(lo, hi))
    if (ShapedType::isDynamic(v) || v < 0 || v > kI32Max)
      return input;
  if (lo[0] || lo[1] || hi[0] || hi[1])
    return input;
  padding.assign({lo[2], lo[3], hi[2], hi[3]});
  return pad.getSource();
}

bool isStaticNCHW(Type type) {
  auto t = dyn_cast<RankedTensorType>(type);
  if (!t || t.getRank() != 4 || !t.getElementType().isF32() || !t.hasStaticShape() ||
      t.getNumElements() > kI32Max)
    return false;
  return llvm::all_of(t.getShape(), [](int64_t d) { return d >= 1 && d <= kI32Max; });
}

/// Conv2DOp::verify's rules, checked up front so that the pattern never builds an op that
/// fails verification. linalg accepts some convs spconv does not, e.g. an output smaller than
/// the full (H - extent) / stride + 1 rows.
bool isValidConv(Type inType, ShapedType w, Type outType, ArrayRef<int64_t> strides,
                 ArrayRef<int64_t> padding, ArrayRef<int64_t> dilations, int64_t groups) {
  if (!isStaticNCHW(inType) || !isStaticNCHW(outType) || !w.hasStaticShape() ||
      w.getRank() != 4 || !llvm::all_of(w.getShape(), [](int64_t d) { return d <= kI32Max; }))
    return false;
  for (int64_t v : llvm::concat<const int64_t>(strides, dilations))
    if (v < 1 || v > kI32Max)
      return false;
  ArrayRef<int64_t> in = cast<ShapedType>(inType).getShape();
  ArrayRef<int64_t> out = cast<ShapedType>(outType).getShape();
  ArrayRef<int64_t> f = w.getShape();
  int64_t extH = dilations[0] * (f[2] - 1) + 1, extW = dilations[1] * (f[3] - 1) + 1;
  int64_t padH = in[2] + padding[0] + padding[2], padW = in[3] + padding[1] + padding[3];
  if (f[1] * groups != in[1] || f[0] % groups || out[0] != in[0] || out[1] != f[0] ||
      extH > padH || extW > padW)
    return false;
  return out[2] == (padH - extH) / strides[0] + 1 && out[3] == (padW - extW) / strides[1] + 1;
}

/// Replaces a linalg conv on tensors (`input`, `init`: its operands; `weights`: its filter
/// as spconv's K x C/groups x R x S) with spconv.conv2d, or reports why it cannot.
template <typename ConvOp>
LogicalResult replaceWithSpconv(ConvOp conv, ElementsAttr weights, int64_t groups,
                                PatternRewriter &rewriter) {
  int64_t k = weights.getShapedType().getDimSize(0);
  FailureOr<ElementsAttr> bias = matchInitBias(conv.getOutputs()[0], k);
  if (failed(bias))
    return rewriter.notifyMatchFailure(conv, "init is not a fill or per-channel broadcast");
  SmallVector<int64_t> padding;
  Value input = peelZeroPad(conv.getInputs()[0], padding);
  SmallVector<int64_t> strides(conv.getStrides().template getValues<int64_t>());
  SmallVector<int64_t> dilations(conv.getDilations().template getValues<int64_t>());
  Type resultType = conv->getResultTypes()[0];
  if (!isValidConv(input.getType(), weights.getShapedType(), resultType, strides, padding,
                   dilations, groups))
    return rewriter.notifyMatchFailure(conv, "shape spconv.conv2d cannot express");
  rewriter.replaceOpWithNewOp<Conv2DOp>(
      conv, resultType, input, /*residual=*/Value(), weights, *bias,
      rewriter.getDenseI64ArrayAttr(strides),
      rewriter.getDenseI64ArrayAttr(padding), rewriter.getDenseI64ArrayAttr(dilations),
      rewriter.getI64IntegerAttr(groups),
      ActivationAttr::get(rewriter.getContext(), Activation::none), OutputPairingAttr(),
      TypeAttr(), TensorLayoutAttr());
  return success();
}

struct ImportConv : OpRewritePattern<linalg::Conv2DNchwFchwOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::Conv2DNchwFchwOp conv,
                                PatternRewriter &rewriter) const override {
    if (!conv.hasPureTensorSemantics())
      return rewriter.notifyMatchFailure(conv, "not on tensors");
    ElementsAttr filter = matchF32Constant(conv.getInputs()[1]);
    if (!filter)
      return rewriter.notifyMatchFailure(conv, "filter is not a dense f32 constant");
    return replaceWithSpconv(conv, filter, /*groups=*/1, rewriter);
  }
};

/// The C x R x S filter of a depthwise conv as spconv's C x 1 x R x S weights: the same
/// values (a dense_resource keeps its blob, under the new type).
ElementsAttr asGroupedWeights(ElementsAttr filter) {
  ArrayRef<int64_t> f = filter.getShapedType().getShape();
  auto type = RankedTensorType::get({f[0], 1, f[1], f[2]}, filter.getElementType());
  if (auto dense = dyn_cast<DenseElementsAttr>(filter))
    return dense.reshape(type);
  return DenseResourceElementsAttr::get(type,
                                        cast<DenseResourceElementsAttr>(filter).getRawHandle());
}

/// linalg.depthwise_conv_2d_nchw_chw (multiplier 1) is spconv.conv2d with groups = C.
struct ImportDepthwiseConv : OpRewritePattern<linalg::DepthwiseConv2DNchwChwOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::DepthwiseConv2DNchwChwOp conv,
                                PatternRewriter &rewriter) const override {
    if (!conv.hasPureTensorSemantics())
      return rewriter.notifyMatchFailure(conv, "not on tensors");
    ElementsAttr filter = matchF32Constant(conv.getInputs()[1]);
    if (!filter || filter.getShapedType().getRank() != 3 ||
        !filter.getShapedType().hasStaticShape())
      return rewriter.notifyMatchFailure(conv, "filter is not a static C x R x S f32 constant");
    ElementsAttr weights = asGroupedWeights(filter);
    return replaceWithSpconv(conv, weights, weights.getShapedType().getDimSize(0), rewriter);
  }
};

/// What an elementwise consumer applies to the conv result: x + bias[k], then max(x, 0).
struct Epilogue {
  ElementsAttr bias;
  bool relu = false;
};

/// +0.0 only: max(x, -0.0) differs from the fused ReLU (max(x, +0.0)) for x = -0.0.
bool isPosZeroTensor(Value v) {
  if (matchPattern(v, m_PosZeroFloat())) // splat constant
    return true;
  auto fill = v.getDefiningOp<linalg::FillOp>();
  return fill && fill.hasPureTensorSemantics() &&
         matchPattern(fill.getInputs()[0], m_PosZeroFloat());
}

/// A linalg.generic over (n, k, p, q) whose body is [addf(conv, bias)] then [max(., 0.0)].
FailureOr<Epilogue> matchGenericEpilogue(linalg::GenericOp g, Value conv, int64_t k) {
  if (!isAllParallel4(g) || g.getNumDpsInits() != 1 ||
      !g.getMatchingIndexingMap(g.getDpsInitOperand(0)).isIdentity())
    return failure();
  Value convArg, biasArg;
  ElementsAttr bias;
  for (OpOperand &operand : g->getOpOperands()) {
    AffineMap map = g.getMatchingIndexingMap(&operand);
    if (operand.get() == conv && map.isIdentity()) {
      convArg = g.getMatchingBlockArgument(&operand);
    } else if (!bias && map == channelMap(g.getContext())) {
      if ((bias = matchBiasConstant(operand.get(), k)))
        biasArg = g.getMatchingBlockArgument(&operand);
    }
  }
  Block &body = g.getRegion().front();
  Value v = body.getTerminator()->getOperand(0);
  Epilogue e;
  Operation *maxOp = v.getDefiningOp(), *addOp = nullptr;
  if (maxOp && maxOp->getBlock() == &body && isa<arith::MaximumFOp, arith::MaxNumFOp>(maxOp)) {
    Value a = maxOp->getOperand(0), b = maxOp->getOperand(1);
    if (matchPattern(a, m_PosZeroFloat()))
      std::swap(a, b);
    if (!matchPattern(b, m_PosZeroFloat()))
      return failure();
    e.relu = true;
    v = a;
  } else {
    maxOp = nullptr;
  }
  if (auto add = v.getDefiningOp<arith::AddFOp>(); add && biasArg && add->getBlock() == &body) {
    Value a = add.getLhs(), b = add.getRhs();
    if (a == biasArg)
      std::swap(a, b);
    if (b != biasArg)
      return failure();
    e.bias = bias;
    addOp = add;
    v = a;
  }
  if (!convArg || v != convArg || (!e.relu && !e.bias))
    return failure();
  // Anything else in the body (besides the zero constant) would be dropped by the fusion.
  for (Operation &op : body)
    if (&op != maxOp && &op != addOp && &op != body.getTerminator() &&
        !op.hasTrait<OpTrait::ConstantLike>())
      return failure();
  return e;
}

/// linalg.add(conv, broadcast(bias)) or linalg.max(conv, zeros), in either operand order.
template <typename OpTy>
FailureOr<Epilogue> matchNamedEpilogue(OpTy op, Value conv, int64_t k) {
  if (!op.hasPureTensorSemantics() || op.getNumDpsInputs() != 2)
    return failure();
  Value a = op.getDpsInputs()[0], b = op.getDpsInputs()[1];
  if (b == conv)
    std::swap(a, b);
  if (a != conv)
    return failure();
  Epilogue e;
  if constexpr (std::is_same_v<OpTy, linalg::AddOp>)
    e.bias = matchBroadcastBias(b, k);
  else
    e.relu = isPosZeroTensor(b);
  if (!e.bias && !e.relu)
    return failure();
  return e;
}

struct FuseEpilogue : OpRewritePattern<Conv2DOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(Conv2DOp conv, PatternRewriter &rewriter) const override {
    if (conv.getActivation() != Activation::none)
      return rewriter.notifyMatchFailure(conv, "already ends in an activation");
    // Fusing a conv with other users would compute it twice.
    Operation *user = nullptr;
    for (Operation *u : conv->getUsers()) {
      if (user && u != user)
        return rewriter.notifyMatchFailure(conv, "result has several users");
      user = u;
    }
    if (!user || user->getNumResults() != 1 ||
        user->getResult(0).getType() != conv.getResult().getType())
      return rewriter.notifyMatchFailure(conv, "no elementwise user of the same type");
    Value res = conv.getResult();
    int64_t k = conv.getOutChannels();
    FailureOr<Epilogue> e =
        llvm::TypeSwitch<Operation *, FailureOr<Epilogue>>(user)
            .Case([&](linalg::GenericOp g) { return matchGenericEpilogue(g, res, k); })
            .Case([&](linalg::AddOp op) { return matchNamedEpilogue(op, res, k); })
            .Case([&](linalg::MaxOp op) { return matchNamedEpilogue(op, res, k); })
            .Default([](Operation *) { return failure(); });
    if (failed(e))
      return rewriter.notifyMatchFailure(conv, "user is not a bias add or ReLU");
    if (e->bias && conv.getBiasAttr())
      return rewriter.notifyMatchFailure(conv, "already has a bias");
    rewriter.replaceOpWithNewOp<Conv2DOp>(
        user, res.getType(), conv.getInput(), conv.getResidual(), conv.getWeights(),
        e->bias ? e->bias : conv.getBiasAttr(), conv.getStridesAttr(), conv.getPaddingAttr(),
        conv.getDilationsAttr(), conv.getGroupsAttr(),
        e->relu ? ActivationAttr::get(getContext(), Activation::relu) : conv.getActivationAttr(),
        conv.getPairingAttr(), conv.getAccumulateAttr(), conv.getLayoutAttr());
    rewriter.eraseOp(conv);
    return success();
  }
};

struct SpconvImportLinalgPass
    : public spconv::impl::SpconvImportLinalgBase<SpconvImportLinalgPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<ImportConv, ImportDepthwiseConv, FuseEpilogue>(&getContext());
    populateFoldChannelAffinePatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
