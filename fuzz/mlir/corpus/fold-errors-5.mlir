// A dense_resource whose blob is missing altogether.
module attributes {spconv.weights = {k = {weights = dense_resource<absent> : tensor<1x1x1x2xf32>}}} {
  llvm.func @k() {
    llvm.return
  }
}
