// Inits that are not a fill or per-channel broadcast (here: a function argument), an output
// smaller than the full extent (linalg allows it, spconv does not), and an f16 conv all stay.
func.func @unsupported(%x: tensor<1x1x3x3xf32>, %acc: tensor<1x2x1x1xf32>,
                       %h: tensor<1x1x3x3xf16>) -> (tensor<1x2x1x1xf32>, tensor<1x2x2x2xf32>, tensor<1x2x1x1xf16>) {
  %w = arith.constant dense<0.5> : tensor<2x1x3x3xf32>
  %w1 = arith.constant dense<0.5> : tensor<2x1x1x1xf32>
  %wh = arith.constant dense<0.5> : tensor<2x1x3x3xf16>
  %zero = arith.constant 0.0 : f32
  %zh = arith.constant 0.0 : f16
  %c0 = linalg.conv_2d_nchw_fchw ins(%x, %w : tensor<1x1x3x3xf32>, tensor<2x1x3x3xf32>)
          outs(%acc : tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32>
  %e = tensor.empty() : tensor<1x2x2x2xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %c1 = linalg.conv_2d_nchw_fchw ins(%x, %w1 : tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>)
          outs(%i : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %eh = tensor.empty() : tensor<1x2x1x1xf16>
  %ih = linalg.fill ins(%zh : f16) outs(%eh : tensor<1x2x1x1xf16>) -> tensor<1x2x1x1xf16>
  %c2 = linalg.conv_2d_nchw_fchw ins(%h, %wh : tensor<1x1x3x3xf16>, tensor<2x1x3x3xf16>)
          outs(%ih : tensor<1x2x1x1xf16>) -> tensor<1x2x1x1xf16>
  return %c0, %c1, %c2 : tensor<1x2x1x1xf32>, tensor<1x2x2x2xf32>, tensor<1x2x1x1xf16>
}
