//===- Passes.h - spconv transformation passes ------------------*- C++ -*-===//
#ifndef SPCONV_TRANSFORMS_PASSES_H
#define SPCONV_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"
#include "spconv/Conversion/ConvTemplate/TuningTable.h"
#include "spconv/Dialect/Spconv/IR/SpconvDialect.h"

#include <memory>

namespace spconv {
#define GEN_PASS_DECL
#include "spconv/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "spconv/Transforms/Passes.h.inc"

/// spconv-choose-pairing with a table already read: spconv-translate reads its table once
/// per run and hands it to both this pass and the tiling lookup. Null: no table.
std::unique_ptr<mlir::Pass>
createSpconvChoosePairingWithTable(std::shared_ptr<const TuningTable> table);
} // namespace spconv

#endif
