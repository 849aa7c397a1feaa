// convert-spconv-to-affine: the kernel of convert-spconv-to-gpu with each staged chunk's FMAs
// left as an affine nest over (cc, r, s, kk) whose weights are computed from the induction
// variables. 2 input channels, 2 output channels, 3x3 filter, 4x4 input: one thread computes
// 1 column x 2 channels; the 4x4 tile is 16 words per channel.
// RUN: spconv-opt %s --convert-spconv-to-affine="block-k=2 chunk-c=2" | FileCheck %s
// With 2 outputs per thread, o loops: the loads into a register array, the FMAs per output.
// RUN: spconv-opt %s --convert-spconv-to-affine="block-k=2 chunk-c=2 outputs-per-thread=2 threads-q=1" \
// RUN:   | FileCheck %s --check-prefix=OPT2
// Adjacent columns (column-order=2): the thread's 2 outputs are neighbours, so per (cc, r)
// it loads the 4 inputs they read once, and output o reads input o + s of them.
// RUN: spconv-opt %s --convert-spconv-to-affine="block-k=2 chunk-c=2 outputs-per-thread=2 threads-q=1 column-order=2" \
// RUN:   | FileCheck %s --check-prefix=ADJ
// RUN: not spconv-opt %s --convert-spconv-to-affine="column-order=3" 2>&1 | FileCheck %s --check-prefix=BAD

// Tile offset of (cc, r, s): cc * 16 + r * 4 + s.
// CHECK-DAG: #[[OFF:.*]] = affine_map<(d0, d1, d2) -> (d0 * 16 + d1 * 4 + d2)>
// Placeholder bits of weight (kk, cc, r, s): 0x40000000 + flat KCRS index + 1.
// CHECK-DAG: #[[BITS:.*]] = affine_map<(d0, d1, d2, d3) -> (((d3 * 2 + d0) * 3 + d1) * 3 + d2 + 1073741825)>

// CHECK-LABEL: gpu.func @spconv_conv2d_0
// CHECK-SAME: kernel
// CHECK-SAME: spconv.template
// CHECK: scf.index_switch
// CHECK: case 0 {
// The staging and the barrier are those of convert-spconv-to-gpu: a thread's tile position,
// then both channels of the chunk at it (loads, then stores 16 words apart).
// CHECK: memref.load %{{.*}} : memref<1x2x4x4xf32>
// CHECK: memref.load %{{.*}} : memref<1x2x4x4xf32>
// CHECK: memref.store
// CHECK: memref.store
// CHECK: gpu.barrier
// CHECK: %[[BASE:.*]] = arith.addi
// CHECK: %[[ACC:.*]] = memref.alloca() : memref<2x1xf32>
// CHECK-NEXT: affine.store %{{.*}}, %[[ACC]][0, 0]
// CHECK-NEXT: affine.store %{{.*}}, %[[ACC]][1, 0]
// CHECK-NEXT: affine.for %[[CC:.*]] = 0 to 2 {
// CHECK-NEXT: affine.for %[[R:.*]] = 0 to 3 {
// CHECK-NEXT: affine.for %[[S:.*]] = 0 to 3 {
// CHECK-NEXT: %[[OFFV:.*]] = affine.apply #[[OFF]](%[[CC]], %[[R]], %[[S]])
// CHECK-NEXT: %[[IDX:.*]] = arith.addi %[[BASE]], %[[OFFV]] : index
// CHECK-NEXT: %[[X:.*]] = memref.load %{{.*}}[%[[IDX]]] : memref<32xf32, #gpu.address_space<workgroup>>
// No groups: every output channel of the block.
// CHECK-NEXT: affine.for %[[KK:.*]] = 0 to 2 {
// CHECK-NEXT: %[[B:.*]] = affine.apply #[[BITS]](%[[CC]], %[[R]], %[[S]], %[[KK]])
// CHECK-NEXT: %[[BI:.*]] = arith.index_cast %[[B]] : index to i32
// CHECK-NEXT: %[[W:.*]] = arith.bitcast %[[BI]] : i32 to f32
// CHECK-NEXT: %[[A:.*]] = affine.load %[[ACC]][%[[KK]], 0]
// CHECK-NEXT: %[[F:.*]] = llvm.intr.fma(%[[X]], %[[W]], %[[A]]) : (f32, f32, f32) -> f32
// CHECK-NEXT: affine.store %[[F]], %[[ACC]][%[[KK]], 0]
// CHECK: %[[A0:.*]] = affine.load %[[ACC]][0, 0]
// CHECK-NEXT: %[[A1:.*]] = affine.load %[[ACC]][1, 0]
// CHECK-NEXT: llvm.inline_asm has_side_effects "// spconv channel block 0 chunk 0", "f,f" %[[A0]], %[[A1]]
// CHECK: scf.if
// CHECK: memref.store %{{.*}}, %arg1

