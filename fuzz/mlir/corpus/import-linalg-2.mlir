// Strides and dilations carry over: H: (9 - (2*2+1)) / 2 + 1 = 3, W: (8 - (3*1+1)) / 3 + 1 = 2.
func.func @strided_dilated(%x: tensor<1x1x9x8xf32>) -> tensor<1x1x3x2xf32> {
  %w = arith.constant dense<2.0> : tensor<1x1x3x2xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x1x3x2xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x1x3x2xf32>) -> tensor<1x1x3x2xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<[2, 3]> : tensor<2xi64>,
                                 strides = dense<[2, 3]> : tensor<2xi64>}
         ins(%x, %w : tensor<1x1x9x8xf32>, tensor<1x1x3x2xf32>)
         outs(%init : tensor<1x1x3x2xf32>) -> tensor<1x1x3x2xf32>
  return %y : tensor<1x1x3x2xf32>
}
