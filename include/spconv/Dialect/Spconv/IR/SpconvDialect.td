//===- SpconvDialect.td - spconv dialect definition --------*- tablegen -*-===//
//
// The spconv dialect holds convolutions whose weights are compile-time constants, so that later
// passes can specialise the generated code to the weight values (sparsity included).
//
//===----------------------------------------------------------------------===//

#ifndef SPCONV_DIALECT_TD
#define SPCONV_DIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Spconv_Dialect : Dialect {
  let name = "spconv";
  let cppNamespace = "::spconv";
  let summary = "Convolutions with compile-time weights, compiled to weight-specialised code";
  let description = [{
    `spconv` carries convolutions of pruned networks whose weights are known at compile time.
    The lowering turns each nonzero weight into an FMA immediate and deletes every zero
    product; see docs/ in the repository.
  }];
  let useDefaultAttributePrinterParser = 1;
}

def Spconv_Activation : I32EnumAttr<"Activation", "activation fused after the bias", [
    I32EnumAttrCase<"none", 0>,
    I32EnumAttrCase<"relu", 1>,
    // min(max(x, 0), 6): MobileNet's ReLU6, ONNX Clip(0, 6).
    I32EnumAttrCase<"relu6", 2>
  ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::spconv";
}

def Spconv_ActivationAttr : EnumAttr<Spconv_Dialect, Spconv_Activation, "activation"> {
  let assemblyFormat = "`<` $value `>`";
}

// Half precision: which two outputs one paired f16x2/bf16x2 FMA computes (docs/design.md,
// "Half precision"). Mirrors spconv::Pairing of ConvShape.h, whose "none" means "the
// compiler chooses" here.
def Spconv_OutputPairing : I32EnumAttr<"OutputPairing", "outputs paired in one half-precision FMA", [
    I32EnumAttrCase<"images", 1>,
    I32EnumAttrCase<"rows", 2>,
    I32EnumAttrCase<"columns", 3>,
    I32EnumAttrCase<"adjacent", 4>
  ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::spconv";
}

def Spconv_OutputPairingAttr : EnumAttr<Spconv_Dialect, Spconv_OutputPairing, "pairing"> {
  let assemblyFormat = "`<` $value `>`";
}

// How a conv's input and result are stored (docs/design.md, "Image-pair layout"). `nchw`:
// plain row-major NCHW / NKPQ. `image_pairs` (half precision, even batch): images n and
// n + N/2 share one 32-bit word, element (n, c, y, x) at half index
// (((n mod N/2) * C + c) * H + y) * W + x) * 2 + n div (N/2), so the images pairing's words
// are loaded and stored whole. Mirrors spconv::Layout of ConvShape.h.
def Spconv_TensorLayout : I32EnumAttr<"TensorLayout", "how a conv's tensors are stored", [
    I32EnumAttrCase<"nchw", 0>,
    I32EnumAttrCase<"image_pairs", 1>
  ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::spconv";
}

def Spconv_TensorLayoutAttr : EnumAttr<Spconv_Dialect, Spconv_TensorLayout, "layout"> {
  let assemblyFormat = "`<` $value `>`";
}

#endif // SPCONV_DIALECT_TD
