func.func @groups_output_channels(%x: tensor<1x4x1x1xf32>) -> tensor<1x3x1x1xf32> {
  %y = spconv.conv2d %x {weights = dense<1.0> : tensor<3x2x1x1xf32>, groups = 2} : tensor<1x4x1x1xf32> -> tensor<1x3x1x1xf32>
  return %y : tensor<1x3x1x1xf32>
}
