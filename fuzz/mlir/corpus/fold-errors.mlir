// Bad spconv.weights entries and weight blobs give located errors, and the pass fails.

// An entry naming a kernel the module does not have.
module attributes {spconv.weights = {nope = {weights = dense<1.0> : tensor<1x1x1x1xf32>}}} {
  llvm.func @k() {
    llvm.return
  }
}
