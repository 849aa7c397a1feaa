// The imported depthwise conv computes what its weights say: the CPU twin against the
// double-precision reference of spconv-cpu-check (import-linalg.mlir checks the IR).
// RUN: spconv-opt %s --spconv-import-linalg -o %t.mlir
// RUN: spconv-cpu-check %t.mlir | FileCheck %s
// CHECK: PASS conv 0: shape n1c3h5w5k3r3s3p3q3st2x2pad1.1.1.1dil1x1btruearelug3


// Depthwise (linalg.depthwise_conv_2d_nchw_chw, multiplier 1) becomes groups = C, its C x R x S
// filter read as C x 1 x R x S (a dense_resource keeps its blob); stride, zero pad and a
// per-channel bias broadcast as for plain convs; a following ReLU fuses.
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// DWCHECK-LABEL: func.func @depthwise
// DWCHECK-SAME: (%[[X:.*]]: tensor<1x3x5x5xf32>)
// DWCHECK-NOT: linalg
// DWCHECK: spconv.conv2d %[[X]] {activation = #spconv.activation<relu>, bias = dense<[1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<3xf32>, groups = 3 : i64, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>, weights = dense_resource<dw> : tensor<3x1x3x3xf32>} : tensor<1x3x5x5xf32> -> tensor<1x3x3x3xf32>
func.func @depthwise(%x: tensor<1x3x5x5xf32>) -> tensor<1x3x3x3xf32> {
  %w = arith.constant dense_resource<dw> : tensor<3x3x3xf32>
  %b = arith.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%a: index, %bb: index, %c: index, %d: index):
    tensor.yield %zero : f32
  } : tensor<1x3x5x5xf32> to tensor<1x3x7x7xf32>
  %e = tensor.empty() : tensor<1x3x3x3xf32>
  %init = linalg.broadcast ins(%b : tensor<3xf32>) outs(%e : tensor<1x3x3x3xf32>) dimensions = [0, 2, 3]
  %y = linalg.depthwise_conv_2d_nchw_chw {strides = dense<2> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>}
         ins(%p, %w : tensor<1x3x7x7xf32>, tensor<3x3x3xf32>)
         outs(%init : tensor<1x3x3x3xf32>) -> tensor<1x3x3x3xf32>
  %r = linalg.generic {indexing_maps = [#id, #id],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%y : tensor<1x3x3x3xf32>) outs(%e : tensor<1x3x3x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x3x3x3xf32>
  return %r : tensor<1x3x3x3xf32>
}
{-#
  dialect_resources: {
    builtin: {
      dw: "0x04000000000080BF0000000000000000000000000000803F0000000000000000000000000000004000000000000000000000000000004040000000000000000000000000000080400000000000000000000000000000000000000000000000000000000000000000000000000000A040"
    }
  }
#-}

