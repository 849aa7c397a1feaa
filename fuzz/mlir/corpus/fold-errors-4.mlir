// A dense_resource blob shorter than its tensor (a truncated file): 1 float of 2.
module attributes {spconv.weights = {k = {weights = dense_resource<short> : tensor<1x1x1x2xf32>}}} {
  llvm.func @k(%x: f32) -> f32 {
    %w = llvm.mlir.constant(0x40000001 : f32) : f32
    %r = llvm.intr.fma(%x, %w, %x) : (f32, f32, f32) -> f32
    llvm.return %r : f32
  }
}
{-#
  dialect_resources: {
    builtin: {
      short: "0x040000000000803F"
    }
  }
#-}
