// Several convs in one file, in two functions, with inline `dense` weights (the generator
// writes dense_resource blobs): each gets its own kernel, its own weights entry and its own
// line. Conv 1 feeds on conv 0's result; the check gives every conv its own random input.
// Conv 2 has a NaN weight and an Inf weight: they are nonzero, so they stay FMA immediates
// and propagate exactly as in the reference (NaN matches NaN); only the +-0.0 weights go.
// RUN: spconv-cpu-check %s | FileCheck %s
// RUN: spconv-cpu-check %s --strict-ieee | FileCheck %s --check-prefix=STRICT
// RUN: spconv-cpu-check %s --outputs-per-thread 2 --chunk-c 1 | FileCheck %s --check-prefix=OPT2

// CHECK: PASS conv 0: shape n1c2h4w4k2r2s2p3q3st1x1pad0.0.0.0dil1x1bfalseanone {{.*}} fmas-kept 3 fmas-deleted 13{{$}}
// CHECK-NEXT: PASS conv 1: shape n1c2h3w3k3r1s1p3q3st1x1pad0.0.0.0dil1x1btruearelu {{.*}} fmas-kept 4 fmas-deleted 2{{$}}
// CHECK-NEXT: PASS conv 2: shape n2c1h5w5k2r3s3p5q5st1x1pad1.1.1.1dil1x1bfalseanone {{.*}} fmas-kept 2 fmas-deleted 16{{$}}
// CHECK-NOT: FAIL

// STRICT: PASS conv 0: {{.*}} fmas-kept 16 fmas-deleted 0{{$}}
// STRICT-NEXT: PASS conv 1: {{.*}} fmas-kept 6 fmas-deleted 0{{$}}
// STRICT-NEXT: PASS conv 2: {{.*}} fmas-kept 18 fmas-deleted 0{{$}}

// OPT2: PASS conv 0: {{.*}} tiling bk2opt2{{.*}}cc1 {{.*}} fmas-kept 6 fmas-deleted 26{{$}}
// OPT2-NEXT: PASS conv 1: {{.*}} tiling bk3opt2{{.*}}cc1 {{.*}} fmas-kept 8 fmas-deleted 4{{$}}
// OPT2-NEXT: PASS conv 2: {{.*}} tiling bk2opt2{{.*}}cc1 {{.*}} fmas-kept 4 fmas-deleted 32{{$}}

func.func @two(%x: tensor<1x2x4x4xf32>) -> tensor<1x3x3x3xf32> {
  %y = spconv.conv2d %x {weights = dense<[[[[0.5, 0.0], [0.0, 0.0]], [[0.0, 0.0], [0.0, -0.0]]],
                                         [[[0.0, 0.0], [0.0, 1.25]], [[0.0, -3.0], [0.0, 0.0]]]]>
                                  : tensor<2x2x2x2xf32>}
      : tensor<1x2x4x4xf32> -> tensor<1x2x3x3xf32>
  %z = spconv.conv2d %y {weights = dense<[[[[1.0]], [[0.0]]], [[[0.0]], [[-1.0]]], [[[2.0]], [[0.25]]]]>
                                  : tensor<3x2x1x1xf32>,
                         bias = dense<[0.5, -0.5, 0.0]> : tensor<3xf32>,
                         activation = #spconv.activation<relu>}
      : tensor<1x2x3x3xf32> -> tensor<1x3x3x3xf32>
  return %z : tensor<1x3x3x3xf32>
}

func.func @nonfinite(%x: tensor<2x1x5x5xf32>) -> tensor<2x2x5x5xf32> {
  %y = spconv.conv2d %x {weights = dense<[[[[0.0, 0.0, 0.0], [0.0, 0x7FC00000, 0.0], [0.0, 0.0, 0.0]]],
                                         [[[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0x7F800000]]]]>
                                  : tensor<2x1x3x3xf32>,
                         padding = array<i64: 1, 1, 1, 1>}
      : tensor<2x1x5x5xf32> -> tensor<2x2x5x5xf32>
  return %y : tensor<2x2x5x5xf32>
}
