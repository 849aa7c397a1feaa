// An entry without weights.
module attributes {spconv.weights = {k = {bias = dense<1.0> : tensor<1xf32>}}} {
  llvm.func @k() {
    llvm.return
  }
}
