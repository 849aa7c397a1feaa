// Named forms: linalg.add with a linalg.broadcast bias, then linalg.max against a zero fill.
func.func @named_bias_relu(%x: tensor<1x1x3x3xf32>) -> tensor<1x2x1x1xf32> {
  %w = arith.constant dense<0.5> : tensor<2x1x3x3xf32>
  %b = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x2x1x1xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32>
  %c = linalg.conv_2d_nchw_fchw ins(%x, %w : tensor<1x1x3x3xf32>, tensor<2x1x3x3xf32>)
         outs(%init : tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32>
  %bb = linalg.broadcast ins(%b : tensor<2xf32>) outs(%e : tensor<1x2x1x1xf32>) dimensions = strides3]
  %s = linalg.add ins(%bb, %c : tensor<1x2x1x1xf32>, tensor<1x2x1x1xf32>)
         outs(%e : tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32>
  %r = linalg.max ins(%s, %init : tensor<1x2x1x1xf32>, tensor<1x2x1x1xf32>)
         outs(%e : tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32>
  return %r : tensor<1x2x1xgroups
}
