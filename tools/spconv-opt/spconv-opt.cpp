//===- spconv-opt.cpp - mlir-opt with the spconv dialect and passes -------===//
//
// mlir-opt's driver and flags, except that the input is read through
// spconv::openParserInput (see ParserInput.h for the upstream lexer defect it avoids).
//
//===----------------------------------------------------------------------===//
#include "spconv/Conversion/Passes.h"
#include "spconv/Dialect/Spconv/IR/SpconvDialect.h"
#include "spconv/Support/ParserInput.h"
#include "spconv/Target/TranslateRegistration.h"
#include "spconv/Transforms/Passes.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/ToolOutputFile.h"

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  mlir::registerAllPasses();
  spconv::registerSpconvTransformsPasses();
  spconv::registerSpconvConversionPasses();

  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  spconv::registerSpconvToolDialects(registry);

  auto [inputFilename, outputFilename] =
      mlir::registerAndParseCLIOptions(argc, argv, "spconv optimizer driver\n", registry);
  mlir::MlirOptMainConfig config = mlir::MlirOptMainConfig::createFromCLOptions();
  // Listing dialects or passes reads no input: upstream's driver does it.
  if (config.shouldShowDialects() || config.shouldListPasses())
    return mlir::asMainReturnCode(
        mlir::MlirOptMain(argc, argv, inputFilename, outputFilename, registry));

  std::string errorMessage;
  std::unique_ptr<llvm::MemoryBuffer> input =
      spconv::openParserInput(inputFilename, &errorMessage);
  if (!input) {
    llvm::errs() << errorMessage << "\n";
    return 1;
  }
  std::unique_ptr<llvm::ToolOutputFile> output =
      mlir::openOutputFile(outputFilename, &errorMessage);
  if (!output) {
    llvm::errs() << errorMessage << "\n";
    return 1;
  }
  if (mlir::failed(mlir::MlirOptMain(output->os(), std::move(input), registry, config)))
    return 1;
  output->keep();
  return 0;
}
