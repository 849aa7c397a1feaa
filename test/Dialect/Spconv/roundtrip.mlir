// RUN: spconv-opt %s | FileCheck %s
// Printing must be a fixed point: print, re-parse, print again gives the same text.
// RUN: spconv-opt %s | spconv-opt | FileCheck %s
// The generic form spells out every attribute, defaults included, and parses back into the
// same custom form (where defaults are elided).
// RUN: spconv-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC
// RUN: spconv-opt %s --mlir-print-op-generic | spconv-opt | FileCheck %s

// CHECK-LABEL: func.func @defaults
// CHECK-NEXT: spconv.conv2d %{{.*}} {weights = dense<{{\[\[\[\[}}1.000000e+00, 0.000000e+00{{\]\]\]\]}}> : tensor<1x1x1x2xf32>} : tensor<1x1x2x2xf32> -> tensor<1x1x2x1xf32>
// GENERIC-LABEL: sym_name = "defaults"
// GENERIC: "spconv.conv2d"(%{{.*}}) <{activation = #spconv.activation<none>, dilations = array<i64: 1, 1>, groups = 1 : i64, layout = #spconv.layout<nchw>, padding = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>, weights = dense<{{.*}}> : tensor<1x1x1x2xf32>}> : (tensor<1x1x2x2xf32>) -> tensor<1x1x2x1xf32>
func.func @defaults(%x: tensor<1x1x2x2xf32>) -> tensor<1x1x2x1xf32> {
  %y = spconv.conv2d %x {weights = dense<[[[[1.0, 0.0]]]]> : tensor<1x1x1x2xf32>}
      : tensor<1x1x2x2xf32> -> tensor<1x1x2x1xf32>
  return %y : tensor<1x1x2x1xf32>
}

