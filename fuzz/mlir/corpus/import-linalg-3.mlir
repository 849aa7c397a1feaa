// Bias add and ReLU as two generics (torch-mlir style), the ReLU with maximumf against an
// in-body zero: both fuse into one op.
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#ch = affine_map<(d0, d1, d2, d3) -> (d1)>
func.func @bias_relu_generics(%x: tensor<1x1x3x3xf32>) -> tensor<1x2x1x1xf32> {
  %w = arith.constant dense<0.5> : tensor<2x1x3x3xf32>
  %b = arith.constant dense<[1.0, -2.0]> : tensor<2xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x2x1x1xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32>
  %c = linalg.conv_2d_nchw_fchw ins(%x, %w : tensor<1x1x3x3xf32>, tensor<2x1x3x3xf32>)
         outs(%init : tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32>
  %biased = linalg.generic {indexing_maps = [#id, #ch, #id],
                            iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c, %b : tensor<1x2x1x1xf32>, tensor<2xf32>) outs(%e : tensor<1x2x1x1xf32>) {
  ^bb0(%in: f32, %bias: f32, %out: f32):
    %s = arith.addf %in, %bias : f32
    linalg.yield %s : f32
  } -> tensor<1x2x1x1xf32>
  %r = linalg.generic {indexing_maps = [#id, #id],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%biased : tensor<1x2x1x1xf32>) outs(%e : tensor<1x2x1x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %z = arith.constant 0.0 : f32
    %m = arith.maximumf %in, %z : f32
    linalg.yield %m : f32
  } -> tensor<1x2x1x1xf32>
  return %r : tensor<1x2x1x1xf32>
}
