//===- spconv-opt.cpp - mlir-opt with the spconv dialect and passes -------===//
#include "spconv/Conversion/Passes.h"
#include "spconv/Dialect/Spconv/IR/SpconvDialect.h"
#include "spconv/Target/TranslateRegistration.h"
#include "spconv/Transforms/Passes.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  spconv::registerSpconvTransformsPasses();
  spconv::registerSpconvConversionPasses();

  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  spconv::registerSpconvToolDialects(registry);
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "spconv optimizer driver\n", registry));
}
