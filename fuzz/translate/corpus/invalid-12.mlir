func.func @weights_zero_dim(%x: tensor<1x1x1x1xf32>) -> tensor<1x1x1x1xf32> {
  %y = spconv.conv2d %x {weights = dense<> : tensor<0x1x1x1xf32>} : tensor<1x1x1x1xf32> -> tensor<1x1x1x1xf32>
  return %y : tensor<1x1x1x1xf32>
}
