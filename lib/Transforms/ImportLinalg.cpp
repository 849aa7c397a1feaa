//===- ImportLinalg.cpp - linalg.conv_2d_nchw_fchw -> spconv.conv2d -------===//
#include "spconv/Dialect/Spconv/IR/SpconvOps.h"
#include "spconv/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace spconv {
#define GEN_PASS_DEF_SPCONVIMPORTLINALG
#include "spconv/Transforms/Passes.h.inc"
} // namespace spconv

using namespace mlir;
using namespace spconv;

namespace {
/// conv_2d_nchw_fchw(input, constant filter) into a zero-filled init.
struct ImportConv : OpRewritePattern<linalg::Conv2DNchwFchwOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::Conv2DNchwFchwOp conv,
                                PatternRewriter &rewriter) const override {
    if (!conv.hasPureTensorSemantics())
      return rewriter.notifyMatchFailure(conv, "not on tensors");
    ElementsAttr filter;
    if (!matchPattern(conv.getInputs()[1], m_Constant(&filter)))
      return rewriter.notifyMatchFailure(conv, "filter is not a constant");
    auto fill = conv.getOutputs()[0].getDefiningOp<linalg::FillOp>();
    if (!fill || !matchPattern(fill.getInputs()[0], m_AnyZeroFloat()))
      return rewriter.notifyMatchFailure(conv, "init is not a zero fill");
    SmallVector<int64_t> strides(conv.getStrides().getValues<int64_t>());
    SmallVector<int64_t> dilations(conv.getDilations().getValues<int64_t>());
    auto op = rewriter.create<Conv2DOp>(
        conv.getLoc(), conv.getResultTypes()[0], conv.getInputs()[0], filter,
        /*bias=*/ElementsAttr(), rewriter.getDenseI64ArrayAttr(strides),
        rewriter.getDenseI64ArrayAttr({0, 0, 0, 0}), rewriter.getDenseI64ArrayAttr(dilations),
        rewriter.getI64IntegerAttr(1),
        ActivationAttr::get(rewriter.getContext(), Activation::none));
    rewriter.replaceOp(conv, op.getResult());
    return success();
  }
};

struct SpconvImportLinalgPass
    : public spconv::impl::SpconvImportLinalgBase<SpconvImportLinalgPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<ImportConv>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
