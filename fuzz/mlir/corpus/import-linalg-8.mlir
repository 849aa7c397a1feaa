// A non-constant filter stays linalg.
func.func @dynamic_filter(%x: tensor<1x1x3x3xf32>, %w: tensor<2x1x3x3xf32>) -> tensor<1x2x1x1xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x2x1x1xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32>
  %c = linalg.conv_2d_nchw_fchw ins(%x, %w : tensor<1x1x3x3xf32>, tensor<2x1x3x3xf32>)
         outs(%init : tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32>
  return %c : tensor<1x2x1x1xf32>
}
