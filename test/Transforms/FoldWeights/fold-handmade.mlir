// The fold on hand-written LLVM-dialect IR, where every placeholder and use is in view.
// Weights (KCRS 1x1x1x4) [0.5, 0.0, -0.0, 3.0] have the placeholders 0x40000001..0x40000004
// (index i -> bits 0x40000000 | (i + 1)); bias [0.25] has 0x40800001.
// RUN: spconv-opt %s --spconv-fold-weights | FileCheck %s
// RUN: spconv-opt %s --spconv-fold-weights=strict-ieee | FileCheck %s --check-prefix=STRICT
// FMAs left: @k's 2 nonzero-weight ones and 2 by non-placeholders, plus @other's (all 6 + 1
// with strict-ieee).
// RUN: spconv-opt %s --spconv-fold-weights | grep llvm.intr.fma | count 5
// RUN: spconv-opt %s --spconv-fold-weights=strict-ieee | grep llvm.intr.fma | count 7

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

// CHECK: module {
// CHECK-LABEL: llvm.func @k(
// CHECK-SAME: %[[IN:[a-z0-9]+]]: !llvm.ptr, %[[OUT:[a-z0-9]+]]: !llvm.ptr)
// CHECK-DAG: %[[ONE:.+]] = llvm.mlir.constant(1.000000e+00 : f32) : f32
// CHECK-DAG: %[[ZERO:.+]] = llvm.mlir.constant(0.000000e+00 : f32) : f32
// CHECK-DAG: %[[B:.+]] = llvm.mlir.constant(2.500000e-01 : f32) : f32
// CHECK-DAG: %[[W0:.+]] = llvm.mlir.constant(5.000000e-01 : f32) : f32
// CHECK-DAG: %[[W3:.+]] = llvm.mlir.constant(3.000000e+00 : f32) : f32
// CHECK-DAG: %[[I2:.+]] = llvm.mlir.constant(2 : i64) : i64
// CHECK-DAG: %[[I3:.+]] = llvm.mlir.constant(3 : i64) : i64
// CHECK-NOT: llvm.mlir.constant
// CHECK: %[[P2:.+]] = llvm.getelementptr %[[IN]][%[[I2]]]
// CHECK-NEXT: %[[P3:.+]] = llvm.getelementptr %[[IN]][%[[I3]]]
// CHECK-NEXT: %[[X0:.+]] = llvm.load %[[IN]] : !llvm.ptr -> f32
// CHECK-NEXT: %[[X2:.+]] = llvm.load %[[P2]] : !llvm.ptr -> f32
// CHECK-NEXT: %[[X3:.+]] = llvm.load %[[P3]] : !llvm.ptr -> f32
// CHECK-NEXT: %[[A0:.+]] = llvm.intr.fma(%[[X0]], %[[W0]], %[[B]])
// CHECK-NEXT: %[[A3:.+]] = llvm.intr.fma(%[[X3]], %[[W3]], %[[A0]])
// CHECK-NEXT: %[[A4:.+]] = llvm.intr.fma(%[[X2]], %[[ONE]], %[[A3]])
// CHECK-NEXT: %[[A5:.+]] = llvm.intr.fma(%[[X3]], %[[ZERO]], %[[A4]])
// CHECK-NEXT: llvm.store %[[A5]], %[[OUT]]
// CHECK-LABEL: llvm.func @other(
// CHECK-NEXT: llvm.mlir.constant(2.00000048 : f32) : f32

// STRICT: module {
// STRICT-LABEL: llvm.func @k(
// STRICT-NEXT: llvm.mlir.constant(1.000000e+00 : f32) : f32
// STRICT-NEXT: llvm.mlir.constant(0.000000e+00 : f32) : f32
// STRICT-NEXT: %[[B:.+]] = llvm.mlir.constant(2.500000e-01 : f32) : f32
// STRICT-NEXT: %[[W0:.+]] = llvm.mlir.constant(5.000000e-01 : f32) : f32
// STRICT-NEXT: %[[W1:.+]] = llvm.mlir.constant(0.000000e+00 : f32) : f32
// STRICT-NEXT: %[[W2:.+]] = llvm.mlir.constant(-0.000000e+00 : f32) : f32
// STRICT-NEXT: %[[W3:.+]] = llvm.mlir.constant(3.000000e+00 : f32) : f32
// STRICT: %[[A0:.+]] = llvm.intr.fma(%{{.+}}, %[[W0]], %[[B]])
// STRICT-NEXT: %[[A1:.+]] = llvm.intr.fma(%{{.+}}, %[[W1]], %[[A0]])
// STRICT-NEXT: %[[A2:.+]] = llvm.intr.fma(%[[W2]], %{{.+}}, %[[A1]])
// STRICT-NEXT: llvm.intr.fma(%{{.+}}, %[[W3]], %[[A2]])
