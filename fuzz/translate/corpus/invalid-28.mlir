// A 3x3 filter dilated by 2 spans 5x5; the input padded by 1 on each side is 4x4.
func.func @filter_too_large(%x: tensor<1x1x2x2xf32>) -> tensor<1x1x1x1xf32> {
  %y = spconv.conv2d %x {weights = dense<1.0> : tensor<1x1x3x3xf32>, dilations = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : tensor<1x1x2x2xf32> -> tensor<1x1x1x1xf32>
  return %y : tensor<1x1x1x1xf32>
}
