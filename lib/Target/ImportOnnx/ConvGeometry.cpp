//===- ConvGeometry.cpp - ONNX Conv attributes to spconv.conv2d geometry --===//
//
// ONNX Conv-1/11 attributes: pads [x1_begin, x2_begin, x1_end, x2_end] (the same order as
// spconv's [top, left, bottom, right]), auto_pad, strides, dilations, group, kernel_shape.
// Every value is checked here, in 64-bit arithmetic that refuses overflow, so that what
// reaches the op builder is a geometry the spconv verifier can judge.
//
//===----------------------------------------------------------------------===//
#include "OnnxGraph.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace spconv::onnx_import;

namespace {
/// An INTS attribute of exactly `size` entries, or `fallback` when absent.
FailureOr<SmallVector<int64_t>> intsAttr(const onnx::NodeProto &node, StringRef name,
                                         size_t size, ArrayRef<int64_t> fallback,
                                         Location loc) {
  const onnx::AttributeProto *attr = findAttr(node, name);
  if (!attr)
    return SmallVector<int64_t>(fallback);
  if (attr->type() != onnx::AttributeProto::INTS)
    return emitError(loc) << "Conv attribute '" << name << "' must be a list of integers";
  if (static_cast<size_t>(attr->ints_size()) != size)
    return emitError(loc) << "Conv attribute '" << name << "' has " << attr->ints_size()
                          << " entries; a 2-D conv needs " << size;
  return SmallVector<int64_t>(attr->ints().begin(), attr->ints().end());
}

std::string shapeStr(ArrayRef<int64_t> shape) {
  std::string s;
  for (int64_t d : shape)
    s += (s.empty() ? "" : "x") + (d > 0 ? std::to_string(d) : std::string("?"));
  return s;
}
} // namespace

