//===- LoweringInterfaces.h - dialect-to-LLVM interfaces we rely on -*- C++ -*-===//
#ifndef SPCONV_TRANSFORMS_LOWERINGINTERFACES_H
#define SPCONV_TRANSFORMS_LOWERINGINTERFACES_H

#include "mlir/IR/DialectRegistry.h"

namespace spconv {
/// convert-gpu-to-nvvm and convert-to-llvm take the patterns of arith, cf, memref, func, ...
/// from each dialect's ConvertToLLVMPatternInterface, registered as extensions. Passes that
/// lower templates register them, so they work in any host tool (mlir-opt, a plugin user's
/// driver), not only in ours.
void registerLoweringInterfaces(mlir::DialectRegistry &registry);
} // namespace spconv

#endif
