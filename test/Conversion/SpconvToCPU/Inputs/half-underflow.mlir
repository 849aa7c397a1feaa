// An f16 conv whose f32 weights include 1e-10, which rounds to 0 in f16.
func.func @conv(%x: tensor<2x1x4x4xf16>) -> tensor<2x2x4x4xf16> {
  %y = spconv.conv2d %x {weights = dense<[[[[1.5]]], [[[1.0e-10]]]]> : tensor<2x1x1x1xf32>}
      : tensor<2x1x4x4xf16> -> tensor<2x2x4x4xf16>
  return %y : tensor<2x2x4x4xf16>
}
