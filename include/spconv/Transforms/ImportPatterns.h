//===- ImportPatterns.h - rewrites that bring IR into spconv.conv2d ---*- C++ -*-===//
//
// Patterns shared by spconv-import-linalg and by pipelines that want them on their own.
//
//===----------------------------------------------------------------------===//
#ifndef SPCONV_TRANSFORMS_IMPORTPATTERNS_H
#define SPCONV_TRANSFORMS_IMPORTPATTERNS_H

#include "mlir/IR/PatternMatch.h"

namespace spconv {
/// Folds a per-channel affine epilogue (inference batch norm, scale, shift), optionally
/// followed by ReLU or ReLU6, that is the sole user of a spconv.conv2d into its weights, bias
/// and activation. Keeps the weights' zero pattern exactly or does not fold.
void populateFoldChannelAffinePatterns(mlir::RewritePatternSet &patterns);
} // namespace spconv

#endif // SPCONV_TRANSFORMS_IMPORTPATTERNS_H
