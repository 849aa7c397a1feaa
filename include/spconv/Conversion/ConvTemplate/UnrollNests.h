//===- UnrollNests.h - the template's affine nests to straight-line code -*- C++ -*-===//
//
// The FMAs of a template are emitted as affine nests (ConvTemplateEmitter::emitChunkNest)
// and turned into straight-line code here, by upstream affine utilities: every loop is fully
// unrolled, outermost first, with affine::loopUnrollFull.
//
// Which loops must go: a *weight loop* is one whose induction variable reaches the weight
// operand of an FMA (cc, r, s, kk): unrolled, its weights fold to the placeholder immediates
// that spconv-fold-weights and the PTX-level fold look for. A *data loop* (o, the outputs of
// a thread) only indexes the tile and the private register arrays; it is fully unrolled too,
// because the register arrays become SSA values only when every access has constant
// indices. So the rule is: every affine.for of a template function is fully unrolled, and
// one whose trip count is not constant once its enclosing loops are unrolled is an error.
//
//===----------------------------------------------------------------------===//
#ifndef SPCONV_CONVERSION_CONVTEMPLATE_UNROLLNESTS_H
#define SPCONV_CONVERSION_CONVTEMPLATE_UNROLLNESTS_H

#include "mlir/IR/Operation.h"
#include "mlir/Support/LogicalResult.h"

namespace spconv {
/// Fully unrolls every affine.for in `func` (a gpu.func or func.func template), folds the
/// weight and address computations of the unrolled bodies to constants, forwards the
/// private register arrays (memref.alloca accessed only by affine.load/store with constant
/// indices in one block) to SSA values and erases them, and lowers any affine op left to
/// arith. Emits an error at the offending op and fails if a loop cannot be fully unrolled
/// or a register array cannot be forwarded.
mlir::LogicalResult unrollTemplateNests(mlir::Operation *func);
} // namespace spconv

#endif
