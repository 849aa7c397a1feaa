// Regression (CI fuzz smoke, 2026-11-25): a dimension wider than int64 crashed MLIR 22.
func.func @f(%b: tensor<2xf32>, %e: tensor<1x2xf32>) -> tensor<1x2xf32> {
  %bb = linalg.broadcast ins(%b : tensor<2xf32>) outs(%e : tensor<1x2xf32>) dimensions = [1111111111111111111111111111]
  return %bb : tensor<1x2xf32>
}
