func.func @f(%b: tensor<2x3xf32>, %e: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %t = linalg.transpose ins(%b : tensor<2x3xf32>) outs(%e : tensor<3x2xf32>) permutation = [1, x]
  return %t : tensor<3x2xf32>
}
