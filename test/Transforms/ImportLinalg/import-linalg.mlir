// RUN: spconv-opt %s --spconv-import-linalg --split-input-file | FileCheck %s

// Plain conv into a zero fill: no padding, default strides/dilations, no bias.
// CHECK-LABEL: func.func @plain
// CHECK-SAME: (%[[X:.*]]: tensor<1x2x5x5xf32>)
// CHECK-NEXT: %[[Y:.*]] = spconv.conv2d %[[X]] {weights = dense<{{.*}}> : tensor<3x2x3x3xf32>} : tensor<1x2x5x5xf32> -> tensor<1x3x3x3xf32>
// CHECK-NEXT: return %[[Y]]
func.func @plain(%x: tensor<1x2x5x5xf32>) -> tensor<1x3x3x3xf32> {
  %w = arith.constant dense<1.0> : tensor<3x2x3x3xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x3x3x3xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x3x3x3xf32>) -> tensor<1x3x3x3xf32>
  %y = linalg.conv_2d_nchw_fchw ins(%x, %w : tensor<1x2x5x5xf32>, tensor<3x2x3x3xf32>)
         outs(%init : tensor<1x3x3x3xf32>) -> tensor<1x3x3x3xf32>
  return %y : tensor<1x3x3x3xf32>
}

// -----

// Zero pad on H/W only becomes [top, left, bottom, right]; the pad op is dropped. The filter is
// a dense_resource and stays one.
// CHECK-LABEL: func.func @padded
// CHECK-SAME: (%[[X:.*]]: tensor<1x1x4x4xf32>)
// CHECK-NOT: tensor.pad
// CHECK: spconv.conv2d %[[X]] {padding = array<i64: 1, 2, 0, 3>, weights = dense_resource<w1> : tensor<2x1x3x3xf32>} : tensor<1x1x4x4xf32> -> tensor<1x2x3x7xf32>
func.func @padded(%x: tensor<1x1x4x4xf32>) -> tensor<1x2x3x7xf32> {
  %w = arith.constant dense_resource<w1> : tensor<2x1x3x3xf32>
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 2] high[0, 0, 0, 3] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %zero : f32
  } : tensor<1x1x4x4xf32> to tensor<1x1x5x9xf32>
  %e = tensor.empty() : tensor<1x2x3x7xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x3x7xf32>) -> tensor<1x2x3x7xf32>
  %y = linalg.conv_2d_nchw_fchw ins(%p, %w : tensor<1x1x5x9xf32>, tensor<2x1x3x3xf32>)
         outs(%init : tensor<1x2x3x7xf32>) -> tensor<1x2x3x7xf32>
  return %y : tensor<1x2x3x7xf32>
}
{-#
  dialect_resources: {
    builtin: {
      w1: "0x040000000000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F"
    }
  }
#-}

// -----

// Strides and dilations carry over: H: (9 - (2*2+1)) / 2 + 1 = 3, W: (8 - (3*1+1)) / 3 + 1 = 2.
// CHECK-LABEL: func.func @strided_dilated
// CHECK: spconv.conv2d %{{.*}} {dilations = array<i64: 2, 3>, strides = array<i64: 2, 3>, weights = {{.*}}} : tensor<1x1x9x8xf32> -> tensor<1x1x3x2xf32>
func.func @strided_dilated(%x: tensor<1x1x9x8xf32>) -> tensor<1x1x3x2xf32> {
  %w = arith.constant dense<2.0> : tensor<1x1x3x2xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x1x3x2xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x1x3x2xf32>) -> tensor<1x1x3x2xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<[2, 3]> : tensor<2xi64>,
                                 strides = dense<[2, 3]> : tensor<2xi64>}
         ins(%x, %w : tensor<1x1x9x8xf32>, tensor<1x1x3x2xf32>)
         outs(%init : tensor<1x1x3x2xf32>) -> tensor<1x1x3x2xf32>
  return %y : tensor<1x1x3x2xf32>
}

// -----

