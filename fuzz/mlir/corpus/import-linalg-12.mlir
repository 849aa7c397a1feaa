// Not a bias add or ReLU, so nothing fuses: max against -0.0 (differs from ReLU for x = -0.0),
// a body doing more than add/max, and a bias that is not per channel (read through d2).
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#h = affine_map<(d0, d1, d2, d3) -> (d2)>
func.func @not_epilogues(%x: tensor<1x1x3x3xf32>) -> (tensor<1x2x1x1xf32>, tensor<1x2x1x1xf32>, tensor<1x2x1x1xf32>) {
  %w = arith.constant dense<0.5> : tensor<2x1x3x3xf32>
  %b = arith.constant dense<1.0> : tensor<1xf32>
  %zero = arith.constant 0.0 : f32
  %nzero = arith.constant -0.0 : f32
  %two = arith.constant 2.0 : f32
  %e = tensor.empty() : tensor<1x2x1x1xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32>
  %c0 = linalg.conv_2d_nchw_fchw ins(%x, %w : tensor<1x1x3x3xf32>, tensor<2x1x3x3xf32>)
          outs(%init : tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32>
  %r0 = linalg.generic {indexing_maps = [#id, #id],
                        iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c0 : tensor<1x2x1x1xf32>) outs(%e : tensor<1x2x1x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %nzero : f32
    linalg.yield %m : f32
  } -> tensor<1x2x1x1xf32>
  %c1 = linalg.conv_2d_nchw_fchw ins(%x, %w : tensor<1x1x3x3xf32>, tensor<2x1x3x3xf32>)
          outs(%init : tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32>
  %r1 = linalg.generic {indexing_maps = [#id, #id],
                        iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c1 : tensor<1x2x1x1xf32>) outs(%e : tensor<1x2x1x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.mulf %in, %two : f32
    %m = arith.maximumf %s, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x2x1x1xf32>
  %c2 = linalg.conv_2d_nchw_fchw ins(%x, %w : tensor<1x1x3x3xf32>, tensor<2x1x3x3xf32>)
          outs(%init : tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32>
  %r2 = linalg.generic {indexing_maps = [#id, #h, #id],
                        iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c2, %b : tensor<1x2x1x1xf32>, tensor<1xf32>) outs(%e : tensor<1x2x1x1xf32>) {
  ^bb0(%in: f32, %bias: f32, %out: f32):
    %s = arith.addf %in, %bias : f32
    linalg.yield %s : f32
  } -> tensor<1x2x1x1xf32>
  return %r0, %r1, %r2 : tensor<1x2x1x1xf32>, tensor<1x2x1x1xf32>, tensor<1x2x1x1xf32>
}
