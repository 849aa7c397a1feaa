//===- UnrollTemplate.cpp - spconv-unroll-template ------------------------===//
//
// The pass form of unrollTemplateNests (Conversion/ConvTemplate/UnrollNests.h), for
// pipelines that stop after convert-spconv-to-affine to look at or transform the nests.
//
//===----------------------------------------------------------------------===//
#include "spconv/Conversion/ConvTemplate/KernelInfo.h"
#include "spconv/Conversion/ConvTemplate/UnrollNests.h"
#include "spconv/Transforms/Passes.h"

#include "mlir/Interfaces/FunctionInterfaces.h"

namespace spconv {
#define GEN_PASS_DEF_SPCONVUNROLLTEMPLATE
#include "spconv/Transforms/Passes.h.inc"
} // namespace spconv

using namespace mlir;
using namespace spconv;

namespace {
struct SpconvUnrollTemplatePass
    : public spconv::impl::SpconvUnrollTemplateBase<SpconvUnrollTemplatePass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<FunctionOpInterface> templates;
    getOperation()->walk([&](FunctionOpInterface func) {
      if (func->hasAttr(kTemplateAttr) || func->hasAttr(kBlockTemplateAttr))
        templates.push_back(func);
    });
    for (FunctionOpInterface func : templates)
      if (failed(unrollTemplateNests(func)))
        return signalPassFailure();
  }
};
} // namespace
