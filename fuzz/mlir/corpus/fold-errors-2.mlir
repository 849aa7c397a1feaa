// An entry that is not a dictionary.
module attributes {spconv.weights = {k = dense<1.0> : tensor<1x1x1x1xf32>}} {
  llvm.func @k() {
    llvm.return
  }
}
