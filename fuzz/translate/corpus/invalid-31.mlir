// (7 + 1 + 1 - 3) / 2 + 1 = 4 rows, (7 - 3) / 1 + 1 = 5 columns.
func.func @result_spatial(%x: tensor<1x1x7x7xf32>) -> tensor<1x1x4x4xf32> {
  %y = spconv.conv2d %x {weights = dense<1.0> : tensor<1x1x3x3xf32>, strides = array<i64: 2, 1>, padding = array<i64: 1, 0, 1, 0>} : tensor<1x1x7x7xf32> -> tensor<1x1x4x4xf32>
  return %y : tensor<1x1x4x4xf32>
}