// Every attribute set to a non-default value. P = (5 + 1 + 2 - 2*(3-1) - 1) / 2 + 1 = 2,
// Q = (6 + 0 + 1 - 1*(2-1) - 1) / 3 + 1 = 2; weights are K x C/groups x R x S.
// CHECK-LABEL: func.func @all_attributes
// CHECK-NEXT: spconv.conv2d %{{.*}} {activation = #spconv.activation<relu>, bias = dense<[1.000000e+00, -1.000000e+00, 5.000000e-01, 0.000000e+00]> : tensor<4xf32>, dilations = array<i64: 2, 1>, groups = 2 : i64, padding = array<i64: 1, 0, 2, 1>, strides = array<i64: 2, 3>, weights = dense<2.500000e-01> : tensor<4x1x3x2xf32>} : tensor<2x2x5x6xf32> -> tensor<2x4x2x2xf32>
// GENERIC-LABEL: sym_name = "all_attributes"
// GENERIC: "spconv.conv2d"(%{{.*}}) <{activation = #spconv.activation<relu>, bias = dense<{{.*}}> : tensor<4xf32>, dilations = array<i64: 2, 1>, groups = 2 : i64, layout = #spconv.layout<nchw>, padding = array<i64: 1, 0, 2, 1>, strides = array<i64: 2, 3>, weights = dense<2.500000e-01> : tensor<4x1x3x2xf32>}>
func.func @all_attributes(%x: tensor<2x2x5x6xf32>) -> tensor<2x4x2x2xf32> {
  %y = spconv.conv2d %x {weights = dense<0.25> : tensor<4x1x3x2xf32>,
                         bias = dense<[1.0, -1.0, 0.5, 0.0]> : tensor<4xf32>,
                         strides = array<i64: 2, 3>, padding = array<i64: 1, 0, 2, 1>,
                         dilations = array<i64: 2, 1>, groups = 2,
                         activation = #spconv.activation<relu>}
      : tensor<2x2x5x6xf32> -> tensor<2x4x2x2xf32>
  return %y : tensor<2x4x2x2xf32>
}

// Spelling a default explicitly is accepted and then elided.
// CHECK-LABEL: func.func @explicit_defaults
// CHECK-NEXT: spconv.conv2d %{{.*}} {weights = dense<1.000000e+00> : tensor<1x1x1x1xf32>} : tensor<1x1x1x1xf32> -> tensor<1x1x1x1xf32>
func.func @explicit_defaults(%x: tensor<1x1x1x1xf32>) -> tensor<1x1x1x1xf32> {
  %y = spconv.conv2d %x {weights = dense<1.0> : tensor<1x1x1x1xf32>,
                         strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>,
                         dilations = array<i64: 1, 1>, groups = 1,
                         activation = #spconv.activation<none>}
      : tensor<1x1x1x1xf32> -> tensor<1x1x1x1xf32>
  return %y : tensor<1x1x1x1xf32>
}

// All-zero weights are valid: the result is the bias (after the activation).
// CHECK-LABEL: func.func @all_zero
// CHECK-NEXT: spconv.conv2d %{{.*}} {bias = dense<3.000000e+00> : tensor<2xf32>, weights = dense<0.000000e+00> : tensor<2x3x3x3xf32>}
func.func @all_zero(%x: tensor<1x3x4x4xf32>) -> tensor<1x2x2x2xf32> {
  %y = spconv.conv2d %x {weights = dense<0.0> : tensor<2x3x3x3xf32>,
                         bias = dense<3.0> : tensor<2xf32>}
      : tensor<1x3x4x4xf32> -> tensor<1x2x2x2xf32>
  return %y : tensor<1x2x2x2xf32>
}

// dense_resource weights and bias; the blobs (4-byte alignment header, then f32 data) must
// survive every round trip byte for byte.
// CHECK-LABEL: func.func @resource
// CHECK-NEXT: spconv.conv2d %{{.*}} {bias = dense_resource<b0> : tensor<2xf32>, weights = dense_resource<w0> : tensor<2x1x1x2xf32>} : tensor<1x1x1x2xf32> -> tensor<1x2x1x1xf32>
// GENERIC-LABEL: sym_name = "resource"
// GENERIC: "spconv.conv2d"(%{{.*}}) <{activation = #spconv.activation<none>, bias = dense_resource<b0> : tensor<2xf32>, {{.*}}, weights = dense_resource<w0> : tensor<2x1x1x2xf32>}>
func.func @resource(%x: tensor<1x1x1x2xf32>) -> tensor<1x2x1x1xf32> {
  %y = spconv.conv2d %x {weights = dense_resource<w0> : tensor<2x1x1x2xf32>,
                         bias = dense_resource<b0> : tensor<2xf32>}
      : tensor<1x1x1x2xf32> -> tensor<1x2x1x1xf32>
  return %y : tensor<1x2x1x1xf32>
}

// Half precision: f16 and bf16 tensors, f32 or same-type weights, an explicit pairing.
// CHECK-LABEL: func.func @half
// CHECK: spconv.conv2d %{{.*}} {pairing = #spconv.pairing<rows>, weights = dense<1.500000e+00> : tensor<2x1x1x1xf16>} : tensor<1x1x4x4xf16> -> tensor<1x2x4x4xf16>
// CHECK: spconv.conv2d %{{.*}} {weights = dense<2.500000e-01> : tensor<2x1x1x1xf32>} : tensor<2x1x4x4xbf16> -> tensor<2x2x4x4xbf16>
// CHECK: spconv.conv2d %{{.*}} {pairing = #spconv.pairing<adjacent>, weights = dense<1.500000e+00> : tensor<2x1x1x1xf16>} : tensor<1x1x4x4xf16> -> tensor<1x2x4x4xf16>
// The image-pair layout; nchw, the default, is elided.
// CHECK: spconv.conv2d %{{.*}} {layout = #spconv.layout<image_pairs>, weights = dense<2.500000e-01> : tensor<2x1x1x1xf32>} : tensor<2x1x4x4xbf16> -> tensor<2x2x4x4xbf16>
// CHECK: spconv.conv2d %{{.*}} {weights = dense<2.500000e-01> : tensor<2x1x1x1xf32>} : tensor<2x1x4x4xbf16> -> tensor<2x2x4x4xbf16>
func.func @half(%x: tensor<1x1x4x4xf16>, %z: tensor<2x1x4x4xbf16>) -> (tensor<1x2x4x4xf16>, tensor<2x2x4x4xbf16>, tensor<1x2x4x4xf16>) {
  %y = spconv.conv2d %x {weights = dense<1.5> : tensor<2x1x1x1xf16>, pairing = #spconv.pairing<rows>} : tensor<1x1x4x4xf16> -> tensor<1x2x4x4xf16>
  %w = spconv.conv2d %z {weights = dense<0.25> : tensor<2x1x1x1xf32>} : tensor<2x1x4x4xbf16> -> tensor<2x2x4x4xbf16>
  %a = spconv.conv2d %x {weights = dense<1.5> : tensor<2x1x1x1xf16>, pairing = #spconv.pairing<adjacent>} : tensor<1x1x4x4xf16> -> tensor<1x2x4x4xf16>
  %ip = spconv.conv2d %z {weights = dense<0.25> : tensor<2x1x1x1xf32>, layout = #spconv.layout<image_pairs>} : tensor<2x1x4x4xbf16> -> tensor<2x2x4x4xbf16>
  %nc = spconv.conv2d %z {weights = dense<0.25> : tensor<2x1x1x1xf32>, layout = #spconv.layout<nchw>} : tensor<2x1x4x4xbf16> -> tensor<2x2x4x4xbf16>
  return %y, %w, %a : tensor<1x2x4x4xf16>, tensor<2x2x4x4xbf16>, tensor<1x2x4x4xf16>
}

// A residual, added before the activation (docs/design.md, "Residual epilogue").
// CHECK-LABEL: func.func @residual
// CHECK: spconv.conv2d %{{.*}} residual(%{{.*}} : tensor<2x2x4x4xf16>) {activation = #spconv.activation<relu>, weights = dense<1.500000e+00> : tensor<2x1x1x1xf32>} : tensor<2x1x4x4xf16> -> tensor<2x2x4x4xf16>
// GENERIC: "spconv.conv2d"(%{{.*}}, %{{.*}}) <{activation = #spconv.activation<relu>
func.func @residual(%x: tensor<2x1x4x4xf16>, %r: tensor<2x2x4x4xf16>) -> tensor<2x2x4x4xf16> {
  %y = spconv.conv2d %x residual(%r : tensor<2x2x4x4xf16>) {weights = dense<1.5> : tensor<2x1x1x1xf32>, activation = #spconv.activation<relu>} : tensor<2x1x4x4xf16> -> tensor<2x2x4x4xf16>
  return %y : tensor<2x2x4x4xf16>
}

// CHECK: dialect_resources: {
// CHECK-NEXT: builtin: {
// CHECK-DAG: w0: "0x040000000000803F000000000000000000000040"
// CHECK-DAG: b0: "0x040000000000803F000080BF"
// GENERIC: w0: "0x040000000000803F000000000000000000000040"
{-#
  dialect_resources: {
    builtin: {
      w0: "0x040000000000803F000000000000000000000040",
      b0: "0x040000000000803F000080BF"
    }
  }
#-}
