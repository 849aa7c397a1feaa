//===- SpconvOps.td - spconv operations --------------------*- tablegen -*-===//

#ifndef SPCONV_OPS_TD
#define SPCONV_OPS_TD

include "spconv/Dialect/Spconv/IR/SpconvDialect.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"

class Spconv_Op<string mnemonic, list<Trait> traits = []>
    : Op<Spconv_Dialect, mnemonic, traits>;

def Spconv_Conv2DOp : Spconv_Op<"conv2d", [Pure]> {
  let summary = "2-D convolution with constant (typically sparse) weights";
  let description = [{
    NCHW input, NKPQ result, weights KxCxRxS (C is the channel count per group) held as an
    attribute: inline `dense<...>` or a `dense_resource<...>` blob. Optional bias of shape K,
    strides [sh, sw], padding [top, left, bottom, right], dilations [dh, dw], groups, and a
    fused activation applied after the bias.

    P = (H + top + bottom - dh*(R-1) - 1) / sh + 1, likewise Q.

    Element types: input and result are both f32, f16 or bf16. Weights and bias are f32 or
    the input's type; f32 weights of a half-precision conv are rounded to it (to nearest,
    ties to even) when they are folded into the code, and a nonzero weight that would round
    to zero or overflow is an error there. Half-precision convs compute with paired
    `fma.rn.f16x2` / `bf16x2` instructions that carry one weight for two outputs and
    accumulate in the input's type (docs/design.md, "Half precision": the numerics contract).
    `pairing` (half precision only) chooses the two outputs: `images`, `rows` or `columns`;
    without it the compiler chooses. `accumulate` (half precision only) is where the sums
    live: the input's type (every product accumulated in half precision), or f32 (each
    staged channel chunk's products accumulated in half precision, then added to an f32
    sum: bounded runs); without it, the input's type, which measured faster (docs/design.md,
    "Half precision"). `layout` says how the input and result are stored: `nchw` (the
    default), or `image_pairs` (half precision, even batch: images n and n + N/2 interleaved
    in 32-bit words, so the kernel moves whole words; the pairing is then `images`).

    `residual` (optional) is a tensor of the result's type added to the conv's output
    before the activation: result = activation(conv + bias + residual), a residual block's
    `relu(conv(x) + identity)` in one kernel that reads the identity in its epilogue instead
    of an add and a ReLU pass over memory (docs/design.md, "Residual epilogue"). In half
    precision the add is one more rounding, in the result's type, after the sums are rounded
    to it.
    NaN and Inf weights are accepted and compiled as they are: they are nonzero, so they stay
    as FMA immediates and propagate exactly as they would in a dense convolution. Only +0.0 and
    -0.0 weights are deleted. A conv whose weights are all zero is valid (its result is the
    bias, after the activation).

    Example:
    ```mlir
    %y = spconv.conv2d %x {weights = dense<...> : tensor<8x3x3x3xf32>,
                           padding = array<i64: 1, 1, 1, 1>,
                           activation = #spconv.activation<relu>}
        : tensor<1x3x32x32xf32> -> tensor<1x8x32x32xf32>
    ```
    With a residual:
    ```mlir
    %y = spconv.conv2d %x residual(%id : tensor<1x8x32x32xf32>)
           {weights = dense<...> : tensor<8x8x1x1xf32>, activation = #spconv.activation<relu>}
        : tensor<1x8x32x32xf32> -> tensor<1x8x32x32xf32>
    ```
  }];

  let arguments = (ins
    AnyRankedTensor:$input,
    Optional<AnyRankedTensor>:$residual,
    ElementsAttr:$weights,
    OptionalAttr<ElementsAttr>:$bias,
    DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$strides,
    DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0, 0, 0}">:$padding,
    DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$dilations,
    DefaultValuedAttr<I64Attr, "1">:$groups,
    DefaultValuedAttr<Spconv_ActivationAttr, "::spconv::Activation::none">:$activation,
    OptionalAttr<Spconv_OutputPairingAttr>:$pairing,
    OptionalAttr<TypeAttr>:$accumulate,
    DefaultValuedAttr<Spconv_TensorLayoutAttr, "::spconv::TensorLayout::nchw">:$layout
  );
  let results = (outs AnyRankedTensor:$result);

  let assemblyFormat = [{
    $input (`residual` `(` $residual^ `:` type($residual) `)`)? attr-dict `:` type($input)
    `->` type($result)
  }];
  let hasVerifier = 1;

  let extraClassDeclaration = [{
    /// Shape helpers; valid once the op verifies.
    int64_t getBatch() { return getInputType().getDimSize(0); }
    int64_t getInChannels() { return getInputType().getDimSize(1); }
    int64_t getInHeight() { return getInputType().getDimSize(2); }
    int64_t getInWidth() { return getInputType().getDimSize(3); }
    int64_t getOutChannels() { return getWeightsType().getDimSize(0); }
    int64_t getFilterHeight() { return getWeightsType().getDimSize(2); }
    int64_t getFilterWidth() { return getWeightsType().getDimSize(3); }
    int64_t getOutHeight() { return getResultType().getDimSize(2); }
    int64_t getOutWidth() { return getResultType().getDimSize(3); }
    ::mlir::RankedTensorType getInputType() {
      return ::llvm::cast<::mlir::RankedTensorType>(getInput().getType());
    }
    ::mlir::RankedTensorType getResultType() {
      return ::llvm::cast<::mlir::RankedTensorType>(getResult().getType());
    }
    ::mlir::ShapedType getWeightsType() { return getWeights().getShapedType(); }
  }];
}

#endif // SPCONV_OPS_TD
