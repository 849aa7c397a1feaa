//===- OnnxGraph.h - the ONNX importer's view of a model --------*- C++ -*-===//
//
// Private to lib/Target/ImportOnnx. The reader (ModelReader.cpp) turns bytes into an
// OnnxGraph: a parsed, shape-inferred model with its nodes in topological order and an
// index of constants, value types and consumers. The other files only read it.
//
//===----------------------------------------------------------------------===//
#ifndef SPCONV_LIB_TARGET_IMPORTONNX_ONNXGRAPH_H
#define SPCONV_LIB_TARGET_IMPORTONNX_ONNXGRAPH_H

#include "spconv/Dialect/Spconv/IR/SpconvDialect.h"
#include "spconv/Target/ImportOnnx.h"

#include "mlir/IR/Location.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include "onnx/onnx_pb.h"

#include <optional>
#include <string>
#include <vector>

namespace spconv::onnx_import {

/// Element type and shape of a graph value; a dimension of -1 is unknown or symbolic.
struct ValueInfo {
  int32_t elemType = 0;
  std::optional<llvm::SmallVector<int64_t>> shape;
  bool isStatic() const {
    return shape && llvm::all_of(*shape, [](int64_t d) { return d > 0; });
  }
};

struct OnnxGraph {
  mlir::MLIRContext *context = nullptr;
  std::string path;      // the model file, as given
  std::string directory; // where external data is looked up
  onnx::ModelProto model;
  int64_t opset = 0; // of the default ("" / "ai.onnx") domain
  /// Nodes in topological order, and each one's index in the file's node list.
  std::vector<const onnx::NodeProto *> nodes;
  std::vector<unsigned> fileIndex;
  /// Initializers and the outputs of Constant nodes.
  llvm::StringMap<const onnx::TensorProto *> constants;
  llvm::StringMap<ValueInfo> values;
  /// Topological positions of the nodes reading each value.
  llvm::StringMap<llvm::SmallVector<unsigned>> consumers;
  llvm::StringSet<> graphOutputs;
  /// Graph inputs that are not initializers, in file order.
  std::vector<const onnx::ValueInfoProto *> inputs;

