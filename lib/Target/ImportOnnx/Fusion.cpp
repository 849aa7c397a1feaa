//===- Fusion.cpp - one Conv with its BatchNormalization and activation ---===//
//
// A Conv is imported together with what follows it when the Conv's result is read by
// nothing else: a BatchNormalization (folded into weights and bias), then an Add of a tensor
// of the result's own shape and type (the residual: spconv.conv2d's `residual` operand),
// then a Relu or a Clip that is a ReLU/ReLU6 (fused as the op's activation). Anything else
// stays a node of its own, for the host framework (docs/onnx-import.md).
//
// The BN fold obeys one rule, because spconv's whole point is which weights are zero: the
// fold never turns a zero weight into a nonzero one or a nonzero weight into zero, and never
// makes a finite value non-finite. Zeros are written back as they were (never multiplied, so
// an infinite factor cannot make NaN of them); a nonzero weight that would underflow to 0 or
// overflow, or a bias that would stop being finite, makes the whole BN stay unfolded, with a
// warning at the BN node.
//
// Half precision: a Conv over float16 (bfloat16) imports as an f16 (bf16) spconv.conv2d. Its
// weights, bias and BN parameters are read as floats (exact), the fold is computed in double
// as for float32, and each folded value is rounded once, to nearest even, to the conv's type;
// the rule above applies to the rounded values (a weight that float16 flushes to zero keeps
// the BN unfolded). The module then holds the weights in the conv's type: what it holds is
// what the kernel multiplies by (docs/onnx-import.md, "Half precision").
//
//===----------------------------------------------------------------------===//
#include "OnnxGraph.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>

using namespace mlir;
using namespace spconv;
using namespace spconv::onnx_import;

/// `value` rounded once, to nearest even, to `elemType` (FLOAT, FLOAT16 or BFLOAT16), as a
/// float (exact: float holds every float16 and bfloat16 value).
static float roundTo(double value, int32_t elemType) {
  if (elemType == onnx::TensorProto::FLOAT)
    return static_cast<float>(value);
  APFloat v(value);
  bool lost;
  v.convert(elemType == onnx::TensorProto::BFLOAT16 ? APFloat::BFloat() : APFloat::IEEEhalf(),
            APFloat::rmNearestTiesToEven, &lost);
  v.convert(APFloat::IEEEsingle(), APFloat::rmNearestTiesToEven, &lost);
  return v.convertToFloat();
}

std::optional<std::string> spconv::onnx_import::foldBatchNorm(
    std::vector<float> &weights, std::optional<std::vector<float>> &bias,
    int64_t outChannels, ArrayRef<float> scale, ArrayRef<float> shift, ArrayRef<float> mean,
    ArrayRef<float> variance, double epsilon, int32_t elemType) {
  // Named only for half precision (float32 keeps its messages).
  std::string in = elemType == onnx::TensorProto::FLOAT
                       ? std::string()
                       : std::string(" in ") + elemTypeName(elemType);
  size_t perChannel = weights.size() / outChannels;
  std::vector<float> newWeights(weights.size());
  std::vector<float> newBias(outChannels);
  for (int64_t k = 0; k < outChannels; ++k) {
    double factor = double(scale[k]) / std::sqrt(double(variance[k]) + epsilon);
    for (size_t i = k * perChannel, e = i + perChannel; i < e; ++i) {
      float w = weights[i];
      if (w == 0.0f) {
        newWeights[i] = w; // +0 stays +0, -0 stays -0
        continue;
      }
      float folded = roundTo(double(w) * factor, elemType);
      if (folded == 0.0f)
        return std::string(llvm::formatv(
            "output channel {0}: weight {1:e} would become 0{2} (scale/sqrt(var+eps) = {3:e})",
            k, w, in, factor));
      if (std::isfinite(w) && !std::isfinite(folded))
        return std::string(llvm::formatv("output channel {0}: weight {1:e} would become "
                                         "{2}{3} (scale/sqrt(var+eps) = {4:e})",
                                         k, w, folded, in, factor));
      newWeights[i] = folded;
    }
    float b = bias ? (*bias)[k] : 0.0f;
    float folded = roundTo((double(b) - mean[k]) * factor + shift[k], elemType);
    bool finiteInputs = std::isfinite(b) && std::isfinite(mean[k]) && std::isfinite(shift[k]) &&
                        std::isfinite(scale[k]) && std::isfinite(variance[k]);
    if (finiteInputs && !std::isfinite(folded))
      return std::string(llvm::formatv(
          "output channel {0}: the folded bias would be {1}{2} (scale/sqrt(var+eps) = {3:e})",
          k, folded, in, factor));
    newBias[k] = folded;
  }
  weights = std::move(newWeights);
  bias = std::move(newBias);
  return std::nullopt;
}

