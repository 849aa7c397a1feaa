// The image-pair layout (docs/design.md, "Image-pair layout"): a half-precision conv whose
// tensors store images n and n + N/2 in one 32-bit word pairs images, and its kernel moves
// whole words: one 32-bit load per staged or directly read input word and one 32-bit store
// per output word, with the padding's zero word selected in, where the same conv over NCHW
// tensors takes two 16-bit loads, a pack, an unpack and two 16-bit stores. The sidecar says
// each param's layout.
//
// RUN: spconv-translate --spconv-to-ptx --cache-dir=none %s | FileCheck %s
// RUN: spconv-translate --spconv-to-launch-json --cache-dir=none %s | FileCheck %s --check-prefix=JSON
// RUN: sed 's/xf16>/xbf16>/g' %s | spconv-translate --spconv-to-ptx --cache-dir=none | FileCheck %s --check-prefix=BF16
// RUN: spconv-opt --convert-spconv-to-gpu %s | FileCheck %s --check-prefix=IR

// The kernel's params are the word tensors: N/2 words of two images each, whole.
// IR: gpu.func @spconv_conv2d_0(%arg0: memref<2x3x5x6xvector<2xf16>>, %arg1: memref<2x4x5x6xvector<2xf16>>)
// IR: gpu.func @spconv_conv2d_1(%arg0: memref<2x3x5x6xvector<2xf16>>, %arg1: memref<2x4x3x3xvector<2xf16>>)
// IR: gpu.func @spconv_conv2d_2(%arg0: memref<4x3x5x6xf16>, %arg1: memref<4x4x5x6xf16>)

// A padded 3x3 conv, staged: whole words in (padding selected as the zero word), whole
// words out.
// CHECK-LABEL: .entry spconv_conv2d_0(
// CHECK-NOT: ld.global.b16
// CHECK: ld.global.b32
// CHECK: selp.b32
// CHECK-NOT: ld.global.b16
// CHECK: fma.rn.f16x2
// CHECK-NOT: st.global.b16
// CHECK: st.global.b32
// CHECK-NOT: st.global.b16
// CHECK: ret;
// A strided 1x1 conv reads its inputs directly: whole words too.
// CHECK-LABEL: .entry spconv_conv2d_1(
// CHECK-NOT: ld.global.b16
// CHECK: ld.global.b32
// CHECK-NOT: ld.global.b16
// CHECK: st.global.b32
// CHECK-NOT: st.global.b16
// CHECK: ret;
// The first conv over NCHW tensors: two images gathered per word.
// CHECK-LABEL: .entry spconv_conv2d_2(
// CHECK: ld.global.b16
// CHECK: st.global.b16
// CHECK: ret;
// BF16-LABEL: .entry spconv_conv2d_0(
// BF16-NOT: ld.global.b16
// BF16: fma.rn.bf16x2
// BF16-NOT: st.global.b16
// BF16: ret;

// JSON: "entry": "spconv_conv2d_0"
// JSON: "numerics": {
// JSON: "pairing": "images"
// JSON: "params": [
// JSON: "layout": "image_pairs"
// JSON: "role": "input"
// JSON: "shape": [
// JSON-NEXT: 4,
// JSON-NEXT: 3,
// JSON-NEXT: 5,
// JSON-NEXT: 6
// JSON: "layout": "image_pairs"
// JSON: "role": "output"
// JSON: "entry": "spconv_conv2d_1"
// JSON: "layout": "image_pairs"
// JSON: "entry": "spconv_conv2d_2"
// JSON: "layout": "nchw"
// JSON: "role": "input"

func.func @convs(%x: tensor<4x3x5x6xf16>)
    -> (tensor<4x4x5x6xf16>, tensor<4x4x3x3xf16>, tensor<4x4x5x6xf16>) {
  %r3 = spconv.conv2d %x {weights = dense<[[[[-1.0, 0.0, 2.0], [0.0, 0.25, 2.0], [0.25, 2.0, 2.0]], [[-1.0, 0.0, 0.25], [0.5, 0.25, 0.0], [2.0, 0.0, 0.0]], [[0.0, 0.0, 0.5], [0.25, 0.0, 0.5], [-1.0, 0.0, -1.0]]], [[[0.0, 0.0, 2.0], [0.0, 0.5, 0.0], [0.0, 0.25, 0.25]], [[0.5, 0.0, 0.25], [0.25, 0.0, 0.0], [-1.0, -1.0, 0.5]], [[0.0, 0.0, 0.0], [0.25, 0.0, 0.0], [0.25, 0.0, 0.0]]], [[[0.25, 0.0, 0.0], [0.0, 0.0, -1.0], [2.0, 2.0, 0.0]], [[0.0, 2.0, 0.0], [0.5, 0.0, 0.0], [0.0, 0.5, 0.0]], [[0.0, 0.0, 0.0], [0.0, 0.0, 0.25], [-1.0, -1.0, 0.0]]], [[[-1.0, 2.0, 2.0], [0.0, 0.0, 0.0], [0.0, 0.25, 0.0]], [[0.5, 2.0, 0.0], [0.0, 0.5, 0.5], [2.0, 0.0, 0.0]], [[0.0, 0.0, 2.0], [0.0, 0.25, 0.5], [0.0, -1.0, 0.25]]]]> : tensor<4x3x3x3xf32>,
                          padding = array<i64: 1, 1, 1, 1>,
                          layout = #spconv.layout<image_pairs>}
      : tensor<4x3x5x6xf16> -> tensor<4x4x5x6xf16>
  %s2 = spconv.conv2d %x {weights = dense<0.5> : tensor<4x3x1x1xf32>, strides = array<i64: 2, 2>,
                          layout = #spconv.layout<image_pairs>}
      : tensor<4x3x5x6xf16> -> tensor<4x4x3x3xf16>
  %nc = spconv.conv2d %x {weights = dense<0.5> : tensor<4x3x3x3xf32>, padding = array<i64: 1, 1, 1, 1>}
      : tensor<4x3x5x6xf16> -> tensor<4x4x5x6xf16>
  return %r3, %s2, %nc : tensor<4x4x5x6xf16>, tensor<4x4x3x3xf16>, tensor<4x4x5x6xf16>
}
