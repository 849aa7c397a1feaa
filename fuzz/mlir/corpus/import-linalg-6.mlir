// Bias from the init: a broadcast of a per-channel constant (named and generic forms) and a
// constant fill (a splat bias).
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#ch = affine_map<(d0, d1, d2, d3) -> (d1)>
func.func @init_bias(%x: tensor<1x1x3x3xf32>) -> (tensor<1x2x1x1xf32>, tensor<1x2x1x1xf32>, tensor<1x2x1x1xf32>) {
  %w = arith.constant dense<0.5> : tensor<2x1x3x3xf32>
  %b = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %seven = arith.constant 7.0 : f32
  %e = tensor.empty() : tensor<1x2x1x1xf32>
  %i0 = linalg.broadcast ins(%b : tensor<2xf32>) outs(%e : tensor<1x2x1x1xf32>) dimensions = [0, 2, 3]
  %c0 = linalg.conv_2d_nchw_fchw ins(%x, %w : tensor<1x1x3x3xf32>, tensor<2x1x3x3xf32>)
          outs(%i0 : tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32>
  %i1 = linalg.generic {indexing_maps = [#ch, #id],
                        iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%b : tensor<2xf32>) outs(%e : tensor<1x2x1x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x2x1x1xf32>
  %c1 = linalg.conv_2d_nchw_fchw ins(%x, %w : tensor<1x1x3x3xf32>, tensor<2x1x3x3xf32>)
          outs(%i1 : tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32>
  %i2 = linalg.fill ins(%seven : f32) outs(%e : tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32>
  %c2 = linalg.conv_2d_nchw_fchw ins(%x, %w : tensor<1x1x3x3xf32>, tensor<2x1x3x3xf32>)
          outs(%i2 : tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32>
  return %c0, %c1, %c2 : tensor<1x2x1x1xf32>, tensor<1x2x1x1xf32>, tensor<1x2x1x1xf32>
}
