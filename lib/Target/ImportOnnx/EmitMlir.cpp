//===- EmitMlir.cpp - imported convs as func.func + spconv.conv2d ---------===//
//
// One func per conv, `(%x: NxCxHxW) -> NxKxPxQ`, in graph order: the order the sidecar of
// spconv-translate --spconv-compile numbers kernels in, and the order of the listing. The
// weights go into dense_resource blobs (the printed module stays one line per blob and the
// parser need not build a DenseElementsAttr of millions of floats), in the conv's element
// type: f32, or f16/bf16 for a half-precision model.
//
//===----------------------------------------------------------------------===//
#include "OnnxGraph.h"

#include "spconv/Dialect/Spconv/IR/SpconvOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/APFloat.h"

using namespace mlir;
using namespace spconv;
using namespace spconv::onnx_import;

/// A blob of `values` in `type`'s element type: f32, or the bits of f16/bf16 values (which
/// the importer has already rounded to that type, so the conversion is exact).
static ElementsAttr blobAttr(RankedTensorType type, StringRef name, ArrayRef<float> values) {
  // The blob owns a copy; the resource manager renames it if `name` is taken.
  Type elem = type.getElementType();
  if (elem.isF32()) {
    AsmResourceBlob blob = HeapAsmResourceBlob::allocateAndCopyInferAlign(values);
    return DenseResourceElementsAttr::get(type, name, std::move(blob));
  }
  const llvm::fltSemantics &sem = cast<FloatType>(elem).getFloatSemantics();
  std::vector<uint16_t> bits(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    APFloat v(values[i]);
    bool lost;
    v.convert(sem, APFloat::rmNearestTiesToEven, &lost);
    bits[i] = static_cast<uint16_t>(v.bitcastToAPInt().getZExtValue());
  }
  AsmResourceBlob blob = HeapAsmResourceBlob::allocateAndCopyInferAlign(ArrayRef(bits));
  return DenseResourceElementsAttr::get(type, name, std::move(blob));
}

static Type elementType(OpBuilder &builder, int32_t elemType) {
  switch (elemType) {
  case onnx::TensorProto::FLOAT16: return builder.getF16Type();
  case onnx::TensorProto::BFLOAT16: return builder.getBF16Type();
  default: return builder.getF32Type();
  }
}

OwningOpRef<ModuleOp> spconv::onnx_import::emitConvFuncs(const OnnxGraph &graph,
                                                         ArrayRef<ImportedConv> convs) {
  OwningOpRef<ModuleOp> module = ModuleOp::create(graph.fileLoc());
  OpBuilder builder = OpBuilder::atBlockEnd(module->getBody());
  for (const ImportedConv &conv : convs) {
    Location loc = graph.nodeLoc(conv.convPos);
    const ConvGeometry &g = conv.geometry;
    // Input, result, weights and bias all in the model's type (f32, f16 or bf16).
    Type elem = elementType(builder, conv.elemType);
    auto inputType = RankedTensorType::get(g.input, elem);
    auto resultType = RankedTensorType::get(g.output, elem);
    // A fused residual is the func's second argument, in the result's type.
    SmallVector<Type, 2> argTypes{inputType};
    if (conv.addPos)
      argTypes.push_back(resultType);
    auto func = func::FuncOp::create(builder, loc, conv.funcName,
                                     builder.getFunctionType(argTypes, {resultType}));
    Block *body = func.addEntryBlock();
    OpBuilder inner = OpBuilder::atBlockEnd(body);
    ElementsAttr weights = blobAttr(RankedTensorType::get(g.filter, elem),
                                    conv.funcName + "_weights", conv.weights);
    ElementsAttr bias;
    if (conv.bias)
      bias = blobAttr(RankedTensorType::get({g.filter[0]}, elem), conv.funcName + "_bias",
                      *conv.bias);
    auto op =
        Conv2DOp::create(inner, loc, resultType, body->getArgument(0),
                         conv.addPos ? body->getArgument(1) : Value(),
                         weights, bias, ArrayRef<int64_t>(g.strides), ArrayRef<int64_t>(g.pads),
                         ArrayRef<int64_t>(g.dilations), static_cast<uint64_t>(g.group),
                         conv.activation, OutputPairingAttr(), TypeAttr(), TensorLayout::nchw);
    func::ReturnOp::create(inner, loc, op.getResult());
  }
  return module;
}