namespace {
/// A constant float vector of exactly `size` elements (size < 0: any size).
FailureOr<std::vector<float>> readVector(const OnnxGraph &graph, StringRef name, int64_t size,
                                         Location loc, StringRef what) {
  const onnx::TensorProto *tensor = graph.constants.lookup(name);
  if (!tensor)
    return failure();
  FailureOr<std::vector<float>> values = readFloatConstant(graph, *tensor, loc, what);
  if (failed(values))
    return failure();
  if (size >= 0 && static_cast<int64_t>(values->size()) != size)
    return emitError(loc) << what << " '" << name << "' has " << values->size()
                          << " elements; expected " << size;
  return values;
}

/// The only node reading `value`, if it is one of `opType` in the default domain and reads
/// it as its first input, and `value` is no graph output.
std::optional<unsigned> soleConsumer(const OnnxGraph &graph, StringRef value,
                                     StringRef opType) {
  if (graph.useCount(value) != 1)
    return std::nullopt;
  auto it = graph.consumers.find(value);
  if (it == graph.consumers.end())
    return std::nullopt;
  const onnx::NodeProto &node = *graph.nodes[it->second.front()];
  if (node.op_type() != opType || !node.domain().empty() || node.input_size() < 1 ||
      node.input(0) != value || node.output_size() < 1 || node.output(0).empty())
    return std::nullopt;
  for (int i = 1; i < node.input_size(); ++i)
    if (node.input(i) == value)
      return std::nullopt;
  return it->second.front();
}

/// Tries to fold the BN at `bnPos` into `conv`; warns and leaves `conv` alone when it may not.
LogicalResult tryFoldBatchNorm(const OnnxGraph &graph, unsigned bnPos, ImportedConv &conv) {
  const onnx::NodeProto &bn = *graph.nodes[bnPos];
  Location loc = graph.nodeLoc(bnPos);
  std::string convName = graph.nodes[conv.convPos]->name();
  auto refuse = [&](const Twine &reason) {
    emitWarning(loc) << "BatchNormalization '" << bn.name() << "' is not folded into Conv '"
                     << convName << "': " << reason
                     << "; it stays a separate node (see --onnx-listing)";
    return success();
  };
  if (bn.input_size() != 5)
    return emitError(loc) << "BatchNormalization needs 5 inputs, has " << bn.input_size();
  for (int i = 1; i < bn.output_size(); ++i)
    if (!bn.output(i).empty())
      return refuse("it computes training-mode outputs");
  if (const onnx::AttributeProto *attr = findAttr(bn, "training_mode"))
    if (attr->i() != 0)
      return refuse("it is in training mode");
  if (const onnx::AttributeProto *attr = findAttr(bn, "spatial"))
    if (attr->i() == 0)
      return refuse("spatial=0 (per-element statistics) is not supported");
  double epsilon = 1e-5;
  if (const onnx::AttributeProto *attr = findAttr(bn, "epsilon")) {
    if (attr->type() != onnx::AttributeProto::FLOAT)
      return emitError(loc) << "BatchNormalization 'epsilon' must be a float";
    epsilon = attr->f();
  }
  int64_t k = conv.geometry.filter[0];
  std::vector<float> params[4];
  static const char *const names[] = {"scale", "B", "mean", "var"};
  for (int i = 0; i < 4; ++i) {
    StringRef name = bn.input(i + 1);
    if (!graph.constants.contains(name))
      return refuse(Twine("its ") + names[i] + " '" + name + "' is not constant");
    FailureOr<std::vector<float>> values =
        readVector(graph, name, k, loc, Twine("BatchNormalization ").concat(names[i]).str());
    if (failed(values))
      return failure();
    params[i] = std::move(*values);
  }
  if (std::optional<std::string> reason =
          foldBatchNorm(conv.weights, conv.bias, k, params[0], params[1], params[2],
                        params[3], epsilon, conv.elemType))
    return refuse(*reason);
  conv.bnPos = bnPos;
  conv.resultName = bn.output(0);
  return success();
}

/// A scalar float Clip bound: from an input (opset >= 11) or an attribute (older opsets).
/// `present` is false when the bound is absent; failure when it is not a constant scalar.
FailureOr<float> clipBound(const OnnxGraph &graph, const onnx::NodeProto &clip, int input,
                           StringRef attrName, bool &present, Location loc) {
  present = false;
  if (graph.opset < 11) {
    const onnx::AttributeProto *attr = findAttr(clip, attrName);
    if (!attr)
      return 0.0f;
    present = true;
    return attr->f();
  }
  if (clip.input_size() <= input || clip.input(input).empty())
    return 0.0f;
  present = true;
  if (!graph.constants.contains(clip.input(input)))
    return failure();
  FailureOr<std::vector<float>> values =
      readVector(graph, clip.input(input), 1, loc, Twine("Clip ").concat(attrName).str());
  if (failed(values))
    return failure();
  return values->front();
}

/// Fuses the Add that alone reads `conv.resultName` when its other operand is a residual
/// the kernel can read as it reads its output: a runtime tensor (not a constant, not the
/// result itself) of the result's exact shape and element type, so no broadcast. The
/// kernel adds it before the activation, as the graph does when a Relu follows the Add.
void tryFuseResidual(const OnnxGraph &graph, ImportedConv &conv,
                     const llvm::DenseSet<unsigned> &fusedAdds) {
  if (graph.useCount(conv.resultName) != 1)
    return;
  auto it = graph.consumers.find(conv.resultName);
  if (it == graph.consumers.end())
    return;
  unsigned pos = it->second.front();
  if (fusedAdds.contains(pos))
    return;
  const onnx::NodeProto &add = *graph.nodes[pos];
  if (add.op_type() != "Add" || !(add.domain().empty() || add.domain() == "ai.onnx") ||
      add.input_size() != 2 || add.output_size() != 1 || add.output(0).empty())
    return;
  StringRef other = add.input(0) == conv.resultName ? add.input(1) : add.input(0);
  if (other.empty() || other == conv.resultName || graph.constants.contains(other))
    return;
  const ValueInfo *info = graph.lookup(other);
  const ValueInfo *sum = graph.lookup(add.output(0));
  ArrayRef<int64_t> shape(conv.geometry.output);
  if (!info || info->elemType != conv.elemType || !info->isStatic() ||
      ArrayRef<int64_t>(*info->shape) != shape)
    return;
  // ONNX shape inference gives the sum the broadcast of both shapes: the result's here.
  if (sum && sum->isStatic() && ArrayRef<int64_t>(*sum->shape) != shape)
    return;
  conv.addPos = pos;
  conv.residualName = other.str();
  conv.resultName = add.output(0);
}

/// Fuses the Relu or ReLU-like Clip that alone reads `conv.resultName`.
LogicalResult tryFuseActivation(const OnnxGraph &graph, ImportedConv &conv) {
  if (std::optional<unsigned> pos = soleConsumer(graph, conv.resultName, "Relu")) {
    conv.activation = Activation::relu;
    conv.activationPos = *pos;
    conv.resultName = graph.nodes[*pos]->output(0);
    return success();
  }
  std::optional<unsigned> pos = soleConsumer(graph, conv.resultName, "Clip");
  if (!pos)
    return success();
  const onnx::NodeProto &clip = *graph.nodes[*pos];
  Location loc = graph.nodeLoc(*pos);
  bool hasMin = false, hasMax = false;
  // A bound that is not a constant scalar just means no fusion; a constant of the wrong
  // type or size has been reported as an error.
  FailureOr<float> lo = clipBound(graph, clip, 1, "min", hasMin, loc);
  if (failed(lo))
    return graph.constants.contains(clip.input(1)) ? failure() : success();
  FailureOr<float> hi = clipBound(graph, clip, 2, "max", hasMax, loc);
  if (failed(hi))
    return graph.constants.contains(clip.input(2)) ? failure() : success();
  if (!hasMin || *lo != 0.0f)
    return success();
  if (!hasMax || *hi == std::numeric_limits<float>::infinity())
    conv.activation = Activation::relu;
  else if (*hi == 6.0f)
    conv.activation = Activation::relu6;
  else
    return success();
  conv.activationPos = *pos;
  conv.resultName = clip.output(0);
  return success();
}
} // namespace

