//===- SpconvOps.cpp - spconv operations ----------------------------------===//
#include "spconv/Dialect/Spconv/IR/SpconvOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/OpImplementation.h"

#include <cmath>
#include <cstring>
#include <limits>

using namespace mlir;
using namespace spconv;

#define GET_OP_CLASSES
#include "spconv/Dialect/Spconv/IR/SpconvOps.cpp.inc"

FailureOr<std::vector<float>> spconv::readF32Elements(ElementsAttr attr) {
  // f16 and bf16 values are exact in f32.
  Type elem = attr.getElementType();
  if (!elem.isF32() && !elem.isF16() && !elem.isBF16())
    return failure();
  int64_t n = attr.getNumElements();
  if (auto dense = llvm::dyn_cast<DenseFPElementsAttr>(attr)) {
    std::vector<float> out;
    out.reserve(n);
    for (APFloat v : dense.getValues<APFloat>()) {
      bool lost;
      v.convert(APFloat::IEEEsingle(), APFloat::rmNearestTiesToEven, &lost);
      out.push_back(v.convertToFloat());
    }
    return out;
  }
  if (auto res = llvm::dyn_cast<DenseResourceElementsAttr>(attr)) {
    AsmResourceBlob *blob = res.getRawHandle().getBlob();
    if (!blob)
      return failure();
    ArrayRef<char> bytes = blob->getData();
    int64_t width = elem.getIntOrFloatBitWidth() / 8;
    if (static_cast<int64_t>(bytes.size()) != n * width)
      return failure();
    std::vector<float> out(n);
    if (width == 4) {
      std::memcpy(out.data(), bytes.data(), bytes.size());
      return out;
    }
    const llvm::fltSemantics &sem = llvm::cast<FloatType>(elem).getFloatSemantics();
    for (int64_t i = 0; i < n; ++i) {
      uint16_t bits;
      std::memcpy(&bits, bytes.data() + 2 * i, 2);
      APFloat v(sem, APInt(16, bits));
      bool lost;
      v.convert(APFloat::IEEEsingle(), APFloat::rmNearestTiesToEven, &lost);
      out[i] = v.convertToFloat();
    }
    return out;
  }
  return failure();
}

FailureOr<std::vector<float>> spconv::roundToPrecision(ArrayRef<float> values, Type elem,
                                                       int64_t &crossed) {
  crossed = -1;
  std::vector<float> out(values.begin(), values.end());
  if (elem.isF32())
    return out;
  const llvm::fltSemantics &sem = llvm::cast<FloatType>(elem).getFloatSemantics();
  for (size_t i = 0; i < out.size(); ++i) {
    APFloat v(values[i]);
    bool lost;
    v.convert(sem, APFloat::rmNearestTiesToEven, &lost);
    // No weight crosses zero, and none finite becomes infinite: which weights are zero is
    // what the code is made of.
    if ((v.isZero() && values[i] != 0.0f) || (v.isInfinity() && std::isfinite(values[i]))) {
      crossed = static_cast<int64_t>(i);
      return failure();
    }
    v.convert(APFloat::IEEEsingle(), APFloat::rmNearestTiesToEven, &lost);
    out[i] = v.convertToFloat();
  }
  return out;
}

/// Checks that `t` is a statically shaped rank-4 f32 tensor with dims that fit the kernels'
/// 32-bit indexing.
static LogicalResult verifyNCHW(Operation *op, StringRef what, Type type) {
  auto t = llvm::dyn_cast<RankedTensorType>(type);
  if (!t)
    return op->emitOpError() << what << " must be a ranked tensor";
  if (t.getRank() != 4)
    return op->emitOpError() << what << " must have rank 4 (NCHW), got rank " << t.getRank();
  Type elem = t.getElementType();
  if (!elem.isF32() && !elem.isF16() && !elem.isBF16())
    return op->emitOpError() << what << " element type must be f32, f16 or bf16, got " << elem;
  if (!t.hasStaticShape())
    return op->emitOpError() << what << " must have a static shape";
  for (int64_t d : t.getShape())
    if (d <= 0 || d > std::numeric_limits<int32_t>::max())
      return op->emitOpError() << what << " dimensions must be in [1, 2^31-1], got " << d;
  // Kernels index elements with 32-bit offsets.
  if (t.getNumElements() > std::numeric_limits<int32_t>::max())
    return op->emitOpError() << what << " has " << t.getNumElements()
                             << " elements; at most 2^31-1 are supported";
  return success();
}