// Output o reads the tile o * threads-q * stride = o columns further.
// OPT2-DAG: #[[OFF2:.*]] = affine_map<(d0, d1, d2, d3) -> (d0 * 16 + d1 * 4 + d2 + d3)>
// OPT2: %[[ACC:.*]] = memref.alloca() : memref<2x2xf32>
// OPT2-NEXT: %[[IN:.*]] = memref.alloca() : memref<2xf32>
// OPT2: affine.for %{{.*}} = 0 to 2 {
// OPT2-NEXT: affine.for %{{.*}} = 0 to 3 {
// OPT2-NEXT: affine.for %[[S:.*]] = 0 to 3 {
// OPT2-NEXT: affine.for %[[O:.*]] = 0 to 2 {
// OPT2-NEXT: affine.apply #[[OFF2]](%{{.*}}, %{{.*}}, %[[S]], %[[O]])
// OPT2-NEXT: arith.addi
// OPT2-NEXT: %[[X:.*]] = memref.load
// OPT2-NEXT: affine.store %[[X]], %[[IN]][%[[O]]]
// OPT2: affine.for %[[KK:.*]] = 0 to 2 {
// OPT2: affine.for %[[O2:.*]] = 0 to 2 {
// OPT2-NEXT: %[[XV:.*]] = affine.load %[[IN]][%[[O2]]]
// OPT2-NEXT: %[[A:.*]] = affine.load %[[ACC]][%[[KK]], %[[O2]]]
// OPT2-NEXT: %[[F:.*]] = llvm.intr.fma(%[[XV]], %{{.*}}, %[[A]])
// OPT2-NEXT: affine.store %[[F]], %[[ACC]][%[[KK]], %[[O2]]]

// ADJ-DAG: #[[WOFF:.*]] = affine_map<(d0, d1, d2) -> (d0 * 16 + d1 * 4 + d2)>
// ADJ: column_order = 2 : i64
// ADJ: %[[ACC:.*]] = memref.alloca() : memref<2x2xf32>
// ADJ-NEXT: %[[IN:.*]] = memref.alloca() : memref<4xf32>
// ADJ: affine.for %[[CC:.*]] = 0 to 2 {
// ADJ-NEXT: affine.for %[[R:.*]] = 0 to 3 {
// ADJ-NEXT: affine.for %[[J:.*]] = 0 to 4 {
// ADJ-NEXT: affine.apply #[[WOFF]](%[[CC]], %[[R]], %[[J]])
// ADJ-NEXT: arith.addi
// ADJ-NEXT: %[[X:.*]] = memref.load
// ADJ-NEXT: affine.store %[[X]], %[[IN]][%[[J]]]
// ADJ-NEXT: }
// ADJ-NEXT: affine.for %[[S:.*]] = 0 to 3 {
// ADJ-NEXT: affine.for %[[KK:.*]] = 0 to 2 {
// ADJ: affine.for %[[O:.*]] = 0 to 2 {
// ADJ-NEXT: %[[XV:.*]] = affine.load %[[IN]][%[[O]] + %[[S]]]
// ADJ-NEXT: %[[A:.*]] = affine.load %[[ACC]][%[[KK]], %[[O]]]
// ADJ-NEXT: llvm.intr.fma(%[[XV]], %{{.*}}, %[[A]])
// BAD: column-order must be 0, 1 or 2, got 3

func.func @f(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32> {
  %y = spconv.conv2d %x {weights = dense<1.0> : tensor<2x2x3x3xf32>}
      : tensor<1x2x4x4xf32> -> tensor<1x2x2x2xf32>
  return %y : tensor<1x2x2x2xf32>
}
