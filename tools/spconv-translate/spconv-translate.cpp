//===- spconv-translate.cpp - mlir-translate with spconv's translations ---===//
//
// --spconv-to-ptx, --spconv-to-cubin, --spconv-to-launch-json and --spconv-compile take a
// module with spconv.conv2d ops (compiled by spconv-compile-kernels or not) to the artifacts
// a runtime loads; the upstream translations (e.g. --mlir-to-llvmir) are there as well.
//
//===----------------------------------------------------------------------===//
#include "spconv/Target/TranslateRegistration.h"

#include "mlir/InitAllTranslations.h"
#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"

int main(int argc, char **argv) {
  mlir::registerAllTranslations();
  spconv::registerSpconvTranslations();
  return mlir::failed(mlir::mlirTranslateMain(argc, argv, "spconv translation driver"));
}
