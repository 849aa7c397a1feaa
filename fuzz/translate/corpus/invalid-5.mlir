func.func @result_f16(%x: tensor<1x1x1x1xf32>) -> tensor<1x1x1x1xf16> {
  %y = spconv.conv2d %x {weights = dense<1.0> : tensor<1x1x1x1xf32>} : tensor<1x1x1x1xf32> -> tensor<1x1x1x1xf16>
  return %y : tensor<1x1x1x1xf16>
}
