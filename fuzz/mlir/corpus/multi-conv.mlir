// Several convs in one file, in two functions, with inline `dense` weights (the generator
// writes dense_resource blobs): each gets its own kernel, its own weights entry and its own
// line. Conv 1 feeds on conv 0's result; the check gives every conv its own random input.
// Conv 2 has a NaN weight and an Inf weight: they are nonzero, so they stay FMA immediates
// and propagate exactly as in the reference (NaN matches NaN); only the +-0.0 weights go.




func.func @two(%x: tensor<1x2x4x4xf32>) -> tensor<1x3x3x3xf32> {
  %y = spconv.conv2d %x {weights = dense<[[[[0.5, 0.0], [0.0, 0.0]], [[0.0, 0.0], [0.0, -0.0]]],
                                         [[[0.0, 0.0], [0.0, 1.25]], [[0.0, -3.0], [0.0, 0.0]]]]>
                                  : tensor<2x2x2x2xf32>}
      : tensor<1x2x4x4xf32> -> tensor<1x2x3x3xf32>
  %z = spconv.conv2d %y {weights = dense<[[[[1.0]], [[0.0]]], [[[0.0]], [[-1.0]]], [[[2.0]], [[0.25]]]]>
                                  : tensor<3x2x1x1xf32>,
                         bias = dense<[0.5, -0.5, 0.0]> : tensor<3xf32>,
                         activation = #spconv.activation<relu>}
      : tensor<1x2x3x3xf32> -> tensor<1x3x3x3xf32>
  return %z : tensor<1x3x3x3xf32>
}

func.func @nonfinite(%x: tensor<2x1x5x5xf32>) -> tensor<2x2x5x5xf32> {
  %y = spconv.conv2d %x {weights = dense<[[[[0.0, 0.0, 0.0], [0.0, 0x7FC00000, 0.0], [0.0, 0.0, 0.0]]],
                                         [[[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0x7F800000]]]]>
                                  : tensor<2x1x3x3xf32>,
                         padding = array<i64: 1, 1, 1, 1>}
      : tensor<2x1x5x5xf32> -> tensor<2x2x5x5xf32>
  return %y : tensor<2x2x5x5xf32>
}
