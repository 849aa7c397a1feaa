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
/// Reads the f32 values of a `dense<...>` or `dense_resource<...>` attribute in row-major
/// order. Fails (returns failure) for other element types or a resource whose blob is missing
/// or has the wrong size, which happens when a file was truncated.
llvm::FailureOr<std::vector<float>> readF32Elements(mlir::ElementsAttr attr);
} // namespace spconv

#endif
