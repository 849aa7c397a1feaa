//===- ShapeInference.cpp - ONNX shape inference behind a catch -----------===//
//
// onnx::shape_inference reports errors by throwing. LLVM and the rest of spconv build
// without exceptions, so this is the one file compiled with -fexceptions (CMakeLists.txt):
// every exception stops here and becomes a message.
//
//===----------------------------------------------------------------------===//
#include "OnnxGraph.h"

#include "onnx/shape_inference/implementation.h"

#include <exception>

std::optional<std::string>
spconv::onnx_import::runOnnxShapeInference(onnx::ModelProto &model) {
  try {
    // error_mode 0: an operator whose inference fails (unknown or custom ops) leaves its
    // outputs without shapes; a conv that then lacks an input shape is reported by the
    // importer with the option that fixes it. Contradictions are still thrown.
    onnx::ShapeInferenceOptions options(/*check_type_val=*/false, /*strict_mode_val=*/0,
                                        /*data_prop_val=*/false);
    onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(), options);
  } catch (const std::exception &e) {
    return std::string(e.what());
  } catch (...) {
    return std::string("unknown error");
  }
  return std::nullopt;
}
