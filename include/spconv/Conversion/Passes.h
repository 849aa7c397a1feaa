//===- Passes.h - spconv conversion passes ----------------------*- C++ -*-===//
#ifndef SPCONV_CONVERSION_PASSES_H
#define SPCONV_CONVERSION_PASSES_H

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Pass/Pass.h"

namespace spconv {
#define GEN_PASS_DECL
#include "spconv/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "spconv/Conversion/Passes.h.inc"
} // namespace spconv

#endif
