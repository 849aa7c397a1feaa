func.func @weights_i32(%x: tensor<1x1x1x1xf32>) -> tensor<1x1x1x1xf32> {
  %y = spconv.conv2d %x {weights = dense<1> : tensor<1x1x1x1xi32>} : tensor<1x1x1x1xf32> -> tensor<1x1x1x1xf32>
  return %y : tensor<1x1x1x1xf32>
}
