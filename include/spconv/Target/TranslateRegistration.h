//===- TranslateRegistration.h - spconv translations ------------*- C++ -*-===//
#ifndef SPCONV_TARGET_TRANSLATEREGISTRATION_H
#define SPCONV_TARGET_TRANSLATEREGISTRATION_H

#include "mlir/IR/DialectRegistry.h"

namespace spconv {
/// Dialects and interfaces every spconv tool needs: spconv, the upstream dialects of the
/// pipeline, the NVVM target and the LLVM IR translations it serialises through.
void registerSpconvToolDialects(mlir::DialectRegistry &registry);
/// --spconv-to-ptx, --spconv-to-cubin, --spconv-to-launch-json, --spconv-compile.
void registerSpconvTranslations();
} // namespace spconv

#endif
