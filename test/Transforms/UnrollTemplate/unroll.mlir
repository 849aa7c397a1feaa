// spconv-unroll-template turns the affine nests of convert-spconv-to-affine into
// straight-line FMAs whose weights are placeholder immediates (weight i: the f32 with bits
// 0x40000000 | (i + 1)), with no loop, no register array and no memory traffic for the
// accumulators: exactly what convert-spconv-to-gpu writes.
// RUN: spconv-opt %s --convert-spconv-to-affine="block-k=2 chunk-c=2" \
// RUN:   --spconv-unroll-template | FileCheck %s
// RUN: spconv-opt %s --convert-spconv-to-affine="block-k=2 chunk-c=2" \
// RUN:   --spconv-unroll-template -o %t.unrolled.mlir
// RUN: spconv-opt %s --convert-spconv-to-gpu="block-k=2 chunk-c=2" -o %t.gpu.mlir
// RUN: diff %t.unrolled.mlir %t.gpu.mlir
// The CPU twin goes through the same nests: unroll=false leaves them, the pass unrolls them.
// RUN: spconv-opt %s --convert-spconv-to-cpu="block-k=2 chunk-c=2 unroll=false" \
// RUN:   | FileCheck %s --check-prefix=CPU-NEST
// RUN: spconv-opt %s --convert-spconv-to-cpu="block-k=2 chunk-c=2 unroll=false" \
// RUN:   --spconv-unroll-template -o %t.cpu-unrolled.mlir
// RUN: spconv-opt %s --convert-spconv-to-cpu="block-k=2 chunk-c=2" -o %t.cpu.mlir
// RUN: diff %t.cpu-unrolled.mlir %t.cpu.mlir

// Weights (k, c, r, s) = (0, 0, 0, 0), (1, 0, 0, 0), (0, 0, 0, 1), (1, 0, 0, 1): indices
// 0, 18, 1, 19.
// CHECK-DAG: %[[W0:.*]] = arith.constant 2.00000024 : f32
// CHECK-DAG: %[[W18:.*]] = arith.constant 2.00000453 : f32
// CHECK-DAG: %[[W1:.*]] = arith.constant 2.00000048 : f32
// CHECK-DAG: %[[W19:.*]] = arith.constant 2.00000477 : f32
// CHECK: gpu.barrier
// CHECK-NOT: affine.
// CHECK-NOT: memref.alloca
// For (c, r, s) = (0, 0, 0): one shared load at the thread's base, two FMAs (k = 0, 1).
// CHECK: %[[BASE:.*]] = arith.addi
// CHECK-NEXT: %[[I0:.*]] = arith.addi %[[BASE]], %{{.*}} : index
// CHECK-NEXT: %[[X0:.*]] = memref.load %{{.*}}[%[[I0]]]
// CHECK-NEXT: %[[A0:.*]] = llvm.intr.fma(%[[X0]], %[[W0]], %{{.*}})
// CHECK-NEXT: %[[B0:.*]] = llvm.intr.fma(%[[X0]], %[[W18]], %{{.*}})
// CHECK-NEXT: %[[I1:.*]] = arith.addi %[[BASE]], %{{.*}} : index
// CHECK-NEXT: %[[X1:.*]] = memref.load %{{.*}}[%[[I1]]]
// CHECK-NEXT: %[[A1:.*]] = llvm.intr.fma(%[[X1]], %[[W1]], %[[A0]])
// CHECK-NEXT: %[[B1:.*]] = llvm.intr.fma(%[[X1]], %[[W19]], %[[B0]])
// 2 x 3 x 3 loads, 36 FMAs in all, then the accumulators go straight to the pin.
// CHECK-COUNT-32: llvm.intr.fma
// CHECK-NOT: llvm.intr.fma
// CHECK-NOT: memref.load
// CHECK: llvm.inline_asm has_side_effects "// spconv channel block 0 chunk 0"
// CHECK-NOT: affine.

// CPU-NEST: func.func @spconv_conv2d_0
// CPU-NEST: scf.for
// CPU-NEST: affine.for %{{.*}} = 0 to 2 {
// CPU-NEST: llvm.intr.fma
func.func @f(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32> {
  %y = spconv.conv2d %x {weights = dense<1.0> : tensor<2x2x3x3xf32>}
      : tensor<1x2x4x4xf32> -> tensor<1x2x2x2xf32>
  return %y : tensor<1x2x2x2xf32>
}
