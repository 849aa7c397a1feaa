// RUN: spconv-opt %s --spconv-sparsity-stats 2>&1 >/dev/null | FileCheck %s
// The IR passes through unchanged.
// RUN: spconv-opt %s --spconv-sparsity-stats 2>/dev/null | FileCheck %s --check-prefix=IR
// output= writes the same lines to a file and nothing to stderr.
// RUN: spconv-opt %s --spconv-sparsity-stats=output=%t.txt -o /dev/null 2>&1 | count 0
// RUN: FileCheck %s < %t.txt

// 3 of 8 weights nonzero (-0.0 counts as zero); P = Q = 2, so useful FLOP/image = 2 * 2 * 2 * 3 = 24; 8 f32 = 32 B.
// CHECK: spconv.conv2d loc("{{.*}}sparsity-stats.mlir":[[@LINE+3]]:{{[0-9]+}}): input 1x1x3x3 weights 2x1x2x2 output 1x2x2x2 nnz 3/8 sparsity 0.6250 useful-flop/image 24 weight-bytes 32 non-finite 0
// IR: spconv.conv2d %{{.*}} {weights = dense<{{.*}}> : tensor<2x1x2x2xf32>}
func.func @dense(%x: tensor<1x1x3x3xf32>) -> tensor<1x2x2x2xf32> {
  %y = spconv.conv2d %x {weights = dense<[[[[1.0, 0.0], [0.0, 2.0]]], [[[0.0, -0.0], [0.0, -1.0]]]]> : tensor<2x1x2x2xf32>}
      : tensor<1x1x3x3xf32> -> tensor<1x2x2x2xf32>
  return %y : tensor<1x2x2x2xf32>
}

// dense_resource weights [1, 0, inf, nan]: NaN and Inf count as nonzero (and non-finite).
// Batch 4, stride 2, padding 1: P = (5 + 2 - 2) / 2 + 1 = 3, Q = (4 + 2 - 1) / 2 + 1 = 3,
// FLOP/image = 2 * 3 * 3 * 3 = 54 (per image, so independent of the batch).
// CHECK: spconv.conv2d loc("{{.*}}sparsity-stats.mlir":[[@LINE+2]]:{{[0-9]+}}): input 4x1x5x4 weights 1x1x2x2 output 4x1x3x3 nnz 3/4 sparsity 0.2500 useful-flop/image 54 weight-bytes 16 non-finite 2
func.func @resource(%x: tensor<4x1x5x4xf32>) -> tensor<4x1x3x3xf32> {
  %y = spconv.conv2d %x {weights = dense_resource<w> : tensor<1x1x2x2xf32>,
                         strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>}
      : tensor<4x1x5x4xf32> -> tensor<4x1x3x3xf32>
  return %y : tensor<4x1x3x3xf32>
}

// All-zero weights: sparsity 1 and no useful FLOP.
// CHECK: spconv.conv2d loc({{.*}}): input 1x2x1x1 weights 3x2x1x1 output 1x3x1x1 nnz 0/6 sparsity 1.0000 useful-flop/image 0 weight-bytes 24 non-finite 0
// CHECK-NOT: spconv.conv2d
func.func @zero(%x: tensor<1x2x1x1xf32>) -> tensor<1x3x1x1xf32> {
  %y = spconv.conv2d %x {weights = dense<0.0> : tensor<3x2x1x1xf32>} : tensor<1x2x1x1xf32> -> tensor<1x3x1x1xf32>
  return %y : tensor<1x3x1x1xf32>
}

{-#
  dialect_resources: {
    builtin: {
      w: "0x040000000000803F000000000000807F0000C07F"
    }
  }
#-}
