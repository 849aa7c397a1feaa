//===- EmitMlir.cpp - imported convs as func.func + spconv.conv2d ---------===//
//
// One func per conv, `(%x: NxCxHxW) -> NxKxPxQ`, in graph order: the order the sidecar of
// spconv-translate --spconv-compile numbers kernels in, and the order of the listing. The
// weights go into dense_resource blobs (the printed module stays one line per blob and the
// parser need not build a DenseElementsAttr of millions of floats).
//
//===----------------------------------------------------------------------===//
#include "OnnxGraph.h"

#include "spconv/Dialect/Spconv/IR/SpconvOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

using namespace mlir;
using namespace spconv;
using namespace spconv::onnx_import;

static ElementsAttr blobAttr(RankedTensorType type, StringRef name, ArrayRef<float> values) {
  // The blob owns a copy; the resource manager renames it if `name` is taken.
  AsmResourceBlob blob = HeapAsmResourceBlob::allocateAndCopyInferAlign(values);
  return DenseResourceElementsAttr::get(type, name, std::move(blob));
}

OwningOpRef<ModuleOp> spconv::onnx_import::emitConvFuncs(const OnnxGraph &graph,
                                                         ArrayRef<ImportedConv> convs) {
  OwningOpRef<ModuleOp> module = ModuleOp::create(graph.fileLoc());
  OpBuilder builder = OpBuilder::atBlockEnd(module->getBody());
  Type f32 = builder.getF32Type();
  for (const ImportedConv &conv : convs) {
    Location loc = graph.nodeLoc(conv.convPos);
    const ConvGeometry &g = conv.geometry;
    auto inputType = RankedTensorType::get(g.input, f32);
    auto resultType = RankedTensorType::get(g.output, f32);
    auto func = func::FuncOp::create(builder, loc, conv.funcName,
                                     builder.getFunctionType({inputType}, {resultType}));
    Block *body = func.addEntryBlock();
    OpBuilder inner = OpBuilder::atBlockEnd(body);
    ElementsAttr weights = blobAttr(RankedTensorType::get(g.filter, f32),
                                    conv.funcName + "_weights", conv.weights);
    ElementsAttr bias;
    if (conv.bias)
      bias = blobAttr(RankedTensorType::get({g.filter[0]}, f32), conv.funcName + "_bias",
                      *conv.bias);
    auto op = Conv2DOp::create(inner, loc, resultType, body->getArgument(0), weights, bias,
                               ArrayRef<int64_t>(g.strides), ArrayRef<int64_t>(g.pads),
                               ArrayRef<int64_t>(g.dilations),
                               static_cast<uint64_t>(g.group), conv.activation,
                               OutputPairingAttr());
    func::ReturnOp::create(inner, loc, op.getResult());
  }
  return module;
}
