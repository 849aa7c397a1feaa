//===- spconv-translate.cpp - mlir-translate with spconv's translations ---===//
//
// --spconv-to-ptx, --spconv-to-cubin, --spconv-to-launch-json and --spconv-compile take a
// module with spconv.conv2d ops (compiled by spconv-compile-kernels or not) to the artifacts
// a runtime loads; the upstream translations (e.g. --mlir-to-llvmir) are there as well.
//
// The driver is mlir-translate's (same flags, same behaviour) except that the input goes
// through spconv::terminateParserInput before it is split and parsed: MLIR 22's
// mlirTranslateMain gives no hook for that, and without it a file cut inside a
// `dense_resource` blob makes the upstream lexer read past the end of its buffer.
//
//===----------------------------------------------------------------------===//
#include "spconv/Support/ParserInput.h"
#include "spconv/Target/TranslateRegistration.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllTranslations.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "mlir/Support/ToolUtilities.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;

namespace {
struct DriverFlags {
  llvm::cl::opt<std::string> inputFilename{llvm::cl::Positional,
                                           llvm::cl::desc("<input file>"), llvm::cl::init("-")};
  llvm::cl::opt<std::string> outputFilename{"o", llvm::cl::desc("Output filename"),
                                            llvm::cl::value_desc("filename"),
                                            llvm::cl::init("-")};
  llvm::cl::opt<bool> allowUnregisteredDialects{
      "allow-unregistered-dialect",
      llvm::cl::desc("Allow operation with no registered dialects (discouraged: testing only!)"),
      llvm::cl::init(false)};
  llvm::cl::opt<std::string> inputSplitMarker{
      "split-input-file", llvm::cl::ValueOptional,
      llvm::cl::callback([this](const std::string &value) {
        if (value.empty())
          inputSplitMarker.setValue(kDefaultSplitMarker);
      }),
      llvm::cl::desc("Split the input file into chunks using the given or default marker "
                     "and process each chunk independently"),
      llvm::cl::init("")};
  llvm::cl::opt<SourceMgrDiagnosticVerifierHandler::Level> verifyDiagnostics{
      "verify-diagnostics", llvm::cl::ValueOptional,
      llvm::cl::desc("Check that emitted diagnostics match expected-* lines on the "
                     "corresponding line"),
      llvm::cl::values(
          clEnumValN(SourceMgrDiagnosticVerifierHandler::Level::All, "all",
                     "Check all diagnostics (expected, unexpected, near-misses)"),
          clEnumValN(SourceMgrDiagnosticVerifierHandler::Level::All, "",
                     "Check all diagnostics (expected, unexpected, near-misses)"),
          clEnumValN(SourceMgrDiagnosticVerifierHandler::Level::OnlyExpected, "only-expected",
                     "Check only expected diagnostics"))};
  llvm::cl::opt<bool> errorDiagnosticsOnly{
      "error-diagnostics-only",
      llvm::cl::desc("Filter all non-error diagnostics (discouraged: testing only!)"),
      llvm::cl::init(false)};
  llvm::cl::opt<std::string> outputSplitMarker{
      "output-split-marker", llvm::cl::desc("Split marker to use for merging the output"),
      llvm::cl::init("")};
  llvm::cl::list<const Translation *, bool, TranslationParser> translations{
      "", llvm::cl::desc("Translations to perform"), llvm::cl::Required};
};

/// Runs the requested translations, chained, on one (split) chunk of the input.
LogicalResult translateChunk(DriverFlags &flags, TimingScope &timing,
                             std::unique_ptr<llvm::MemoryBuffer> buffer, raw_ostream &os) {
  // Chunks of a split buffer are not NUL-terminated; the parser needs them to be.
  if (!buffer->getBuffer().ends_with('\0'))
    buffer = llvm::MemoryBuffer::getMemBufferCopy(buffer->getBuffer(),
                                                  buffer->getBufferIdentifier());
  std::string dataIn, dataOut;
  for (size_t i = 0, e = flags.translations.size(); i < e; ++i) {
    const Translation *translation = flags.translations[i];
    TimingScope translationTiming = timing.nest(translation->getDescription());
    llvm::raw_string_ostream dataStream(dataOut);
    raw_ostream &out = i + 1 == e ? os : dataStream;

    MLIRContext context;
    context.allowUnregisteredDialects(flags.allowUnregisteredDialects);
    context.printOpOnDiagnostic(flags.verifyDiagnostics.getNumOccurrences() == 0);
    auto sourceMgr = std::make_shared<llvm::SourceMgr>();
    sourceMgr->AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());

    LogicalResult result = success();
    if (flags.verifyDiagnostics.getNumOccurrences()) {
      // The translation is expected to fail here; what counts is the diagnostics.
      SourceMgrDiagnosticVerifierHandler handler(*sourceMgr, &context,
                                                 flags.verifyDiagnostics);
      (void)(*translation)(sourceMgr, os, &context);
      result = handler.verify();
    } else {
      SourceMgrDiagnosticHandler handler(*sourceMgr, &context);
      std::optional<ScopedDiagnosticHandler> errorsOnly;
      if (flags.errorDiagnosticsOnly)
        errorsOnly.emplace(&context, [](Diagnostic &diag) {
          return success(diag.getSeverity() != DiagnosticSeverity::Error);
        });
      result = (*translation)(sourceMgr, out, &context);
    }
    if (failed(result))
      return failure();
    if (i + 1 < e) {
      dataIn = std::move(dataOut);
      dataOut.clear();
      buffer = llvm::MemoryBuffer::getMemBuffer(dataIn);
    }
  }
  return success();
}
} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  registerAllTranslations();
  spconv::registerSpconvTranslations();

  DriverFlags flags;
  registerAsmPrinterCLOptions();
  registerMLIRContextCLOptions();
  registerTranslationCLOptions();
  registerDefaultTimingManagerCLOptions();
  llvm::cl::ParseCommandLineOptions(argc, argv, "spconv translation driver");

  DefaultTimingManager timingManager;
  applyDefaultTimingManagerCLOptions(timingManager);
  TimingScope timing = timingManager.getRootScope();

  std::string errorMessage;
  std::unique_ptr<llvm::MemoryBuffer> input;
  // A translation that asks for an aligned buffer reads a binary format, not MLIR text:
  // its input is passed on untouched.
  if (std::optional<llvm::Align> align = flags.translations[0]->getInputAlignment())
    input = openInputFile(flags.inputFilename, *align, &errorMessage);
  else
    input = spconv::openParserInput(flags.inputFilename, &errorMessage);
  if (!input) {
    llvm::errs() << errorMessage << "\n";
    return 1;
  }

  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(flags.outputFilename, &errorMessage);
  if (!output) {
    llvm::errs() << errorMessage << "\n";
    return 1;
  }
  auto process = [&](std::unique_ptr<llvm::MemoryBuffer> chunk, raw_ostream &os) {
    return translateChunk(flags, timing, std::move(chunk), os);
  };
  if (failed(splitAndProcessBuffer(std::move(input), process, output->os(),
                                   flags.inputSplitMarker, flags.outputSplitMarker)))
    return 1;
  output->keep();
  return 0;
}