// Bias add and ReLU as two generics (torch-mlir style), the ReLU with maximumf against an
// in-body zero: both fuse into one op.
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#ch = affine_map<(d0, d1, d2, d3) -> (d1)>
// CHECK-LABEL: func.func @bias_relu_generics
// CHECK-NEXT: %[[Y:.*]] = spconv.conv2d %{{.*}} {activation = #spconv.activation<relu>, bias = dense<[1.000000e+00, -2.000000e+00]> : tensor<2xf32>, weights = {{.*}}}
// CHECK-NEXT: return %[[Y]]
func.func @bias_relu_generics(%x: tensor<1x1x3x3xf32>) -> tensor<1x2x1x1xf32> {
  %w = arith.constant dense<0.5> : tensor<2x1x3x3xf32>
  %b = arith.constant dense<[1.0, -2.0]> : tensor<2xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x2x1x1xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32>
  %c = linalg.conv_2d_nchw_fchw ins(%x, %w : tensor<1x1x3x3xf32>, tensor<2x1x3x3xf32>)
         outs(%init : tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32>
  %biased = linalg.generic {indexing_maps = [#id, #ch, #id],
                            iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c, %b : tensor<1x2x1x1xf32>, tensor<2xf32>) outs(%e : tensor<1x2x1x1xf32>) {
  ^bb0(%in: f32, %bias: f32, %out: f32):
    %s = arith.addf %in, %bias : f32
    linalg.yield %s : f32
  } -> tensor<1x2x1x1xf32>
  %r = linalg.generic {indexing_maps = [#id, #id],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%biased : tensor<1x2x1x1xf32>) outs(%e : tensor<1x2x1x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %z = arith.constant 0.0 : f32
    %m = arith.maximumf %in, %z : f32
    linalg.yield %m : f32
  } -> tensor<1x2x1x1xf32>
  return %r : tensor<1x2x1x1xf32>
}

// -----

// Bias (operands swapped: bias first, conv in the init) and maxnumf ReLU (zero captured from
// outside, on the left) in one generic.
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#ch = affine_map<(d0, d1, d2, d3) -> (d1)>
// CHECK-LABEL: func.func @bias_relu_one_generic
// CHECK-NEXT: spconv.conv2d %{{.*}} {activation = #spconv.activation<relu>, bias = dense<3.000000e+00> : tensor<2xf32>, weights = {{.*}}}
// CHECK-NEXT: return
func.func @bias_relu_one_generic(%x: tensor<1x1x3x3xf32>) -> tensor<1x2x1x1xf32> {
  %w = arith.constant dense<0.5> : tensor<2x1x3x3xf32>
  %b = arith.constant dense<3.0> : tensor<2xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x2x1x1xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32>
  %c = linalg.conv_2d_nchw_fchw ins(%x, %w : tensor<1x1x3x3xf32>, tensor<2x1x3x3xf32>)
         outs(%init : tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32>
  %r = linalg.generic {indexing_maps = [#ch, #id],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%b : tensor<2xf32>) outs(%c : tensor<1x2x1x1xf32>) {
  ^bb0(%bias: f32, %acc: f32):
    %s = arith.addf %bias, %acc : f32
    %m = arith.maxnumf %zero, %s : f32
    linalg.yield %m : f32
  } -> tensor<1x2x1x1xf32>
  return %r : tensor<1x2x1x1xf32>
}

// -----

// Named forms: linalg.add with a linalg.broadcast bias, then linalg.max against a zero fill.
// CHECK-LABEL: func.func @named_bias_relu
// CHECK-NEXT: spconv.conv2d %{{.*}} {activation = #spconv.activation<relu>, bias = dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>, weights = {{.*}}}
// CHECK-NEXT: return
func.func @named_bias_relu(%x: tensor<1x1x3x3xf32>) -> tensor<1x2x1x1xf32> {
  %w = arith.constant dense<0.5> : tensor<2x1x3x3xf32>
  %b = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x2x1x1xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32>
  %c = linalg.conv_2d_nchw_fchw ins(%x, %w : tensor<1x1x3x3xf32>, tensor<2x1x3x3xf32>)
         outs(%init : tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32>
  %bb = linalg.broadcast ins(%b : tensor<2xf32>) outs(%e : tensor<1x2x1x1xf32>) dimensions = [0, 2, 3]
  %s = linalg.add ins(%bb, %c : tensor<1x2x1x1xf32>, tensor<1x2x1x1xf32>)
         outs(%e : tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32>
  %r = linalg.max ins(%s, %init : tensor<1x2x1x1xf32>, tensor<1x2x1x1xf32>)
         outs(%e : tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32>
  return %r : tensor<1x2x1x1xf32>
}

// -----

// Bias from the init: a broadcast of a per-channel constant (named and generic forms) and a
// constant fill (a splat bias).
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#ch = affine_map<(d0, d1, d2, d3) -> (d1)>
// CHECK-LABEL: func.func @init_bias
// CHECK: spconv.conv2d %{{.*}} {bias = dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK: spconv.conv2d %{{.*}} {bias = dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK: spconv.conv2d %{{.*}} {bias = dense<7.000000e+00> : tensor<2xf32>
// CHECK-NOT: linalg.
func.func @init_bias(%x: tensor<1x1x3x3xf32>) -> (tensor<1x2x1x1xf32>, tensor<1x2x1x1xf32>, tensor<1x2x1x1xf32>) {
  %w = arith.constant dense<0.5> : tensor<2x1x3x3xf32>
  %b = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %seven = arith.constant 7.0 : f32
  %e = tensor.empty() : tensor<1x2x1x1xf32>
  %i0 = linalg.broadcast ins(%b : tensor<2xf32>) outs(%e : tensor<1x2x1x1xf32>) dimensions = [0, 2, 3]
  %c0 = linalg.conv_2d_nchw_fchw ins(%x, %w : tensor<1x1x3x3xf32>, tensor<2x1x3x3xf32>)
          outs(%i0 : tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32>
  %i1 = linalg.generic {indexing_maps = [#ch, #id],
                        iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%b : tensor<2xf32>) outs(%e : tensor<1x2x1x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x2x1x1xf32>
  %c1 = linalg.conv_2d_nchw_fchw ins(%x, %w : tensor<1x1x3x3xf32>, tensor<2x1x3x3xf32>)
          outs(%i1 : tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32>
  %i2 = linalg.fill ins(%seven : f32) outs(%e : tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32>
  %c2 = linalg.conv_2d_nchw_fchw ins(%x, %w : tensor<1x1x3x3xf32>, tensor<2x1x3x3xf32>)
          outs(%i2 : tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32>
  return %c0, %c1, %c2 : tensor<1x2x1x1xf32>, tensor<1x2x1x1xf32>, tensor<1x2x1x1xf32>
}

// -----

// A conv result with a second user keeps its ReLU separate (fusing would compute the conv
// twice); the conv itself still imports.
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @two_users
// CHECK: %[[C:.*]] = spconv.conv2d
// CHECK-NOT: activation
// CHECK: linalg.generic
// CHECK: return %[[C]],
func.func @two_users(%x: tensor<1x1x3x3xf32>) -> (tensor<1x2x1x1xf32>, tensor<1x2x1x1xf32>) {
  %w = arith.constant dense<0.5> : tensor<2x1x3x3xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x2x1x1xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32>
  %c = linalg.conv_2d_nchw_fchw ins(%x, %w : tensor<1x1x3x3xf32>, tensor<2x1x3x3xf32>)
         outs(%init : tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32>
  %r = linalg.generic {indexing_maps = [#id, #id],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c : tensor<1x2x1x1xf32>) outs(%e : tensor<1x2x1x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x2x1x1xf32>
  return %c, %r : tensor<1x2x1x1xf32>, tensor<1x2x1x1xf32>
}

// -----

// A non-constant filter stays linalg.
// CHECK-LABEL: func.func @dynamic_filter
// CHECK-NOT: spconv.conv2d
// CHECK: linalg.conv_2d_nchw_fchw
func.func @dynamic_filter(%x: tensor<1x1x3x3xf32>, %w: tensor<2x1x3x3xf32>) -> tensor<1x2x1x1xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x2x1x1xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32>
  %c = linalg.conv_2d_nchw_fchw ins(%x, %w : tensor<1x1x3x3xf32>, tensor<2x1x3x3xf32>)
         outs(%init : tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32>
  return %c : tensor<1x2x1x1xf32>
}

// -----

// A pad with 1.0 is not a zero padding: the tensor.pad stays and feeds an unpadded conv.
// CHECK-LABEL: func.func @nonzero_pad
// CHECK: %[[P:.*]] = tensor.pad
// CHECK: spconv.conv2d %[[P]] {weights = {{.*}}} : tensor<1x1x5x5xf32> -> tensor<1x2x3x3xf32>
func.func @nonzero_pad(%x: tensor<1x1x3x3xf32>) -> tensor<1x2x3x3xf32> {
  %w = arith.constant dense<0.5> : tensor<2x1x3x3xf32>
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %one : f32
  } : tensor<1x1x3x3xf32> to tensor<1x1x5x5xf32>
  %e = tensor.empty() : tensor<1x2x3x3xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  %c = linalg.conv_2d_nchw_fchw ins(%p, %w : tensor<1x1x5x5xf32>, tensor<2x1x3x3xf32>)
         outs(%init : tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  return %c : tensor<1x2x3x3xf32>
}

// -----

// Inits that are not a fill or per-channel broadcast (here: a function argument), an output
// smaller than the full extent (linalg allows it, spconv does not), and an f16 conv all stay.
// CHECK-LABEL: func.func @unsupported
// CHECK-NOT: spconv.conv2d
// CHECK-COUNT-3: linalg.conv_2d_nchw_fchw
// CHECK-NOT: spconv.conv2d
func.func @unsupported(%x: tensor<1x1x3x3xf32>, %acc: tensor<1x2x1x1xf32>,
                       %h: tensor<1x1x3x3xf16>) -> (tensor<1x2x1x1xf32>, tensor<1x2x2x2xf32>, tensor<1x2x1x1xf16>) {
  %w = arith.constant dense<0.5> : tensor<2x1x3x3xf32>
  %w1 = arith.constant dense<0.5> : tensor<2x1x1x1xf32>
  %wh = arith.constant dense<0.5> : tensor<2x1x3x3xf16>
  %zero = arith.constant 0.0 : f32
  %zh = arith.constant 0.0 : f16
  %c0 = linalg.conv_2d_nchw_fchw ins(%x, %w : tensor<1x1x3x3xf32>, tensor<2x1x3x3xf32>)
          outs(%acc : tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32>
  %e = tensor.empty() : tensor<1x2x2x2xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %c1 = linalg.conv_2d_nchw_fchw ins(%x, %w1 : tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>)
          outs(%i : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %eh = tensor.empty() : tensor<1x2x1x1xf16>
  %ih = linalg.fill ins(%zh : f16) outs(%eh : tensor<1x2x1x1xf16>) -> tensor<1x2x1x1xf16>
  %c2 = linalg.conv_2d_nchw_fchw ins(%h, %wh : tensor<1x1x3x3xf16>, tensor<2x1x3x3xf16>)
          outs(%ih : tensor<1x2x1x1xf16>) -> tensor<1x2x1x1xf16>
  return %c0, %c1, %c2 : tensor<1x2x1x1xf32>, tensor<1x2x2x2xf32>, tensor<1x2x1x1xf16>
}

// -----

// linalg.max against a zero splat constant is a ReLU too.
// CHECK-LABEL: func.func @max_splat
// CHECK-NEXT: spconv.conv2d %{{.*}} {activation = #spconv.activation<relu>, weights = {{.*}}}
// CHECK-NEXT: return
func.func @max_splat(%x: tensor<1x1x3x3xf32>) -> tensor<1x2x1x1xf32> {
  %w = arith.constant dense<0.5> : tensor<2x1x3x3xf32>
  %zeros = arith.constant dense<0.0> : tensor<1x2x1x1xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x2x1x1xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32>
  %c = linalg.conv_2d_nchw_fchw ins(%x, %w : tensor<1x1x3x3xf32>, tensor<2x1x3x3xf32>)
         outs(%init : tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32>
  %r = linalg.max ins(%c, %zeros : tensor<1x2x1x1xf32>, tensor<1x2x1x1xf32>)
         outs(%e : tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32>
  return %r : tensor<1x2x1x1xf32>
}

// -----

// Not a per-channel affine function or ReLU, so nothing fuses: max against -0.0 (differs from
// ReLU for x = -0.0), a body squaring the conv result, and a bias that is not per channel
// (read through d2).
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#h = affine_map<(d0, d1, d2, d3) -> (d2)>
// CHECK-LABEL: func.func @not_epilogues
// CHECK-NOT: activation
// CHECK-NOT: bias
// CHECK-COUNT-3: linalg.generic
func.func @not_epilogues(%x: tensor<1x1x3x3xf32>) -> (tensor<1x2x1x1xf32>, tensor<1x2x1x1xf32>, tensor<1x2x1x1xf32>) {
  %w = arith.constant dense<0.5> : tensor<2x1x3x3xf32>
  %b = arith.constant dense<1.0> : tensor<1xf32>
  %zero = arith.constant 0.0 : f32
  %nzero = arith.constant -0.0 : f32
  %two = arith.constant 2.0 : f32
  %e = tensor.empty() : tensor<1x2x1x1xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32>
  %c0 = linalg.conv_2d_nchw_fchw ins(%x, %w : tensor<1x1x3x3xf32>, tensor<2x1x3x3xf32>)
          outs(%init : tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32>
  %r0 = linalg.generic {indexing_maps = [#id, #id],
                        iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c0 : tensor<1x2x1x1xf32>) outs(%e : tensor<1x2x1x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %nzero : f32
    linalg.yield %m : f32
  } -> tensor<1x2x1x1xf32>
  %c1 = linalg.conv_2d_nchw_fchw ins(%x, %w : tensor<1x1x3x3xf32>, tensor<2x1x3x3xf32>)
          outs(%init : tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32>
  %r1 = linalg.generic {indexing_maps = [#id, #id],
                        iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c1 : tensor<1x2x1x1xf32>) outs(%e : tensor<1x2x1x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.mulf %in, %in : f32
    %m = arith.maximumf %s, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x2x1x1xf32>
  %c2 = linalg.conv_2d_nchw_fchw ins(%x, %w : tensor<1x1x3x3xf32>, tensor<2x1x3x3xf32>)
          outs(%init : tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32>
  %r2 = linalg.generic {indexing_maps = [#id, #h, #id],
                        iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c2, %b : tensor<1x2x1x1xf32>, tensor<1xf32>) outs(%e : tensor<1x2x1x1xf32>) {
  ^bb0(%in: f32, %bias: f32, %out: f32):
    %s = arith.addf %in, %bias : f32
    linalg.yield %s : f32
  } -> tensor<1x2x1x1xf32>
  return %r0, %r1, %r2 : tensor<1x2x1x1xf32>, tensor<1x2x1x1xf32>, tensor<1x2x1x1xf32>
}

// -----

// Depthwise (linalg.depthwise_conv_2d_nchw_chw, multiplier 1) becomes groups = C, its C x R x S
// filter read as C x 1 x R x S (a dense_resource keeps its blob); stride, zero pad and a
// per-channel bias broadcast as for plain convs; a following ReLU fuses.
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @depthwise
// CHECK-SAME: (%[[X:.*]]: tensor<1x3x5x5xf32>)
// CHECK-NOT: linalg
// CHECK: spconv.conv2d %[[X]] {activation = #spconv.activation<relu>, bias = dense<[1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<3xf32>, groups = 3 : i64, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>, weights = dense_resource<dw> : tensor<3x1x3x3xf32>} : tensor<1x3x5x5xf32> -> tensor<1x3x3x3xf32>
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

