// Zero pad on H/W only becomes [top, left, bottom, right]; the pad op is dropped. The filter is
// a dense_resource and stays one.
func.func @padded(%x: tensor<1x1x4x4xf32>) -> tensor<1x2x3x7xf32> {
  %w = arith.constant dense_resource<w1> : tensor<2x1x3x3xf32>
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 2] high[0, 0, 0, 3] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %zero : f32
  } : tensor<1x1x4x4xf32> to tensor<1x1x5x9xf32>
  %e = tensor.empty() : tensor<1x2x3x7xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x3x7xf32>) -> tensor<1x2x3x7xf32>
  %y = linalg.conv_2d_nchw_fchw ins(%p, %w : tensor<1x1x5x9xf32>, tensor<2x1x3x3xf32>)
         outs(%init : tensor<1x2x3x7xf32>) -> tensor<1x2x3x7xf32>
  return %y : tensor<1x2x3x7xf32>
}
{-#
  dialect_resources: {
    builtin: {
      w1: "0x040000000000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F"
    }
  }
#-}
