// RUN: spconv-opt %s --spconv-import-linalg --split-input-file | FileCheck %s

// An inference batch norm as frameworks lower it to linalg, (x - mean) * gamma /
// sqrt(var + eps) + beta with per-channel constants, then ReLU6 (min(max(x, 0), 6)): folded
// into the weights (a = gamma / sqrt(var + eps) = [2, 0.5]), the bias (beta - mean * a =
// [1 - 1 * 2, 0 - 4 * 0.5]) and the activation. The zero weights stay zero.
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#ch = affine_map<(d0, d1, d2, d3) -> (d1)>
// CHECK-LABEL: func.func @bn_relu6
// CHECK-NOT: linalg
// CHECK: spconv.conv2d %{{.*}} {activation = #spconv.activation<relu6>, bias = dense<[-1.000000e+00, -2.000000e+00]> : tensor<2xf32>, weights = dense_resource<folded_weights> : tensor<2x1x1x2xf32>}
// CHECK: folded_weights: "0x04000000000000400000000000000000000000BF"
func.func @bn_relu6(%x: tensor<1x1x3x3xf32>) -> tensor<1x2x3x2xf32> {
  %w = arith.constant dense<[[[[1.0, 0.0]]], [[[0.0, -1.0]]]]> : tensor<2x1x1x2xf32>
  %mean = arith.constant dense<[1.0, 4.0]> : tensor<2xf32>
  %var = arith.constant dense<[0.75, 15.75]> : tensor<2xf32>
  %gamma = arith.constant dense<[2.0, 2.0]> : tensor<2xf32>
  %beta = arith.constant dense<[1.0, 0.0]> : tensor<2xf32>
  %eps = arith.constant 0.25 : f32
  %zero = arith.constant 0.0 : f32
  %six = arith.constant 6.0 : f32
  %e = tensor.empty() : tensor<1x2x3x2xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x3x2xf32>) -> tensor<1x2x3x2xf32>
  %c = linalg.conv_2d_nchw_fchw ins(%x, %w : tensor<1x1x3x3xf32>, tensor<2x1x1x2xf32>)
         outs(%init : tensor<1x2x3x2xf32>) -> tensor<1x2x3x2xf32>
  %y = linalg.generic {indexing_maps = [#id, #ch, #ch, #ch, #ch, #id],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c, %mean, %var, %gamma, %beta : tensor<1x2x3x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>)
      outs(%e : tensor<1x2x3x2xf32>) {
  ^bb0(%in: f32, %m: f32, %v: f32, %g: f32, %b: f32, %out: f32):
    %d = arith.subf %in, %m : f32
    %ve = arith.addf %v, %eps : f32
    %s = math.sqrt %ve : f32
    %n = arith.divf %d, %s : f32
    %t = arith.mulf %n, %g : f32
    %o = arith.addf %t, %b : f32
    %r = arith.maximumf %o, %zero : f32
    %r6 = arith.minimumf %r, %six : f32
    linalg.yield %r6 : f32
  } -> tensor<1x2x3x2xf32>
  return %y : tensor<1x2x3x2xf32>
}

// -----

// A scale by rsqrt and a negation, no activation: a = -1/sqrt(4) = -0.5; the conv's bias 1.0
// becomes -0.5.
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @rsqrt_scale
// CHECK-NOT: linalg.generic
// CHECK: spconv.conv2d %{{.*}} {bias = dense<-5.000000e-01> : tensor<1xf32>, weights = dense_resource<folded_weights{{.*}}> : tensor<1x1x1x1xf32>}
func.func @rsqrt_scale(%x: tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32> {
  %w = arith.constant dense<3.0> : tensor<1x1x1x1xf32>
  %one = arith.constant 1.0 : f32
  %four = arith.constant 4.0 : f32
  %e = tensor.empty() : tensor<1x1x2x2xf32>
  %init = linalg.fill ins(%one : f32) outs(%e : tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  %c = linalg.conv_2d_nchw_fchw ins(%x, %w : tensor<1x1x2x2xf32>, tensor<1x1x1x1xf32>)
         outs(%init : tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  %y = linalg.generic {indexing_maps = [#id, #id],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c : tensor<1x1x2x2xf32>) outs(%e : tensor<1x1x2x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.rsqrt %four : f32
    %s = arith.mulf %r, %in : f32
    %n = arith.negf %s : f32
    linalg.yield %n : f32
  } -> tensor<1x1x2x2xf32>
  return %y : tensor<1x1x2x2xf32>
}

// -----

// Folding must not turn a nonzero weight into zero: 1e-30 * 1e-30 underflows, so the batch
// norm stays a linalg.generic (and the conv is still imported, without it). Likewise a
// finite weight that would overflow to infinity.
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @refuse_underflow
// CHECK: %[[C:.*]] = spconv.conv2d
// CHECK-NOT: activation
// CHECK: linalg.generic {{.*}} ins(%[[C]]
// CHECK-LABEL: func.func @refuse_overflow
// CHECK: %[[C:.*]] = spconv.conv2d
// CHECK: linalg.generic {{.*}} ins(%[[C]]
func.func @refuse_underflow(%x: tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32> {
  %w = arith.constant dense<1.0e-30> : tensor<1x1x1x1xf32>
  %tiny = arith.constant 1.0e-30 : f32
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x1x2x2xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  %c = linalg.conv_2d_nchw_fchw ins(%x, %w : tensor<1x1x2x2xf32>, tensor<1x1x1x1xf32>)
         outs(%init : tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  %y = linalg.generic {indexing_maps = [#id, #id],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c : tensor<1x1x2x2xf32>) outs(%e : tensor<1x1x2x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.mulf %in, %tiny : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<1x1x2x2xf32>
  return %y : tensor<1x1x2x2xf32>
}
func.func @refuse_overflow(%x: tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32> {
  %w = arith.constant dense<1.0e30> : tensor<1x1x1x1xf32>
  %huge = arith.constant 1.0e30 : f32
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x1x2x2xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  %c = linalg.conv_2d_nchw_fchw ins(%x, %w : tensor<1x1x2x2xf32>, tensor<1x1x1x1xf32>)
         outs(%init : tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  %y = linalg.generic {indexing_maps = [#id, #id],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c : tensor<1x1x2x2xf32>) outs(%e : tensor<1x1x2x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.mulf %in, %huge : f32
    linalg.yield %s : f32
  } -> tensor<1x1x2x2xf32>
  return %y : tensor<1x1x2x2xf32>
}

// -----

// A clamp that is not ReLU6 (min against 5) is not an activation the conv can fuse, and the
// affine part alone is not the body's result: nothing folds.
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @clamp5
// CHECK: linalg.generic
func.func @clamp5(%x: tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32> {
  %w = arith.constant dense<2.0> : tensor<1x1x1x1xf32>
  %zero = arith.constant 0.0 : f32
  %five = arith.constant 5.0 : f32
  %e = tensor.empty() : tensor<1x1x2x2xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  %c = linalg.conv_2d_nchw_fchw ins(%x, %w : tensor<1x1x2x2xf32>, tensor<1x1x1x1xf32>)
         outs(%init : tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  %y = linalg.generic {indexing_maps = [#id, #id],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c : tensor<1x1x2x2xf32>) outs(%e : tensor<1x1x2x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %in, %zero : f32
    %m = arith.minimumf %r, %five : f32
    linalg.yield %m : f32
  } -> tensor<1x1x2x2xf32>
  return %y : tensor<1x1x2x2xf32>
}
