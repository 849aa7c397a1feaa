// convert-spconv-to-affine: the kernel of convert-spconv-to-gpu with each staged chunk's FMAs
// left as an affine nest over (cc, r, s, o | kk, o) whose weights are computed from the
// induction variables. 2 input channels, 2 output channels, 3x3 filter, 4x4 input: one
// thread computes 1 column x 2 channels; the 4x4 tile is 16 words per channel.
// RUN: spconv-opt %s --convert-spconv-to-affine="block-k=2 chunk-c=2" | FileCheck %s

// Tile offset of (cc, r, s, o): cc * 16 + r * 4 + s + o * threads-q.
// CHECK-DAG: #[[OFF:.*]] = affine_map<(d0, d1, d2, d3) -> (d0 * 16 + d1 * 4 + d2 + d3 * 2)>
// Flat KCRS index of weight (kk, cc, r, s).
// CHECK-DAG: #[[WIDX:.*]] = affine_map<(d0, d1, d2, d3) -> (((d3 * 2 + d0) * 3 + d1) * 3 + d2)>

// CHECK-LABEL: gpu.func @spconv_conv2d_0
// CHECK-SAME: kernel
// CHECK-SAME: spconv.template
// CHECK: scf.index_switch
// CHECK: case 0 {
// The staging loop and the barrier are those of convert-spconv-to-gpu.
// CHECK: scf.for
// CHECK: gpu.barrier
// CHECK: %[[BASE:.*]] = arith.addi
// CHECK: %[[ACC:.*]] = memref.alloca() : memref<2x1xf32>
// CHECK: %[[IN:.*]] = memref.alloca() : memref<1xf32>
// CHECK: affine.store %{{.*}}, %[[ACC]][0, 0]
// CHECK: affine.store %{{.*}}, %[[ACC]][1, 0]
// CHECK: affine.for %[[CC:.*]] = 0 to 2 {
// CHECK-NEXT: affine.for %[[R:.*]] = 0 to 3 {
// CHECK-NEXT: affine.for %[[S:.*]] = 0 to 3 {
// CHECK-NEXT: affine.for %[[O:.*]] = 0 to 1 {
// CHECK-NEXT: %[[OFFV:.*]] = affine.apply #[[OFF]](%[[CC]], %[[R]], %[[S]], %[[O]])
// CHECK-NEXT: %[[IDX:.*]] = arith.addi %[[BASE]], %[[OFFV]] : index
// CHECK-NEXT: %[[X:.*]] = memref.load %{{.*}}[%[[IDX]]] : memref<32xf32, #gpu.address_space<workgroup>>
// CHECK-NEXT: affine.store %[[X]], %[[IN]][%[[O]]]
// CHECK-NEXT: }
// No groups: every output channel of the block.
// CHECK-NEXT: affine.for %[[KK:.*]] = 0 to 2 {
// CHECK-NEXT: %[[W:.*]] = affine.apply #[[WIDX]](%[[CC]], %[[R]], %[[S]], %[[KK]])
// The placeholder: bits 0x40000000 | (widx + 1).
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1073741825 : i32
// CHECK-NEXT: %[[WI:.*]] = arith.index_cast %[[W]] : index to i32
// CHECK-NEXT: %[[WB:.*]] = arith.addi %[[WI]], %[[ONE]] : i32
// CHECK-NEXT: %[[WF:.*]] = arith.bitcast %[[WB]] : i32 to f32
// CHECK-NEXT: affine.for %[[O2:.*]] = 0 to 1 {
// CHECK-NEXT: %[[XV:.*]] = affine.load %[[IN]][%[[O2]]]
// CHECK-NEXT: %[[A:.*]] = affine.load %[[ACC]][%[[KK]], %[[O2]]]
// CHECK-NEXT: %[[F:.*]] = llvm.intr.fma(%[[XV]], %[[WF]], %[[A]]) : (f32, f32, f32) -> f32
// CHECK-NEXT: affine.store %[[F]], %[[ACC]][%[[KK]], %[[O2]]]
// CHECK: %[[A0:.*]] = affine.load %[[ACC]][0, 0]
// CHECK-NEXT: %[[A1:.*]] = affine.load %[[ACC]][1, 0]
// CHECK-NEXT: llvm.inline_asm has_side_effects "// spconv channel block 0 chunk 0", "f,f" %[[A0]], %[[A1]]
// CHECK: scf.if
// CHECK: memref.store %{{.*}}, %arg1
func.func @f(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32> {
  %y = spconv.conv2d %x {weights = dense<1.0> : tensor<2x2x3x3xf32>}
      : tensor<1x2x4x4xf32> -> tensor<1x2x2x2xf32>
  return %y : tensor<1x2x2x2xf32>
}
