//===- ImportOnnx.cpp - the --import-onnx translation ---------------------===//
//
// Drives the import (read -> per-Conv fusion -> funcs -> listing) and registers it with
// mlir-translate. Diagnostics of the import are printed here rather than by the driver's
// source-manager handler: their locations point into the binary model, whose "lines" must
// not be echoed to the terminal.
//
//===----------------------------------------------------------------------===//
#include "OnnxGraph.h"

#include "spconv/Dialect/Spconv/IR/SpconvDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/ManagedStatic.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;
using namespace spconv;
using namespace spconv::onnx_import;

bool spconv::parseOnnxInputShape(StringRef text, std::string &name,
                                 SmallVectorImpl<int64_t> &dims) {
  // The shape follows the last ':' (tensor names may contain ':' themselves).
  size_t colon = text.rfind(':');
  if (colon == StringRef::npos || colon == 0)
    return false;
  name = text.take_front(colon).str();
  SmallVector<StringRef> parts;
  text.drop_front(colon + 1).split(parts, 'x');
  dims.clear();
  for (StringRef part : parts) {
    int64_t d = 0;
    if (part.getAsInteger(10, d) || d <= 0)
      return false;
    dims.push_back(d);
  }
  return !dims.empty();
}

/// A valid bare MLIR symbol from an ONNX node name: [A-Za-z_][A-Za-z0-9_$.]*, unique.
static std::string funcNameFor(StringRef nodeName, unsigned fileIndex,
                               llvm::StringSet<> &taken) {
  std::string name;
  for (char c : nodeName)
    name.push_back(llvm::isAlnum(c) || c == '_' || c == '$' || c == '.' ? c : '_');
  if (name.empty())
    name = "conv_" + std::to_string(fileIndex);
  else if (!llvm::isAlpha(name[0]) && name[0] != '_')
    name = "conv_" + name;
  std::string unique = name;
  for (unsigned i = 1; !taken.insert(unique).second; ++i)
    unique = name + "_" + std::to_string(i);
  return unique;
}

OwningOpRef<ModuleOp> spconv::importOnnxModel(llvm::SourceMgr &sourceMgr, MLIRContext *context,
                                              const OnnxImportOptions &options) {
  context->loadDialect<func::FuncDialect, SpconvDialect>();
  const llvm::MemoryBuffer *buffer = sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
  OnnxGraph graph;
  graph.context = context;
  if (failed(readOnnxModel(buffer->getBufferIdentifier(), buffer->getBuffer(), options, graph)))
    return nullptr;

  std::vector<ImportedConv> convs;
  llvm::StringSet<> taken;
  llvm::DenseSet<unsigned> fusedAdds;
  for (unsigned pos = 0; pos < graph.nodes.size(); ++pos) {
    const onnx::NodeProto &node = *graph.nodes[pos];
    if (node.op_type() != "Conv" || !(node.domain().empty() || node.domain() == "ai.onnx"))
      continue;
    FailureOr<ImportedConv> conv = importConv(graph, pos, fusedAdds);
    if (failed(conv))
      return nullptr;
    if (conv->addPos)
      fusedAdds.insert(*conv->addPos);
    conv->funcName = funcNameFor(node.name(), graph.fileIndex[pos], taken);
    convs.push_back(std::move(*conv));
  }

  OwningOpRef<ModuleOp> module = emitConvFuncs(graph, convs);
  // The op verifier has limits of its own (sizes the kernels can index): report them here,
  // at the node, before anything is written.
  if (failed(verify(*module)))
    return nullptr;
  if (!options.listingPath.empty()) {
    std::string error;
    std::unique_ptr<llvm::ToolOutputFile> file = openOutputFile(options.listingPath, &error);
    if (!file) {
      emitError(graph.fileLoc()) << "cannot write the listing: " << error;
      return nullptr;
    }
    file->os() << writeListing(graph, convs);
    file->keep();
  }
  return module;
}

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

namespace {
struct ImportFlags {
  llvm::cl::OptionCategory category{"ONNX import (--import-onnx)"};
  llvm::cl::opt<int64_t> batch{
      "onnx-batch",
      llvm::cl::desc("Batch size for the first dimension of every 4-D graph input"),
      llvm::cl::init(0), llvm::cl::cat(category)};
  llvm::cl::list<std::string> inputShapes{
      "onnx-input-shape",
      llvm::cl::desc("Static shape of a graph input, NAME:NxCxHxW (repeatable)"),
      llvm::cl::cat(category)};
  llvm::cl::opt<std::string> listing{
      "onnx-listing",
      llvm::cl::desc("Write a JSON listing of the whole graph (docs/onnx-import.md)"),
      llvm::cl::init(""), llvm::cl::cat(category)};
};
llvm::ManagedStatic<ImportFlags> flags;

/// Prints one diagnostic as `file:line:col: severity: message` (just `file:` for the file).
void printDiagnostic(Location loc, DiagnosticSeverity severity, const Twine &message) {
  llvm::raw_ostream &os = llvm::errs();
  Location where = loc;
  if (auto name = dyn_cast<NameLoc>(where))
    where = name.getChildLoc();
  if (auto file = dyn_cast<FileLineColLoc>(where)) {
    os << file.getFilename().getValue() << ":";
    if (file.getLine() != 0)
      os << file.getLine() << ":" << file.getColumn() << ":";
  } else {
    os << loc << ": ";
  }
  switch (severity) {
  case DiagnosticSeverity::Error: os << " error: "; break;
  case DiagnosticSeverity::Warning: os << " warning: "; break;
  case DiagnosticSeverity::Note: os << " note: "; break;
  case DiagnosticSeverity::Remark: os << " remark: "; break;
  }
  os << message << "\n";
}
} // namespace

void spconv::registerImportOnnxTranslation() {
  *flags; // register the flags before the command line is parsed
  TranslateToMLIRRegistration importOnnx(
      "import-onnx",
      "import the 2-D float convs of an ONNX model (BN folded, ReLU/ReLU6 fused) as "
      "spconv.conv2d funcs",
      [](llvm::SourceMgr &sourceMgr, MLIRContext *context) -> OwningOpRef<Operation *> {
        ScopedDiagnosticHandler handler(context, [](Diagnostic &diag) {
          printDiagnostic(diag.getLocation(), diag.getSeverity(), diag.str());
          for (Diagnostic &note : diag.getNotes())
            printDiagnostic(note.getLocation(), note.getSeverity(), note.str());
          return success();
        });
        OnnxImportOptions options;
        options.batch = flags->batch;
        options.listingPath = flags->listing;
        for (const std::string &text : flags->inputShapes) {
          std::string name;
          SmallVector<int64_t> dims;
          if (!parseOnnxInputShape(text, name, dims)) {
            emitError(UnknownLoc::get(context))
                << "--onnx-input-shape expects NAME:NxCxHxW with positive sizes, got '"
                << text << "'";
            return nullptr;
          }
          options.inputShapes.emplace_back(name, std::move(dims));
        }
        OwningOpRef<ModuleOp> module = importOnnxModel(sourceMgr, context, options);
        if (!module)
          return nullptr;
        return OwningOpRef<Operation *>(module.release());
      },
      [](DialectRegistry &registry) {
        registry.insert<func::FuncDialect, SpconvDialect>();
      },
      // Declaring an input alignment tells spconv-translate's driver that the input is
      // binary, to be passed on byte for byte (it ends MLIR text with a line break).
      llvm::Align(1));
}
