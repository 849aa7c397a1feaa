func.func @zero_dim(%x: tensor<1x0x1x1xf32>) -> tensor<1x1x1x1xf32> {
  %y = spconv.conv2d %x {weights = dense<1.0> : tensor<1x1x1x1xf32>} : tensor<1x0x1x1xf32> -> tensor<1x1x1x1xf32>
  return %y : tensor<1x1x1x1xf32>
}
