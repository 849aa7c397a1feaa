//===- ImportOnnx.h - ONNX model to spconv.conv2d funcs ---------*- C++ -*-===//
//
// Imports the 2-D float convolutions of an ONNX model (with BatchNormalization folded into
// their weights and Relu/Clip fused as activations) as one func.func per conv, and lists the
// whole graph in JSON so that a host framework can run what spconv does not. See
// docs/onnx-import.md.
//
//===----------------------------------------------------------------------===//
#ifndef SPCONV_TARGET_IMPORTONNX_H
#define SPCONV_TARGET_IMPORTONNX_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <string>
#include <utility>

namespace llvm {
class SourceMgr;
} // namespace llvm

namespace spconv {
struct OnnxImportOptions {
  /// Batch size given to the first dimension of every 4-D graph input (0 = keep the model's).
  int64_t batch = 0;
  /// Full shapes for named graph inputs; applied after `batch`.
  llvm::SmallVector<std::pair<std::string, llvm::SmallVector<int64_t>>> inputShapes;
  /// Where to write the JSON listing of the graph ('' = nowhere).
  std::string listingPath;
};

/// Parses a `--onnx-input-shape` value, `name:1x3x224x224`. Returns false on a bad value.
bool parseOnnxInputShape(llvm::StringRef text, std::string &name,
                         llvm::SmallVectorImpl<int64_t> &dims);

/// Imports the ONNX model held by the main buffer of `sourceMgr` (its identifier is the model
/// path: external data is resolved relative to its directory). Errors are emitted at the
/// offending node and yield a null module; nothing is written then.
mlir::OwningOpRef<mlir::ModuleOp> importOnnxModel(llvm::SourceMgr &sourceMgr,
                                                  mlir::MLIRContext *context,
                                                  const OnnxImportOptions &options);

/// Registers `--import-onnx` (and its `--onnx-*` flags) with mlir-translate.
void registerImportOnnxTranslation();
} // namespace spconv

#endif // SPCONV_TARGET_IMPORTONNX_H
