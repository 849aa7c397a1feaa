func.func @f(%b: tensor<2x3xf32>, %e: tensor<2xf32>) -> tensor<2xf32> {
  %r = linalg.reduce ins(%b : tensor<2x3xf32>) outs(%e : tensor<2xf32>) dimensions = (%in: f32, %init: f32) {
    %s = arith.addf %in, %init : f32
    linalg.yield %s : f32
  }
  return %r : tensor<2xf32>
}
