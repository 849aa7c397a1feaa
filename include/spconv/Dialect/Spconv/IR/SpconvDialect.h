//===- SpconvDialect.h - spconv dialect -------------------------*- C++ -*-===//
#ifndef SPCONV_DIALECT_SPCONV_IR_SPCONVDIALECT_H
#define SPCONV_DIALECT_SPCONV_IR_SPCONVDIALECT_H

#include "mlir/IR/Dialect.h"
#include "mlir/IR/BuiltinAttributes.h"

#include "spconv/Dialect/Spconv/IR/SpconvOpsDialect.h.inc"
#include "spconv/Dialect/Spconv/IR/SpconvEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "spconv/Dialect/Spconv/IR/SpconvAttrs.h.inc"

#endif
