//===- ChoosePairing.cpp - a half-precision conv's pairing from a tuning table -===//
//
// The pairing of a half-precision conv (docs/design.md, "Half precision") is part of its
// kernel's word shape, which every stage derives from the op (ConvShape::fromOp): the
// lowering, the PTX-level fold, the CPU twin, the launch sidecar. A measured pairing is
// therefore written onto the op, as the `pairing` a user would give, before any of them
// runs; each then sees the same one.
//
//===----------------------------------------------------------------------===//
#include "spconv/Conversion/ConvTemplate/KernelInfo.h"
#include "spconv/Conversion/ConvTemplate/TuningTable.h"
#include "spconv/Dialect/Spconv/IR/SpconvOps.h"
#include "spconv/Transforms/Passes.h"

#include "llvm/ADT/STLExtras.h"


namespace spconv {
#define GEN_PASS_DEF_SPCONVCHOOSEPAIRING
#include "spconv/Transforms/Passes.h.inc"
} // namespace spconv

using namespace mlir;
using namespace spconv;

namespace {
struct SpconvChoosePairingPass
    : public spconv::impl::SpconvChoosePairingBase<SpconvChoosePairingPass> {
  using Base::Base;

  /// A table read by the caller; `tuningTable` is then not consulted.
  explicit SpconvChoosePairingPass(std::shared_ptr<const TuningTable> table)
      : given(std::move(table)), useGiven(true) {}

  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::shared_ptr<const TuningTable> table = given;
    if (!useGiven) {
      // The option empty: $SPCONV_TUNING_TABLE, as spconv-translate's flag.
      std::string path = TuningTable::resolvePath(
          tuningTable.empty() ? std::nullopt : std::optional<llvm::StringRef>(tuningTable));
      if (path.empty())
        return markAllAnalysesPreserved();
      llvm::Expected<TuningTable> loaded = TuningTable::load(path);
      if (!loaded) {
        module.emitError(llvm::toString(loaded.takeError()));
        return signalPassFailure();
      }
      table = std::make_shared<const TuningTable>(std::move(*loaded));
    }
    if (!table)
      return markAllAnalysesPreserved();

    MLIRContext *ctx = &getContext();
    module.walk([&](Conv2DOp op) {
      // The user's pairing wins, and so does the image-pair layout (its words pair images);
      // a compiled conv's kernel already has its word shape.
      if (op.getPairing() || op.getLayout() == TensorLayout::image_pairs ||
          op->hasAttr(kKernelAttr))
        return;
      ConvShape shape = ConvShape::fromOp(op);
      // Reading the weights (to count them) costs a pass over each conv's: only where an
      // entry could choose.
      if (!table->mayChoosePairing(shape))
        return;
      FailureOr<std::vector<float>> weights = readF32Elements(op.getWeights());
      // Unreadable weights leave the op alone: compiling it reports them, at the conv.
      if (failed(weights))
        return;
      int64_t nnz = llvm::count_if(*weights, [](float v) { return v != 0.0f; });
      std::optional<TuningTable::PairingChoice> choice = table->choosePairing(shape, nnz);
      if (!choice)
        return;
      // An entry's key is the conv's shape, so an adjacent pairing the shape cannot take
      // (a hand-edited table) is the table's error, reported at the conv it would break.
      if (choice->pairing == Pairing::adjacent && !canPairAdjacent(shape.logical())) {
        emitWarning(op.getLoc(), "tuning table entry ")
            << (choice->entry->source.empty() ? "" : choice->entry->source + " ")
            << "chooses pairing 'adjacent', which this conv cannot take (a 1x1 filter at "
               "stride 1 without padding, or a wider filter at column stride 1, over even "
               "widths); the compiler chooses instead";
        return;
      }
      // OutputPairing mirrors Pairing's values (SpconvDialect.td).
      op.setPairing(static_cast<OutputPairing>(choice->pairing));
      const std::string &source = choice->entry->source;
      op->setAttr("spconv.pairing_by",
                  StringAttr::get(ctx, source.empty() ? "tuning table" : source));
      ++numChosen;
    });
  }

private:
  std::shared_ptr<const TuningTable> given;
  bool useGiven = false;
};
} // namespace

std::unique_ptr<Pass>
spconv::createSpconvChoosePairingWithTable(std::shared_ptr<const TuningTable> table) {
  return std::make_unique<SpconvChoosePairingPass>(std::move(table));
}
