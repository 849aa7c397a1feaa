// A conv result with a second user keeps its ReLU separate (fusing would compute the conv
// twice); the conv itself still imports.
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @two_users(%x: tensor<1x1x3x3xf32>) -> (tensor<1x2x1x1xf32>, tensor<1x2x1x1xf32>) {
  %w = arith.constant dense<0.5> : tensor<2x1x3x3xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x2x1x1xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32>
  %c = linalg.conv_2d_nchw_fchw ins(%x, %w : tensor<1x1x3x3xf32>, tensor<2x1x3x3xf32>)
         outs(%init : tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32>
  %r = linalg.generic {indexing_maps = [#id, #id],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c : tensor<1x2x1x1xf32>) outs(%e : tensor<1x2x1x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x2x1x1xf32>
  return %c, %r : tensor<1x2x1x1xf32>, tensor<1x2x1x1xf32>
}
