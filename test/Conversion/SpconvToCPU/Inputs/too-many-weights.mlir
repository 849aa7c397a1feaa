func.func @f(%x: tensor<1x2048x1x1xf32>) -> tensor<1x2049x1x1xf32> {
  %y = spconv.conv2d %x {weights = dense<1.0> : tensor<2049x2048x1x1xf32>} : tensor<1x2048x1x1xf32> -> tensor<1x2049x1x1xf32>
  return %y : tensor<1x2049x1x1xf32>
}
