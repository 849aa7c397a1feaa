//===- TilingOptions.h - a pass's tiling options as a Tiling ----*- C++ -*-===//
//
// The passes that lower or compile convs share the options of TilingOptions.td. Their
// generated bases declare them as protected members, so the pass reads them through this
// class, put between the pass and its generated base:
//
//   struct MyPass : TilingOptionsPass<impl::MyPassBase<MyPass>> {
//     using TilingOptionsPass::TilingOptionsPass;
//     void runOnOperation() override {
//       FailureOr<Tiling> requested = requestedTiling();
//       if (failed(requested)) return signalPassFailure();
//       ... chooseTiling(shape, *requested, targetGPU()) ...
//
// or, where the pass does nothing else, runWithRequestedTiling(lower).
//
//===----------------------------------------------------------------------===//
#ifndef SPCONV_CONVERSION_TILINGOPTIONS_H
#define SPCONV_CONVERSION_TILINGOPTIONS_H

#include "spconv/Conversion/ConvTemplate/ConvShape.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Support/LLVM.h"

#include <string>

namespace spconv {

template <typename GeneratedBase> class TilingOptionsPass : public GeneratedBase {
public:
  using GeneratedBase::GeneratedBase;

protected:
  /// The tiling the options request (0 = the heuristic's, field by field). A request
  /// invalidTilingRequest refuses is an error at the operation's location (the options are
  /// wrong, not the module: the module is not printed) and a failure.
  mlir::FailureOr<Tiling> requestedTiling() {
    Tiling requested{this->blockK,       this->outputsPerThread, this->tileP,
                     this->threadsQ,     this->chunkC,           this->splitC,
                     this->chunkLoop,    this->imagesPerBlock,   this->blockOrder,
                     this->asyncStaging, this->columnOrder,      this->directInputs};
    requested.channelVector = this->channelVector;
    requested.loadAhead = this->loadAhead;
    requested.dynamicShared = this->dynamicShared;
    requested.clusterSplit = this->clusterSplit;
    if (std::string why = invalidTilingRequest(requested, this->numSMs); !why.empty()) {
      mlir::emitError(this->getOperation().getLoc(), why);
      return mlir::failure();
    }
    return requested;
  }

  /// The GPU the heuristic tiles for (the num-sms option).
  TargetGPU targetGPU() const { return TargetGPU::fromRequest(this->numSMs); }

  /// The body of a pass that only lowers: `lower` gets the requested tiling and the target
  /// GPU, and the pass fails where the request is refused or `lower` fails.
  void
  runWithRequestedTiling(llvm::function_ref<mlir::LogicalResult(const Tiling &, TargetGPU)> lower) {
    mlir::FailureOr<Tiling> requested = requestedTiling();
    if (mlir::failed(requested) || mlir::failed(lower(*requested, targetGPU())))
      this->signalPassFailure();
  }
};

} // namespace spconv

#endif // SPCONV_CONVERSION_TILINGOPTIONS_H
