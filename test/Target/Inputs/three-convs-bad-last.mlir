// three-convs.mlir with the third conv's weights in a blob the file does not hold: the
// compile fails at that conv, after the first two convs' units went to ptxas.
func.func @net(%x: tensor<1x4x10x10xf32>) -> tensor<1x8x5x5xf32> {
  %a = spconv.conv2d %x {weights = dense<0.5> : tensor<16x4x3x3xf32>,
                         padding = array<i64: 1, 1, 1, 1>}
      : tensor<1x4x10x10xf32> -> tensor<1x16x10x10xf32> loc("net/first")
  %b = spconv.conv2d %a {weights = dense<0.25> : tensor<16x16x3x3xf32>,
                         padding = array<i64: 1, 1, 1, 1>, activation = #spconv.activation<relu>}
      : tensor<1x16x10x10xf32> -> tensor<1x16x10x10xf32> loc("net/second")
  %c = spconv.conv2d %b {weights = dense_resource<missing_blob> : tensor<8x16x1x1xf32>,
                         strides = array<i64: 2, 2>}
      : tensor<1x16x10x10xf32> -> tensor<1x8x5x5xf32> loc("net/third")
  return %c : tensor<1x8x5x5xf32>
}
