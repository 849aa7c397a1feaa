// The fold on hand-written LLVM-dialect IR, where every placeholder and use is in view.
// Weights (KCRS 1x1x1x4) [0.5, 0.0, -0.0, 3.0] have the placeholders 0x40000001..0x40000004
// (index i -> bits 0x40000000 | (i + 1)); bias [0.25] has 0x40800001.
// FMAs left: @k's 2 nonzero-weight ones and 2 by non-placeholders, plus @other's (all 6 + 1
// with strict-ieee).

module attributes {spconv.weights = {k = {weights = dense<[[[[0.5, 0.0, -0.0, 3.0]]]]> : tensor<1x1x1x4xf32>,
                                          bias = dense<0.25> : tensor<1xf32>}}} {
  llvm.func @k(%in: !llvm.ptr, %out: !llvm.ptr) {
    %one = llvm.mlir.constant(1.0 : f32) : f32
    %zero = llvm.mlir.constant(0.0 : f32) : f32
    %b = llvm.mlir.constant(0x40800001 : f32) : f32
    %w0 = llvm.mlir.constant(0x40000001 : f32) : f32
    %w1 = llvm.mlir.constant(0x40000002 : f32) : f32
    %w2 = llvm.mlir.constant(0x40000003 : f32) : f32
    %w3 = llvm.mlir.constant(0x40000004 : f32) : f32
    %i1 = llvm.mlir.constant(1 : i64) : i64
    %i2 = llvm.mlir.constant(2 : i64) : i64
    %i3 = llvm.mlir.constant(3 : i64) : i64
    %p1 = llvm.getelementptr %in[%i1] : (!llvm.ptr, i64) -> !llvm.ptr, f32
    %p2 = llvm.getelementptr %in[%i2] : (!llvm.ptr, i64) -> !llvm.ptr, f32
    %p3 = llvm.getelementptr %in[%i3] : (!llvm.ptr, i64) -> !llvm.ptr, f32
    %x0 = llvm.load %in : !llvm.ptr -> f32
    %x1 = llvm.load %p1 : !llvm.ptr -> f32
    %x2 = llvm.load %p2 : !llvm.ptr -> f32
    %x3 = llvm.load %p3 : !llvm.ptr -> f32
    %a0 = llvm.intr.fma(%x0, %w0, %b) : (f32, f32, f32) -> f32
    // Weight 0.0: deleted; %x1 fed nothing else, so it goes with its address and index.
    %a1 = llvm.intr.fma(%x1, %w1, %a0) : (f32, f32, f32) -> f32
    // Weight -0.0, placeholder as the first multiplicand: deleted too, but %x2 stays (used
    // below).
    %a2 = llvm.intr.fma(%w2, %x2, %a1) : (f32, f32, f32) -> f32
    %a3 = llvm.intr.fma(%x3, %w3, %a2) : (f32, f32, f32) -> f32
    // Constants that are not placeholders (1.0, 0.0) are left alone, zero or not.
    %a4 = llvm.intr.fma(%x2, %one, %a3) : (f32, f32, f32) -> f32
    %a5 = llvm.intr.fma(%x3, %zero, %a4) : (f32, f32, f32) -> f32
    llvm.store %a5, %out : f32, !llvm.ptr
    llvm.return
  }

  // Not named in spconv.weights: placeholder-looking constants stay as they are.
  llvm.func @other(%x: f32) -> f32 {
    %w = llvm.mlir.constant(0x40000002 : f32) : f32
    %r = llvm.intr.fma(%x, %w, %x) : (f32, f32, f32) -> f32
    llvm.return %r : f32
  }
}
