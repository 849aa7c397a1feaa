// Groups: only (cw, kk) pairs of the same group have weights, so the kk loop's bounds follow
// the group of the input channel cc: groups 2, C = K = 4 (cpg = kpg = 2), block-k 4 covers
// both groups: kk in [max(0, (cc floordiv 2) * 2), min(4, (cc floordiv 2) * 2 + 2)).
// RUN: spconv-opt %s --convert-spconv-to-affine="block-k=4" | FileCheck %s

// CHECK-DAG: #[[LB:.*]] = affine_map<(d0) -> (0, (d0 floordiv 2) * 2)>
// CHECK-DAG: #[[UB:.*]] = affine_map<(d0) -> (4, (d0 floordiv 2) * 2 + 2)>
// Weight (kk, cc mod cpg, r, s) of a K x 2 x 3 x 3 filter.
// CHECK-DAG: #[[WIDX:.*]] = affine_map<(d0, d1, d2, d3) -> (((d3 * 2 + d0 mod 2) * 3 + d1) * 3 + d2 + 1073741825)>
// CHECK-LABEL: gpu.func @spconv_conv2d_0
// CHECK: affine.for %[[CC:.*]] = 0 to 4 {
// CHECK: affine.for %[[KK:.*]] = max #[[LB]](%[[CC]]) to min #[[UB]](%[[CC]]) {
// CHECK-NEXT: affine.apply #[[WIDX]](%[[CC]], %{{.*}}, %{{.*}}, %[[KK]])
func.func @g(%x: tensor<1x4x4x4xf32>) -> tensor<1x4x2x2xf32> {
  %y = spconv.conv2d %x {weights = dense<1.0> : tensor<4x2x3x3xf32>, groups = 2}
      : tensor<1x4x4x4xf32> -> tensor<1x4x2x2xf32>
  return %y : tensor<1x4x2x2xf32>
}
