//===- ShapeInference.cpp - ONNX shape inference behind a catch -----------===//
//
// onnx::shape_inference reports errors by throwing. LLVM and the rest of spconv build
// without exceptions, so this is the one file compiled with -fexceptions (CMakeLists.txt):
// every exception stops here and becomes a message.
//
//===----------------------------------------------------------------------===//
#include "OnnxGraph.h"

#include "onnx/defs/schema.h"
#include "onnx/defs/shape_inference.h"
#include "onnx/shape_inference/implementation.h"

#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <optional>

namespace {
/// ONNX 1.12's shape inference of convolutions and pooling trusts its operands; spconv
/// found three ways to crash or hang it (spconv-onnx-import-fuzzer and review;
/// docs/reliability.md):
///  - Conv, ConvInteger, QLinearConv and ConvTranspose take the kernel's spatial rank from
///    the weights and index the input's dimensions with it: weights of a higher rank than
///    the input read past the end of a protobuf repeated field;
///  - with an auto_pad attribute other than VALID and a stride above 1, the padding is
///    found by subtracting the stride from the input size one stride at a time: an input
///    dimension of 2^40 spins for minutes (2^62: for ever);
///  - a zero stride, dilation or kernel size is a division by zero. The reader refuses
///    those in the main graph with a located error (checkWindowAttributes); this covers
///    the nodes of subgraphs and local functions too.
/// And, for every op: its inference function dereferences the attributes the schema
/// requires without checking that they are there (a `Scan` without `num_scan_inputs` is a
/// null dereference, found by spconv-onnx-import-fuzzer), and reads them through the
/// declared type's field.
/// This registry hands out ONNX's own schemas, except that the inference function first
/// checks what it relies on and otherwise fails the way ONNX reports an inconsistency (an
/// InferenceError: non-strict inference leaves the node's outputs unshaped, and a Conv the
/// importer needs then reports the problem itself).
constexpr int64_t kMaxStrideSteps = int64_t(1) << 24;

/// Every attribute `schema` requires is present, and every attribute it declares that the
/// node gives with a type has the declared type (the checker's rules; a model that passes
/// onnx.checker passes these).
void checkAttributes(const onnx::OpSchema &schema, onnx::InferenceContext &ctx) {
  for (const auto &[name, declared] : schema.attributes()) {
    const onnx::AttributeProto *attr = ctx.getAttribute(name);
    if (!attr) {
      if (declared.required)
        fail_shape_inference("the required attribute '", name, "' of ", schema.Name(),
                             " is missing");
      continue;
    }
    if (attr->type() != onnx::AttributeProto::UNDEFINED &&
        declared.type != onnx::AttributeProto::UNDEFINED && attr->type() != declared.type)
      fail_shape_inference("attribute '", name, "' of ", schema.Name(), " has type ",
                           static_cast<int>(attr->type()), "; the schema declares ",
                           static_cast<int>(declared.type));
  }
}

void checkWindowOperands(onnx::InferenceContext &ctx, int weightIndex) {
  for (const char *name : {"strides", "dilations", "kernel_shape", "pads"}) {
    const onnx::AttributeProto *attr = ctx.getAttribute(name);
    if (!attr)
      continue;
    bool pads = std::string(name) == "pads";
    for (int64_t v : attr->ints())
      if (pads ? v < 0 : v <= 0)
        fail_shape_inference("'", name, "' must be ", pads ? "non-negative" : "positive",
                             ", got ", v);
  }
  if (!onnx::hasInputShape(ctx, 0))
    return;
  const onnx::TypeProto &x = *ctx.getInputType(0);
  int xRank = x.has_tensor_type() ? x.tensor_type().shape().dim_size() : -1;
  if (weightIndex >= 0 && onnx::hasInputShape(ctx, weightIndex)) {
    const onnx::TypeProto &w = *ctx.getInputType(weightIndex);
    int wRank = w.has_tensor_type() ? w.tensor_type().shape().dim_size() : -1;
    if (xRank < 0 || wRank < 0 || xRank != wRank)
      fail_shape_inference("the input (rank ", xRank, ") and the weights (rank ", wRank,
                           ") of a convolution must have the same rank");
  }
  const onnx::AttributeProto *autoPad = ctx.getAttribute("auto_pad");
  if (!autoPad || autoPad->s() == "VALID" || xRank < 0)
    return;
  const onnx::AttributeProto *strides = ctx.getAttribute("strides");
  for (int i = 2; i < xRank; ++i) {
    const onnx::TensorShapeProto_Dimension &d = x.tensor_type().shape().dim(i);
    int64_t stride = strides && i - 2 < strides->ints_size() ? strides->ints(i - 2) : 1;
    if (d.has_dim_value() && stride > 1 && d.dim_value() / stride > kMaxStrideSteps)
      fail_shape_inference("input dimension ", i, " (", d.dim_value(),
                           ") is too large for auto_pad with stride ", stride);
  }
}

class GuardedSchemaRegistry final : public onnx::ISchemaRegistry {
public:
  const onnx::OpSchema *GetSchema(const std::string &key, const int maxInclusiveVersion,
                                  const std::string &domain) const override {
    const onnx::OpSchema *schema =
        onnx::OpSchemaRegistry::Instance()->GetSchema(key, maxInclusiveVersion, domain);
    if (!schema || !schema->has_type_and_shape_inference_function())
      return schema;
    // The weights' input of a conv, -1 for a pool; no window checks otherwise.
    std::optional<int> weightIndex;
    if (key == "Conv" || key == "ConvInteger" || key == "ConvTranspose")
      weightIndex = 1;
    else if (key == "QLinearConv")
      weightIndex = 3;
    else if (key == "MaxPool" || key == "AveragePool" || key == "LpPool")
      weightIndex = -1;
    std::lock_guard<std::mutex> lock(mutex);
    std::unique_ptr<onnx::OpSchema> &guarded = schemas[schema];
    if (!guarded) {
      guarded = std::make_unique<onnx::OpSchema>(*schema);
      onnx::InferenceFunction infer = schema->GetTypeAndShapeInferenceFunction();
      // ONNX's registry keeps its schemas for the life of the process.
      guarded->TypeAndShapeInferenceFunction(
          [infer, weightIndex, schema](onnx::InferenceContext &ctx) {
            checkAttributes(*schema, ctx);
            if (weightIndex)
              checkWindowOperands(ctx, *weightIndex);
            infer(ctx);
          });
    }
    return guarded.get();
  }

private:
  mutable std::mutex mutex;
  mutable std::map<const onnx::OpSchema *, std::unique_ptr<onnx::OpSchema>> schemas;
};
} // namespace

std::optional<std::string>
spconv::onnx_import::runOnnxShapeInference(onnx::ModelProto &model) {
  try {
    // error_mode 0: an operator whose inference fails (unknown or custom ops) leaves its
    // outputs without shapes; a conv that then lacks an input shape is reported by the
    // importer with the option that fixes it. Contradictions are still thrown.
    onnx::ShapeInferenceOptions options(/*check_type_val=*/false, /*strict_mode_val=*/0,
                                        /*data_prop_val=*/false);
    static GuardedSchemaRegistry registry;
    onnx::shape_inference::InferShapes(model, &registry, options);
  } catch (const std::exception &e) {
    return std::string(e.what());
  } catch (...) {
    return std::string("unknown error");
  }
  return std::nullopt;
}
