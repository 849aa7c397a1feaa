func.func @f(%b: tensor<2xf32>, %e: tensor<1x2xf32>) -> tensor<1x2xf32> {
  %0 = linalg.broadcast ins(%b : tensor<2xf32>) outs(%e : tensor<1x2xf32>) dimensions = x]
  return %0 : tensor<1x2xf32>
}
