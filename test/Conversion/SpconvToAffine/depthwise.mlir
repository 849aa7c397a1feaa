// Depthwise with a last block past K (K = 6, block-k 4: the second block has 2 channels
// and a 4-channel window): the kk range of window channel cc is [cc, cc + 1) clipped to the
// block, so window channels 2 and 3 of the last block have no FMA at all.
// RUN: spconv-opt %s --convert-spconv-to-affine="block-k=4" | FileCheck %s
// RUN: spconv-opt %s --convert-spconv-to-gpu="block-k=4" | FileCheck %s --check-prefix=UNROLLED
// UNROLLED: case 0 {
// UNROLLED-COUNT-36: llvm.intr.fma
// UNROLLED-NOT: llvm.intr.fma
// UNROLLED: case 1 {
// UNROLLED-COUNT-18: llvm.intr.fma
// UNROLLED-NOT: llvm.intr.fma

// CHECK-DAG: #[[LB:.*]] = affine_map<(d0) -> (0, d0)>
// CHECK-DAG: #[[UB0:.*]] = affine_map<(d0) -> (4, d0 + 1)>
// CHECK-DAG: #[[UB1:.*]] = affine_map<(d0) -> (2, d0 + 1)>
// CHECK-LABEL: gpu.func @spconv_conv2d_0
// CHECK: case 0 {
// CHECK: affine.for %{{.*}} = max #[[LB]](%{{.*}}) to min #[[UB0]](%{{.*}}) {
// CHECK: case 1 {
// CHECK: affine.for %{{.*}} = max #[[LB]](%{{.*}}) to min #[[UB1]](%{{.*}}) {
func.func @dw(%x: tensor<1x6x4x4xf32>) -> tensor<1x6x2x2xf32> {
  %y = spconv.conv2d %x {weights = dense<1.0> : tensor<6x1x3x3xf32>, groups = 6}
      : tensor<1x6x4x4xf32> -> tensor<1x6x2x2xf32>
  return %y : tensor<1x6x2x2xf32>
}
