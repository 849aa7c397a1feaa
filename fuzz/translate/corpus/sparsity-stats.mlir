// The IR passes through unchanged.
// output= writes the same lines to a file and nothing to stderr.

// 3 of 8 weights nonzero (-0.0 counts as zero); P = Q = 2, so useful FLOP/image = 2 * 2 * 2 * 3 = 24; 8 f32 = 32 B.
func.func @dense(%x: tensor<1x1x3x3xf32>) -> tensor<1x2x2x2xf32> {
  %y = spconv.conv2d %x {weights = dense<[[[[1.0, 0.0], [0.0, 2.0]]], [[[0.0, -0.0], [0.0, -1.0]]]]> : tensor<2x1x2x2xf32>}
      : tensor<1x1x3x3xf32> -> tensor<1x2x2x2xf32>
  return %y : tensor<1x2x2x2xf32>
}

// dense_resource weights [1, 0, inf, nan]: NaN and Inf count as nonzero (and non-finite).
// Batch 4, stride 2, padding 1: P = (5 + 2 - 2) / 2 + 1 = 3, Q = (4 + 2 - 1) / 2 + 1 = 3,
// FLOP/image = 2 * 3 * 3 * 3 = 54 (per image, so independent of the batch).
func.func @resource(%x: tensor<4x1x5x4xf32>) -> tensor<4x1x3x3xf32> {
  %y = spconv.conv2d %x {weights = dense_resource<w> : tensor<1x1x2x2xf32>,
                         strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>}
      : tensor<4x1x5x4xf32> -> tensor<4x1x3x3xf32>
  return %y : tensor<4x1x3x3xf32>
}

// All-zero weights: sparsity 1 and no useful FLOP.
func.func @zero(%x: tensor<1x2x1x1xf32>) -> tensor<1x3x1x1xf32> {
  %y = spconv.conv2d %x {weights = dense<0.0> : tensor<3x2x1x1xf32>} : tensor<1x2x1x1xf32> -> tensor<1x3x1x1xf32>
  return %y : tensor<1x3x1x1xf32>
}

{-#
  dialect_resources: {
    builtin: {
      w: "0x040000000000803F000000000000807F0000C07F"
    }
  }
#-}
