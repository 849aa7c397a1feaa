//===- SpconvDialect.cpp - spconv dialect ---------------------------------===//
#include "spconv/Dialect/Spconv/IR/SpconvDialect.h"
#include "spconv/Dialect/Spconv/IR/SpconvOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace spconv;

#include "spconv/Dialect/Spconv/IR/SpconvOpsDialect.cpp.inc"
#include "spconv/Dialect/Spconv/IR/SpconvEnums.cpp.inc"
#define GET_ATTRDEF_CLASSES
#include "spconv/Dialect/Spconv/IR/SpconvAttrs.cpp.inc"

void SpconvDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "spconv/Dialect/Spconv/IR/SpconvOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "spconv/Dialect/Spconv/IR/SpconvAttrs.cpp.inc"
      >();
}
