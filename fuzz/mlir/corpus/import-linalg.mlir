// Plain conv into a zero fill: no padding, default strides/dilations, no bias.
func.func @plain(%x: tensor<1x2x5x5xf32>) -> tensor<1x3x3x3xf32> {
  %w = arith.constant dense<1.0> : tensor<3x2x3x3xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x3x3x3xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x3x3x3xf32>) -> tensor<1x3x3x3xf32>
  %y = linalg.conv_2d_nchw_fchw ins(%x, %w : tensor<1x2x5x5xf32>, tensor<3x2x3x3xf32>)
         outs(%init : tensor<1x3x3x3xf32>) -> tensor<1x3x3x3xf32>
  return %y : tensor<1x3x3x3xf32>
}
