// A bias placeholder in a kernel whose conv has no bias.
module attributes {spconv.weights = {k = {weights = dense<1.0> : tensor<1x1x1x2xf32>}}} {
  llvm.func @k(%x: f32) -> f32 {
    %b = llvm.mlir.constant(0x40800001 : f32) : f32
    %r = llvm.fadd %x, %b : f32
    llvm.return %r : f32
  }
}
