// Printing must be a fixed point: print, re-parse, print again gives the same text.
// The generic form spells out every attribute, defaults included, and parses back into the
// same custom form (where defaults are elided).

func.func @defaults(%x: tensor<1x1x2x2xf32>) -> tensor<1x1x2x1xf32> {
  %y = spconv.conv2d %x {weights = dense<[[[[1.0, 0.0]]]]> : tensor<1x1x1x2xf32>}
      : tensor<1x1x2x2xf32> -> tensor<1x1x2x1xf32>
  return %y : tensor<1x1x2x1xf32>
}

// Every attribute set to a non-default value. P = (5 + 1 + 2 - 2*(3-1) - 1) / 2 + 1 = 2,
// Q = (6 + 0 + 1 - 1*(2-1) - 1) / 3 + 1 = 2; weights are K x C/groups x R x S.
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
func.func @explicit_defaults(%x: tensor<1x1x1x1xf32>) -> tensor<1x1x1x1xf32> {
  %y = spconv.conv2d %x {weights = dense<1.0> : tensor<1x1x1x1xf32>,
                         strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>,
                         dilations = array<i64: 1, 1>, groups = 1,
                         activation = #spconv.activation<none>}
      : tensor<1x1x1x1xf32> -> tensor<1x1x1x1xf32>
  return %y : tensor<1x1x1x1xf32>
}

// All-zero weights are valid: the result is the bias (after the activation).
func.func @all_zero(%x: tensor<1x3x4x4xf32>) -> tensor<1x2x2x2xf32> {
  %y = spconv.conv2d %x {weights = dense<0.0> : tensor<2x3x3x3xf32>,
                         bias = dense<3.0> : tensor<2xf32>}
      : tensor<1x3x4x4xf32> -> tensor<1x2x2x2xf32>
  return %y : tensor<1x2x2x2xf32>
}

// dense_resource weights and bias; the blobs (4-byte alignment header, then f32 data) must
// survive every round trip byte for byte.
func.func @resource(%x: tensor<1x1x1x2xf32>) -> tensor<1x2x1x1xf32> {
  %y = spconv.conv2d %x {weights = dense_resource<w0> : tensor<2x1x1x2xf32>,
                         bias = dense_resource<b0> : tensor<2xf32>}
      : tensor<1x1x1x2xf32> -> tensor<1x2x1x1xf32>
  return %y : tensor<1x2x1x1xf32>
}

{-#
  dialect_resources: {
    builtin: {
      w0: "0x040000000000803F000000000000000000000040",
      b0: "0x040000000000803F000080BF"
    }
  }
#-}
