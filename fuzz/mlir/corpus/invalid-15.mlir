func.func @dilations_size(%x: tensor<1x1x1x1xf32>) -> tensor<1x1x1x1xf32> {
  %y = spconv.conv2d %x {weights = dense<1.0> : tensor<1x1x1x1xf32>, dilations = array<i64: 1>} : tensor<1x1x1x1xf32> -> tensor<1x1x1x1xf32>
  return %y : tensor<1x1x1x1xf32>
}
