func.func @f(%x: tensor<1x1x3x3xf32>) -> tensor<1x2x2x2xf32> {
  %y = spconv.conv2d %x {weights = dense_resource<w> : tensor<2x1x2x2xf32>} : tensor<1x1x3x3xf32> -> tensor<1x2x2x2xf32>
  return %y : tensor<1x2x2x2xf32>
}
{-#
  dialect_resources: {
    builtin: {
      w: "0x040000000000803F0000004"
    }
  }
#-}