LogicalResult Conv2DOp::verify() {
  Operation *op = getOperation();
  if (failed(verifyNCHW(op, "input", getInput().getType())) ||
      failed(verifyNCHW(op, "result", getResult().getType())))
    return failure();

  if (Value r = getResidual(); r && r.getType() != getResult().getType())
    return emitOpError("'residual' type ")
           << r.getType() << " must equal the result type " << getResult().getType();

  ShapedType wt = getWeightsType();
  if (!wt.hasRank() || wt.getRank() != 4)
    return emitOpError("'weights' must have rank 4 (KxCxRxS)");
  Type elem = getInputType().getElementType();
  if (getResultType().getElementType() != elem)
    return emitOpError("result element type (")
           << getResultType().getElementType() << ") must equal the input's (" << elem << ")";
  if (!wt.getElementType().isF32() && wt.getElementType() != elem)
    return emitOpError("'weights' element type must be f32 or the input's (")
           << elem << "), got " << wt.getElementType();
  if (std::optional<Type> acc = getAccumulate()) {
    if (*acc != elem && !acc->isF32())
      return emitOpError("'accumulate' must be f32 or the input's type (")
             << elem << "), got " << *acc;
  }
  if (getPairing() && elem.isF32())
    return emitOpError("'pairing' applies to f16 and bf16 convs only: an f32 FMA computes one "
                       "output");
  for (int64_t d : wt.getShape())
    if (d <= 0 || d > std::numeric_limits<int32_t>::max())
      return emitOpError("'weights' dimensions must be in [1, 2^31-1], got ") << d;

  // Weights are expanded to memory by passes that read them (folding, statistics).
  constexpr int64_t kMaxWeights = int64_t(1) << 27;
  if (wt.getNumElements() > kMaxWeights)
    return emitOpError("'weights' has ") << wt.getNumElements()
                                         << " elements; at most 2^27 are supported";

  ArrayRef<int64_t> strides = getStrides(), dil = getDilations(), pad = getPadding();
  if (strides.size() != 2)
    return emitOpError("'strides' must have 2 entries [sh, sw], got ") << strides.size();
  if (dil.size() != 2)
    return emitOpError("'dilations' must have 2 entries [dh, dw], got ") << dil.size();
  if (pad.size() != 4)
    return emitOpError("'padding' must have 4 entries [top, left, bottom, right], got ")
           << pad.size();
  for (int64_t s : strides)
    if (s <= 0 || s > std::numeric_limits<int32_t>::max())
      return emitOpError("'strides' must be positive, got ") << s;
  for (int64_t d : dil)
    if (d <= 0 || d > std::numeric_limits<int32_t>::max())
      return emitOpError("'dilations' must be positive, got ") << d;
  for (int64_t p : pad)
    if (p < 0 || p > std::numeric_limits<int32_t>::max())
      return emitOpError("'padding' must be non-negative, got ") << p;

  int64_t n = getBatch(), c = getInChannels(), h = getInHeight(), w = getInWidth();
  int64_t k = wt.getDimSize(0), cpg = wt.getDimSize(1), r = wt.getDimSize(2),
          s = wt.getDimSize(3);
  int64_t groups = getGroups();
  if (groups <= 0)
    return emitOpError("'groups' must be positive, got ") << groups;
  if (c % groups != 0)
    return emitOpError("'groups' (") << groups << ") must divide the input channels (" << c
                                     << ")";
  if (k % groups != 0)
    return emitOpError("'groups' (") << groups << ") must divide the output channels (" << k
                                     << ")";
  if (cpg * groups != c)
    return emitOpError("'weights' channel dimension (")
           << cpg << ") times groups (" << groups << ") must equal the input channels (" << c
           << ")";

  if (getPairing() == OutputPairing::adjacent) {
    // Both halves of a word are then one 32-bit load and store (ConvShape.h,
    // canPairAdjacent): a 1x1 filter's output column q must read input column q, a wider
    // filter's two output columns two adjacent input columns per tap, in rows of whole words.
    if (s == 1 && (r != 1 || strides[0] != 1 || strides[1] != 1 ||
                   llvm::any_of(pad, [](int64_t v) { return v != 0; })))
      return emitOpError("'pairing' adjacent needs a 1x1 filter at stride 1 without padding, "
                         "or a filter wider than one column at column stride 1");
    if (s > 1 && strides[1] != 1)
      return emitOpError("'pairing' adjacent needs column stride 1, got ") << strides[1];
    if (w % 2 != 0)
      return emitOpError("'pairing' adjacent needs an even input width, got ") << w;
    if (getOutWidth() % 2 != 0)
      return emitOpError("'pairing' adjacent needs an even output width, got ")
             << getOutWidth();
  }

  if (getLayout() == TensorLayout::image_pairs) {
    // A word holds images n and n + N/2 of one element (ConvShape.h, Layout): only the
    // images pairing reads and writes such words whole, and every word is full.
    if (elem.isF32())
      return emitOpError("'layout' image_pairs applies to f16 and bf16 convs only: it stores "
                         "two images' halves in one 32-bit word");
    if (n % 2 != 0)
      return emitOpError("'layout' image_pairs needs an even batch, got ") << n;
    if (getPairing() && *getPairing() != OutputPairing::images)
      return emitOpError("'layout' image_pairs pairs images; 'pairing' ")
             << stringifyOutputPairing(*getPairing()) << " contradicts it";
  }

  if (auto bias = getBiasAttr()) {
    ShapedType bt = bias.getShapedType();
    if (!bt.getElementType().isF32() && bt.getElementType() != elem)
      return emitOpError("'bias' element type must be f32 or the input's (")
             << elem << "), got " << bt.getElementType();
    if (bt.getRank() != 1 || bt.getDimSize(0) != k)
      return emitOpError("'bias' must have shape [") << k << "] (one value per output channel)";
  }

  int64_t extH = dil[0] * (r - 1) + 1, extW = dil[1] * (s - 1) + 1;
  int64_t padH = h + pad[0] + pad[2], padW = w + pad[1] + pad[3];
  if (extH > padH || extW > padW)
    return emitOpError("dilated filter (") << extH << "x" << extW
                                           << ") is larger than the padded input (" << padH
                                           << "x" << padW << "); check 'padding'";
  int64_t p = (padH - extH) / strides[0] + 1, q = (padW - extW) / strides[1] + 1;
  RankedTensorType rt = getResultType();
  if (rt.getDimSize(0) != n)
    return emitOpError("result batch (") << rt.getDimSize(0) << ") must equal the input batch ("
                                         << n << ")";
  if (rt.getDimSize(1) != k)
    return emitOpError("result channels (")
           << rt.getDimSize(1) << ") must equal the output channels of 'weights' (" << k << ")";
  if (rt.getDimSize(2) != p || rt.getDimSize(3) != q)
    return emitOpError("result spatial shape ")
           << rt.getDimSize(2) << "x" << rt.getDimSize(3)
           << " does not follow from the input, 'weights', 'strides', 'padding' and "
              "'dilations', which give "
           << p << "x" << q;
  return success();
}
