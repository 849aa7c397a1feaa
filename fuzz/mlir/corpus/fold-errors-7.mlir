// A placeholder past the end of the weights: the template and the weights disagree.
module attributes {spconv.weights = {k = {weights = dense<1.0> : tensor<1x1x1x2xf32>}}} {
  llvm.func @k(%x: f32) -> f32 {
    %w = llvm.mlir.constant(0x40000006 : f32) : f32
    %r = llvm.intr.fma(%x, %w, %x) : (f32, f32, f32) -> f32
    llvm.return %r : f32
  }
}