FailureOr<ConvGeometry>
spconv::onnx_import::computeConvGeometry(const onnx::NodeProto &node,
                                         ArrayRef<int64_t> inputShape,
                                         ArrayRef<int64_t> weightShape, Location loc) {
  if (weightShape.size() != 4)
    return emitError(loc) << "only 2-D convolutions are supported; this Conv's weights have "
                          << weightShape.size() << " dimensions (a "
                          << (weightShape.size() >= 2 ? std::to_string(weightShape.size() - 2)
                                                      : std::string("malformed "))
                          << "-D conv)";
  if (inputShape.size() != 4)
    return emitError(loc) << "Conv input has rank " << inputShape.size()
                          << " but its weights are 4-D (a 2-D conv needs an NCHW input)";
  ConvGeometry g;
  g.input.assign(inputShape.begin(), inputShape.end());
  g.filter.assign(weightShape.begin(), weightShape.end());
  for (int64_t d : g.filter)
    if (d <= 0)
      return emitError(loc) << "Conv weights have an empty dimension (shape "
                            << shapeStr(g.filter) << ")";

  if (const onnx::AttributeProto *attr = findAttr(node, "group")) {
    if (attr->type() != onnx::AttributeProto::INT)
      return emitError(loc) << "Conv attribute 'group' must be an integer";
    g.group = attr->i();
  }
  int64_t n = g.input[0], c = g.input[1], h = g.input[2], w = g.input[3];
  int64_t k = g.filter[0], r = g.filter[2], s = g.filter[3];
  if (g.group <= 0)
    return emitError(loc) << "Conv 'group' must be positive, got " << g.group;
  if (c % g.group != 0)
    return emitError(loc) << "Conv 'group' (" << g.group << ") does not divide the "
                          << c << " input channels";
  if (k % g.group != 0)
    return emitError(loc) << "Conv 'group' (" << g.group << ") does not divide the "
                          << k << " output channels";
  if (g.filter[1] != c / g.group)
    return emitError(loc) << "Conv weights have " << g.filter[1]
                          << " channels per group; input channels / group = " << c / g.group;

  auto kernelShape = intsAttr(node, "kernel_shape", 2, {r, s}, loc);
  auto strides = intsAttr(node, "strides", 2, {1, 1}, loc);
  auto dilations = intsAttr(node, "dilations", 2, {1, 1}, loc);
  auto pads = intsAttr(node, "pads", 4, {0, 0, 0, 0}, loc);
  if (failed(kernelShape) || failed(strides) || failed(dilations) || failed(pads))
    return failure();
  if ((*kernelShape)[0] != r || (*kernelShape)[1] != s)
    return emitError(loc) << "Conv 'kernel_shape' " << shapeStr(*kernelShape)
                          << " does not match the weights' " << r << "x" << s;
  for (int i = 0; i < 2; ++i) {
    if ((*strides)[i] <= 0)
      return emitError(loc) << "Conv 'strides' must be positive, got " << (*strides)[i];
    if ((*dilations)[i] <= 0)
      return emitError(loc) << "Conv 'dilations' must be positive, got " << (*dilations)[i];
    g.strides[i] = (*strides)[i];
    g.dilations[i] = (*dilations)[i];
  }
  for (int i = 0; i < 4; ++i) {
    if ((*pads)[i] < 0)
      return emitError(loc) << "Conv 'pads' must be non-negative, got " << (*pads)[i];
    g.pads[i] = (*pads)[i];
  }

  // Dilated filter extents, 1 + d * (R - 1), without overflow.
  int64_t extent[2];
  int64_t filterHW[2] = {r, s}, inHW[2] = {h, w};
  for (int i = 0; i < 2; ++i)
    if (llvm::MulOverflow(g.dilations[i], filterHW[i] - 1, extent[i]) ||
        llvm::AddOverflow(extent[i], int64_t(1), extent[i]))
      return emitError(loc) << "Conv dilated filter size overflows";

  std::string autoPad = "NOTSET";
  if (const onnx::AttributeProto *attr = findAttr(node, "auto_pad")) {
    if (attr->type() != onnx::AttributeProto::STRING)
      return emitError(loc) << "Conv attribute 'auto_pad' must be a string";
    autoPad = attr->s();
  }
  if (autoPad != "NOTSET") {
    if (findAttr(node, "pads"))
      return emitError(loc) << "Conv has both 'pads' and auto_pad=" << autoPad
                            << "; ONNX allows only one";
    if (autoPad == "VALID") {
      // No padding.
    } else if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
      // ONNX: output = ceil(in / stride); the total padding makes the last window fit, and
      // an odd total puts the extra row/column at the end (UPPER) or the beginning (LOWER).
      for (int i = 0; i < 2; ++i) {
        // (out - 1) * stride < in, so neither that product nor its difference with `in`
        // overflows; adding the filter extent last keeps the total below the extent.
        int64_t out = llvm::divideCeil(inHW[i], g.strides[i]);
        int64_t total = ((out - 1) * g.strides[i] - inHW[i]) + extent[i];
        total = std::max<int64_t>(total, 0);
        int64_t small = total / 2, large = total - small;
        g.pads[i] = autoPad == "SAME_UPPER" ? small : large;
        g.pads[i + 2] = autoPad == "SAME_UPPER" ? large : small;
      }
    } else {
      return emitError(loc) << "Conv 'auto_pad' must be NOTSET, SAME_UPPER, SAME_LOWER or "
                               "VALID, got '"
                            << autoPad << "'";
    }
  }

  int64_t out[2];
  for (int i = 0; i < 2; ++i) {
    int64_t padded;
    if (llvm::AddOverflow(inHW[i], g.pads[i], padded) ||
        llvm::AddOverflow(padded, g.pads[i + 2], padded))
      return emitError(loc) << "Conv padded input size overflows";
    if (padded < extent[i])
      return emitError(loc) << "Conv dilated filter (" << extent[i] << ") is larger than the "
                            << (i == 0 ? "height" : "width") << " of the padded input ("
                            << padded << ")";
    out[i] = (padded - extent[i]) / g.strides[i] + 1;
  }
  g.output = {n, k, out[0], out[1]};
  int64_t elements = 1;
  for (ArrayRef<int64_t> shape : {ArrayRef<int64_t>(g.input), ArrayRef<int64_t>(g.output)}) {
    elements = 1;
    for (int64_t d : shape)
      if (llvm::MulOverflow(elements, d, elements))
        return emitError(loc) << "Conv tensor " << shapeStr(shape)
                              << " has more elements than fit in 64 bits";
  }
  return g;
}
