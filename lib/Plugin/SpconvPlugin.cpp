//===- SpconvPlugin.cpp - spconv as an mlir-opt dialect and pass plugin ---===//
#include "spconv/Conversion/Passes.h"
#include "spconv/Dialect/Spconv/IR/SpconvDialect.h"
#include "spconv/Transforms/Passes.h"

#include "mlir/Tools/Plugins/DialectPlugin.h"
#include "mlir/Tools/Plugins/PassPlugin.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/Compiler.h"

extern "C" LLVM_ATTRIBUTE_WEAK mlir::DialectPluginLibraryInfo mlirGetDialectPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "Spconv", LLVM_VERSION_STRING,
          [](mlir::DialectRegistry *registry) { registry->insert<spconv::SpconvDialect>(); }};
}

extern "C" LLVM_ATTRIBUTE_WEAK mlir::PassPluginLibraryInfo mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "SpconvPasses", LLVM_VERSION_STRING, []() {
            spconv::registerSpconvTransformsPasses();
            spconv::registerSpconvConversionPasses();
          }};
}