FailureOr<ImportedConv>
spconv::onnx_import::importConv(const OnnxGraph &graph, unsigned pos,
                                const llvm::DenseSet<unsigned> &fusedAdds) {
  const onnx::NodeProto &node = *graph.nodes[pos];
  Location loc = graph.nodeLoc(pos);
  if (node.input_size() < 2 || node.input_size() > 3 || node.input(0).empty() ||
      node.input(1).empty())
    return emitError(loc) << "Conv needs an input and weights (and optionally a bias), has "
                          << node.input_size() << " inputs";
  if (node.output_size() != 1 || node.output(0).empty())
    return emitError(loc) << "Conv must have exactly one output";

  ImportedConv conv;
  conv.convPos = pos;
  conv.resultName = node.output(0);
  const onnx::TensorProto *weights = graph.constants.lookup(node.input(1));
  if (!weights)
    return emitError(loc) << "Conv weights '" << node.input(1)
                          << "' are not constant (neither an initializer nor a Constant "
                             "node's output); spconv compiles weights known ahead of time";
  FailureOr<SmallVector<int64_t>> weightShape = constantDims(*weights, loc, "Conv weights");
  if (failed(weightShape))
    return failure();
  if (weightShape->size() != 4) {
    (void)computeConvGeometry(node, {}, *weightShape, loc); // reports the rank
    return failure();
  }

  const ValueInfo *input = graph.lookup(node.input(0));
  if (!input || input->elemType == 0)
    return emitError(loc) << "the element type of Conv input '" << node.input(0)
                          << "' is unknown (ONNX shape inference could not derive it)";
  if (!isFloatElemType(input->elemType))
    return emitError(loc) << "Conv input '" << node.input(0) << "' is "
                          << elemTypeName(input->elemType)
                          << "; only float32, float16 and bfloat16 are supported";
  conv.elemType = input->elemType;
  // ONNX's Conv has one type T for X, W and B; a model that mixes them is not valid ONNX,
  // and what it means is not for the importer to guess.
  auto checkSameType = [&](const onnx::TensorProto &tensor, StringRef what) -> LogicalResult {
    if (!isFloatElemType(tensor.data_type()) || tensor.data_type() == conv.elemType)
      return success();
    return emitError(loc) << what << " '" << tensor.name() << "' is "
                          << elemTypeName(tensor.data_type()) << " but the Conv's input '"
                          << node.input(0) << "' is " << elemTypeName(conv.elemType)
                          << "; ONNX's Conv takes one element type for its input, weights "
                             "and bias (convert the "
                          << (what == "Conv bias" ? "bias" : "weights") << " to "
                          << elemTypeName(conv.elemType) << ")";
  };
  if (failed(checkSameType(*weights, "Conv weights")))
    return failure();
  if (!input->isStatic()) {
    std::string shape = "unknown";
    if (input->shape) {
      shape.clear();
      for (int64_t d : *input->shape)
        shape += (shape.empty() ? "" : "x") + (d > 0 ? std::to_string(d) : std::string("?"));
    }
    return emitError(loc) << "the shape of Conv input '" << node.input(0) << "' (" << shape
                          << ") is not static; pass --onnx-batch=N for a symbolic batch or "
                             "--onnx-input-shape=<graph input>:NxCxHxW";
  }
  FailureOr<ConvGeometry> geometry =
      computeConvGeometry(node, *input->shape, *weightShape, loc);
  if (failed(geometry))
    return failure();
  conv.geometry = std::move(*geometry);
  if (const ValueInfo *output = graph.lookup(node.output(0)); output && output->isStatic() &&
      ArrayRef<int64_t>(*output->shape) != ArrayRef<int64_t>(conv.geometry.output))
    return emitError(loc) << "ONNX shape inference gives the Conv output a shape that its "
                             "attributes do not";

  FailureOr<std::vector<float>> values = readFloatConstant(graph, *weights, loc, "Conv weights");
  if (failed(values))
    return failure();
  conv.weights = std::move(*values);
  if (node.input_size() == 3 && !node.input(2).empty()) {
    const onnx::TensorProto *biasTensor = graph.constants.lookup(node.input(2));
    if (!biasTensor)
      return emitError(loc) << "Conv bias '" << node.input(2) << "' is not constant";
    if (failed(checkSameType(*biasTensor, "Conv bias")))
      return failure();
    FailureOr<std::vector<float>> bias =
        readVector(graph, node.input(2), conv.geometry.filter[0], loc, "Conv bias");
    if (failed(bias))
      return failure();
    conv.bias = std::move(*bias);
  }

  if (std::optional<unsigned> bn = soleConsumer(graph, conv.resultName, "BatchNormalization"))
    if (failed(tryFoldBatchNorm(graph, *bn, conv)))
      return failure();
  // An unfolded BN sits between the conv and any activation: nothing more fuses then.
  if (conv.resultName == node.output(0) &&
      soleConsumer(graph, conv.resultName, "BatchNormalization"))
    return conv;
  tryFuseResidual(graph, conv, fusedAdds);
  if (failed(tryFuseActivation(graph, conv)))
    return failure();
  return conv;
}
