// Every dimension fits in 32 bits but the element count (2^31) does not.
func.func @too_many_elements(%x: tensor<1x1x1x1xf32>) -> tensor<1x1x65536x32768xf32> {
  %y = spconv.conv2d %x {weights = dense<1.0> : tensor<1x1x1x1xf32>} : tensor<1x1x1x1xf32> -> tensor<1x1x65536x32768xf32>
  return %y : tensor<1x1x65536x32768xf32>
}
