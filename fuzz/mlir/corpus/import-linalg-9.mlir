// A pad with 1.0 is not a zero padding: the tensor.pad stays and feeds an unpadded conv.
func.func @nonzero_pad(%x: tensor<1x1x3x3xf32>) -> tensor<1x2x3x3xf32> {
  %w = arith.constant dense<0.5> : tensor<2x1x3x3xf32>
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %one : f32
  } : tensor<1x1x3x3xf32> to tensor<1x1x5x5xf32>
  %e = tensor.empty() : tensor<1x2x3x3xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  %c = linalg.conv_2d_nchw_fchw ins(%p, %w : tensor<1x1x5x5xf32>, tensor<2x1x3x3xf32>)
         outs(%init : tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  return %c : tensor<1x2x3x3xf32>
}
