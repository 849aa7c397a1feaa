//===- SpconvToGPU.cpp - spconv.conv2d to a gpu.func template -------------===//
//
// convert-spconv-to-affine followed by spconv-unroll-template: the kernel of
// emitAffineGPUKernel with every chunk's nest unrolled to straight-line FMAs whose weights
// are placeholder immediates.
//
//===----------------------------------------------------------------------===//
#include "spconv/Conversion/SpconvToGPU/SpconvToGPU.h"
#include "spconv/Conversion/ConvTemplate/UnrollNests.h"
#include "spconv/Conversion/Passes.h"
#include "spconv/Conversion/TilingOptions.h"

namespace spconv {
#define GEN_PASS_DEF_CONVERTSPCONVTOGPU
#include "spconv/Conversion/Passes.h.inc"
} // namespace spconv

using namespace mlir;
using namespace spconv;

gpu::GPUFuncOp spconv::emitGPUKernel(const ConvShape &shape, const Tiling &tiling,
                                     gpu::GPUModuleOp gpuModule, StringRef name, Location loc,
                                     KernelForm form) {
  gpu::GPUFuncOp func = emitAffineGPUKernel(shape, tiling, gpuModule, name, loc, form);
  if (failed(unrollTemplateNests(func))) {
    func.erase();
    return nullptr;
  }
  return func;
}

namespace {
struct ConvertSpconvToGPUPass
    : public TilingOptionsPass<spconv::impl::ConvertSpconvToGPUBase<ConvertSpconvToGPUPass>> {
  using TilingOptionsPass::TilingOptionsPass;

  void runOnOperation() override {
    runWithRequestedTiling([&](const Tiling &requested, TargetGPU gpu) {
      return lowerConvsToGPU(getOperation(), requested, gpu, /*unroll=*/true);
    });
  }
};
} // namespace