  /// `NameLoc(node name, model:line)` with line = the node's index in the file + 1.
  mlir::Location nodeLoc(unsigned pos) const;
  /// The same for the node at `index` in the file's node list.
  mlir::Location fileNodeLoc(unsigned index) const;
  /// The model file itself, for errors that belong to no node.
  mlir::Location fileLoc() const;
  /// How many nodes read `name`, counting a graph output as one more reader.
  unsigned useCount(llvm::StringRef name) const;
  const ValueInfo *lookup(llvm::StringRef name) const;
};

/// Parses, validates, applies the shape options, runs ONNX shape inference and indexes.
mlir::LogicalResult readOnnxModel(llvm::StringRef path, llvm::StringRef bytes,
                                  const OnnxImportOptions &options, OnnxGraph &graph);

/// Runs onnx::shape_inference::InferShapes (which reports errors by throwing; this is the
/// one file of the importer compiled with exceptions). Returns the message on failure.
std::optional<std::string> runOnnxShapeInference(onnx::ModelProto &model);

/// Whether `elemType` is one spconv.conv2d computes in: float32, float16 or bfloat16.
bool isFloatElemType(int32_t elemType);
/// A float16 or bfloat16 element's bits as a float (exact).
float halfBitsToFloat(uint16_t bits, int32_t elemType);

/// The values of a constant float32, float16 or bfloat16 tensor as floats (exact): raw_data,
/// float_data (float32), int32_data (float16/bfloat16: each entry holds one element's 16
/// bits) or external data, checked against its dims. `what` names it in errors ("weights",
/// "BatchNormalization scale").
mlir::FailureOr<std::vector<float>> readFloatConstant(const OnnxGraph &graph,
                                                      const onnx::TensorProto &tensor,
                                                      mlir::Location loc, llvm::StringRef what);
/// Checked dims of a constant tensor (none negative, product fits in int64).
mlir::FailureOr<llvm::SmallVector<int64_t>>
constantDims(const onnx::TensorProto &tensor, mlir::Location loc, llvm::StringRef what);

const char *elemTypeName(int32_t elemType);

/// Attribute lookup on a node (null when absent).
const onnx::AttributeProto *findAttr(const onnx::NodeProto &node, llvm::StringRef name);

/// Geometry of one 2-D conv, in spconv.conv2d's terms.
struct ConvGeometry {
  llvm::SmallVector<int64_t, 4> input;  // N, C, H, W
  llvm::SmallVector<int64_t, 4> filter; // K, C/group, R, S
  llvm::SmallVector<int64_t, 4> output; // N, K, P, Q
  int64_t strides[2] = {1, 1};
  int64_t pads[4] = {0, 0, 0, 0}; // top, left, bottom, right (ONNX's order too)
  int64_t dilations[2] = {1, 1};
  int64_t group = 1;
};

/// Reads pads/auto_pad/strides/dilations/group/kernel_shape of a Conv and checks them
/// against the input and weight shapes.
mlir::FailureOr<ConvGeometry> computeConvGeometry(const onnx::NodeProto &node,
                                                  llvm::ArrayRef<int64_t> inputShape,
                                                  llvm::ArrayRef<int64_t> weightShape,
                                                  mlir::Location loc);

/// One imported conv: the Conv node, what was fused into it, and its folded constants.
struct ImportedConv {
  unsigned convPos = 0;                 // topological position of the Conv
  std::optional<unsigned> bnPos;        // folded BatchNormalization
  std::optional<unsigned> activationPos; // fused Relu / Clip
  /// A fused Add of the conv's (BN-folded) result and `residualName`, a runtime tensor of
  /// the result's shape and type: the kernel computes act(conv + bias + residual).
  std::optional<unsigned> addPos;
  std::string residualName;
  Activation activation = Activation::none;
  std::string resultName; // the ONNX value the func's result stands for
  std::string funcName;
  ConvGeometry geometry;
  /// The ONNX element type of the input, result, weights and bias: FLOAT, FLOAT16 or
  /// BFLOAT16. Weights and bias hold values exactly representable in it.
  int32_t elemType = onnx::TensorProto::FLOAT;
  std::vector<float> weights;
  std::optional<std::vector<float>> bias;
};

/// Builds the ImportedConv of the Conv at `pos`: weights, bias, geometry, and the BN fold,
/// residual Add and activation fusion that apply (with a warning at a BN that cannot be
/// folded). `fusedAdds`: the Adds earlier convs fused (ResNet's add reads two convs, the
/// block's last and its downsample: the first in topological order takes it).
mlir::FailureOr<ImportedConv> importConv(const OnnxGraph &graph, unsigned pos,
                                         const llvm::DenseSet<unsigned> &fusedAdds);

/// Folds BatchNormalization into weights/bias when the fold keeps every zero a zero, every
/// nonzero nonzero and every finite value finite. The fold is computed in double and each
/// result rounded once, to nearest even, to `elemType` (FLOAT, FLOAT16 or BFLOAT16); the
/// rule applies to the rounded values. Returns the reason on refusal (weights and bias are
/// then unchanged).
std::optional<std::string> foldBatchNorm(std::vector<float> &weights,
                                         std::optional<std::vector<float>> &bias,
                                         int64_t outChannels, llvm::ArrayRef<float> scale,
                                         llvm::ArrayRef<float> shift,
                                         llvm::ArrayRef<float> mean,
                                         llvm::ArrayRef<float> variance, double epsilon,
                                         int32_t elemType);

/// The module: one func per imported conv, in order.
mlir::OwningOpRef<mlir::ModuleOp> emitConvFuncs(const OnnxGraph &graph,
                                                llvm::ArrayRef<ImportedConv> convs);

/// The JSON listing of the whole graph (docs/onnx-import.md).
std::string writeListing(const OnnxGraph &graph, llvm::ArrayRef<ImportedConv> convs);

} // namespace spconv::onnx_import

#endif // SPCONV_LIB_TARGET_IMPORTONNX_ONNXGRAPH_H
