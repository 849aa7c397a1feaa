// A template kernel with no spconv.weights entry must not come out of the fold with its
// placeholder weights (2.0000002, 2.0000005, ...) silently left in as if they were real.
//
// Both lowerings mark their kernels `spconv.template`; the fold removes the marker from the
// kernels it folds and rejects any marked kernel left over.
//

module attributes {spconv.weights = {k1 = {weights = dense<1.5> : tensor<1x1x1x1xf32>}}} {
  llvm.func @k1(%x: f32, %acc: f32) -> f32 attributes {spconv.template} {
    %w = llvm.mlir.constant(0x40000001 : f32) : f32
    %r = llvm.intr.fma(%x, %w, %acc) : (f32, f32, f32) -> f32
    llvm.return %r : f32
  }
  llvm.func @k2(%x: f32, %acc: f32) -> f32 attributes {spconv.template} {
    %w = llvm.mlir.constant(0x40000001 : f32) : f32
    %r = llvm.intr.fma(%x, %w, %acc) : (f32, f32, f32) -> f32
    llvm.return %r : f32
  }
}
