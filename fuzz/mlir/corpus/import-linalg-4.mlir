// Bias (operands swapped: bias first, conv in the init) and maxnumf ReLU (zero captured from
// outside, on the left) in one generic.
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#ch = affine_map<(d0, d1, d2, d3) -> (d1)>
func.func @bias_relu_one_generic(%x: tensor<1x1x3x3xf32>) -> tensor<1x2x1x1xf32> {
  %w = arith.constant dense<0.5> : tensor<2x1x3x3xf32>
  %b = arith.constant dense<3.0> : tensor<2xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x2x1x1xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32>
  %c = linalg.conv_2d_nchw_fchw ins(%x, %w : tensor<1x1x3x3xf32>, tensor<2x1x3x3xf32>)
         outs(%init : tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32>
  %r = linalg.generic {indexing_maps = [#ch, #id],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%b : tensor<2xf32>) outs(%c : tensor<1x2x1x1xf32>) {
  ^bb0(%bias: f32, %acc: f32):
    %s = arith.addf %bias, %acc : f32
    %m = arith.maxnumf %zero, %s : f32
    linalg.yield %m : f32
  } -> tensor<1x2x1x1xf32>
  return %r : tensor<1x2x1x1xf32>
}
