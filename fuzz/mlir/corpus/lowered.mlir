func.func @f(%x: tensor<1x1x3x3xf32>) -> tensor<1x2x2x2xf32> {
  %y = spconv.conv2d %x {weights = dense<1.0> : tensor<2x1x2x2xf32>, spconv.kernel = @k} : tensor<1x1x3x3xf32> -> tensor<1x2x2x2xf32>
  return %y : tensor<1x2x2x2xf32>
}
