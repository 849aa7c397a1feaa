// 2^32 weights: refused before any pass tries to expand them into memory.
func.func @too_many_weights(%x: tensor<1x65536x1x1xf32>) -> tensor<1x65536x1x1xf32> {
  %y = spconv.conv2d %x {weights = dense<1.0> : tensor<65536x65536x1x1xf32>} : tensor<1x65536x1x1xf32> -> tensor<1x65536x1x1xf32>
  return %y : tensor<1x65536x1x1xf32>
}
