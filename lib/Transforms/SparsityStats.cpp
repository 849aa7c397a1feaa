//===- SparsityStats.cpp - per-conv sparsity report -----------------------===//
#include "spconv/Dialect/Spconv/IR/SpconvOps.h"
#include "spconv/Transforms/Passes.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/ToolOutputFile.h"

#include <cmath>

namespace spconv {
#define GEN_PASS_DEF_SPCONVSPARSITYSTATS
#include "spconv/Transforms/Passes.h.inc"
} // namespace spconv

using namespace mlir;
using namespace spconv;

namespace {
struct SpconvSparsityStatsPass
    : public spconv::impl::SpconvSparsityStatsBase<SpconvSparsityStatsPass> {
  using Base::Base;

  void runOnOperation() override {
    std::string error;
    std::unique_ptr<llvm::ToolOutputFile> file;
    if (outputFile != "-") {
      file = openOutputFile(outputFile, &error);
      if (!file) {
        getOperation()->emitError("cannot open '") << outputFile << "': " << error;
        return signalPassFailure();
      }
    }
    llvm::raw_ostream &os = file ? file->os() : llvm::errs();
    bool failedRead = false;
    getOperation()->walk([&](Conv2DOp op) {
      FailureOr<std::vector<float>> w = readF32Elements(op.getWeights());
      if (failed(w)) {
        op.emitError("cannot read the f32 weights (missing or truncated dense_resource?)");
        failedRead = true;
        return;
      }
      int64_t nnz = 0, nonFinite = 0;
      for (float v : *w) {
        nnz += v != 0.0f;
        nonFinite += !std::isfinite(v);
      }
      int64_t total = static_cast<int64_t>(w->size());
      int64_t flop = 2 * op.getOutHeight() * op.getOutWidth() * nnz;
      std::string loc;
      llvm::raw_string_ostream locOs(loc);
      op.getLoc().print(locOs);
      os << llvm::formatv("spconv.conv2d {0}: input {1}x{2}x{3}x{4} weights {5}x{6}x{7}x{8} "
                          "output {9}x{10}x{11}x{12} nnz {13}/{14} sparsity {15:F4} "
                          "useful-flop/image {16} weight-bytes {17} non-finite {18}\n",
                          loc, op.getBatch(), op.getInChannels(), op.getInHeight(),
                          op.getInWidth(), op.getOutChannels(),
                          op.getWeightsType().getDimSize(1), op.getFilterHeight(),
                          op.getFilterWidth(), op.getBatch(), op.getOutChannels(),
                          op.getOutHeight(), op.getOutWidth(), nnz, total,
                          total ? 1.0 - double(nnz) / double(total) : 0.0, flop, total * 4,
                          nonFinite);
    });
    if (file)
      file->keep();
    if (failedRead)
      signalPassFailure();
    markAllAnalysesPreserved();
  }
};
} // namespace
