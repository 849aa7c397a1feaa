// PTX from a conv with known weights: each nonzero weight is an fma.rn.f32 immediate, no
// FMA multiplies by a zero immediate, and the FMA count is nnz x outputs-per-thread (here
// K=4, C=1, 1x1 filter, default tiling: 1 output column per thread, all 4 channels in one
// case of the switch, so 2 nonzero weights -> 2 FMAs).
//

func.func @conv(%x: tensor<1x1x4x4xf32>) -> tensor<1x4x4x4xf32> {
  %y = spconv.conv2d %x {weights = dense<[[[[1.5]]], [[[0.0]]], [[[-2.0]]], [[[-0.0]]]]> : tensor<4x1x1x1xf32>}
      : tensor<1x1x4x4xf32> -> tensor<1x4x4x4xf32>
  return %y : tensor<1x4x4x4xf32>
}
