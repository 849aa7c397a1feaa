//===- SpconvOps.h - spconv operations --------------------------*- C++ -*-===//
#ifndef SPCONV_DIALECT_SPCONV_IR_SPCONVOPS_H
#define SPCONV_DIALECT_SPCONV_IR_SPCONVOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "spconv/Dialect/Spconv/IR/SpconvDialect.h"

#define GET_OP_CLASSES
#include "spconv/Dialect/Spconv/IR/SpconvOps.h.inc"

namespace spconv {
/// Reads the values of an f32, f16 or bf16 `dense<...>` or `dense_resource<...>` attribute
/// in row-major order, as f32 (exact). Fails (returns failure) for other element types or a
/// resource whose blob is missing or has the wrong size, which happens when a file was
/// truncated.
llvm::FailureOr<std::vector<float>> readF32Elements(mlir::ElementsAttr attr);
/// `values` rounded to `elem` (f32: unchanged; f16, bf16: to nearest, ties to even), as
/// f32. Fails where a nonzero value would round to zero or a finite one overflow, with
/// `crossed` the first such value's index.
llvm::FailureOr<std::vector<float>> roundToPrecision(llvm::ArrayRef<float> values,
                                                     mlir::Type elem, int64_t &crossed);
} // namespace spconv

#endif
