//===- FoldWeights.h - fold real weights into a lowered template -*- C++ -*-===//
#ifndef SPCONV_TRANSFORMS_FOLDWEIGHTS_H
#define SPCONV_TRANSFORMS_FOLDWEIGHTS_H

#include "mlir/IR/BuiltinAttributeInterfaces.h"
#include "mlir/IR/Operation.h"

namespace spconv {
struct FoldCounts {
  int64_t kept = 0, deleted = 0, deadErased = 0;
};
/// Folds `weights` (KCRS) and `bias` (K, may be null) into the placeholder constants of the
/// LLVM-dialect function `kernel`, deleting zero-weight FMAs unless `strictIEEE`. Errors
/// are reported at `diagLoc` (the conv the weights belong to, when there is one).
mlir::FailureOr<FoldCounts> foldWeightsInto(mlir::Operation *kernel,
                                            mlir::ElementsAttr weights,
                                            mlir::ElementsAttr bias, bool strictIEEE,
                                            mlir::Location diagLoc);
} // namespace spconv

#endif
