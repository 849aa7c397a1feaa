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
#include "spconv/Dialect/Spconv/IR/SpconvDialect.h"

namespace spconv {
#define GEN_PASS_DECL
#include "spconv/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "spconv/Transforms/Passes.h.inc"
} // namespace spconv

#endif
