// A bias blob that cannot be read.
module attributes {spconv.weights = {k = {weights = dense<1.0> : tensor<1x1x1x1xf32>,
                                          bias = dense_resource<absent> : tensor<1xf32>}}} {
  llvm.func @k() {
    llvm.return
  }
}
