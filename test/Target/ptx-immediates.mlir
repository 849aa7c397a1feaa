// PTX from a conv with known weights: each nonzero weight is an fma.rn.f32 immediate, no
// FMA multiplies by a zero immediate, and the FMA count is nnz x outputs-per-thread (here
// K=4, C=1, 1x1 filter, default tiling: 1 output column per thread, all 4 channels in one
// case of the switch, so 2 nonzero weights -> 2 FMAs).
//
// RUN: spconv-translate --spconv-to-ptx --cache-dir=none %s | FileCheck %s
// RUN: spconv-translate --spconv-to-ptx --cache-dir=none %s | grep -c "fma.rn.f32" | FileCheck %s --check-prefix=COUNT
// RUN: spconv-translate --spconv-to-ptx --cache-dir=none --strict-ieee %s | grep -c "fma.rn.f32" | FileCheck %s --check-prefix=STRICT
// RUN: spconv-translate --spconv-to-ptx --fold-at=llvm --cache-dir=none %s | FileCheck %s
// RUN: spconv-translate --spconv-to-ptx --fold-at=llvm --cache-dir=none %s | grep -c "fma.rn.f32" | FileCheck %s --check-prefix=COUNT
// RUN: spconv-translate --spconv-to-ptx --fold-at=llvm --cache-dir=none --strict-ieee %s | grep -c "fma.rn.f32" | FileCheck %s --check-prefix=STRICT

func.func @conv(%x: tensor<1x1x4x4xf32>) -> tensor<1x4x4x4xf32> {
  %y = spconv.conv2d %x {weights = dense<[[[[1.5]]], [[[0.0]]], [[[-2.0]]], [[[-0.0]]]]> : tensor<4x1x1x1xf32>}
      : tensor<1x1x4x4xf32> -> tensor<1x4x4x4xf32>
  return %y : tensor<1x4x4x4xf32>
}

// CHECK: .target sm_90
// CHECK: .entry spconv_conv2d_0(
// CHECK-NOT: fma.rn.f32 {{.*}}, 0f00000000, %r
// CHECK-NOT: fma.rn.f32 {{.*}}, 0f80000000, %r
// CHECK-DAG: fma.rn.f32 {{%r[0-9]+}}, {{%r[0-9]+}}, 0f3FC00000,
// CHECK-DAG: fma.rn.f32 {{%r[0-9]+}}, {{%r[0-9]+}}, 0fC0000000,
// COUNT: {{^2$}}
// STRICT: {{^4$}}
