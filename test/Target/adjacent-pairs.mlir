// Adjacent pairs (docs/design.md, "How the outputs are paired"): a half-precision 1x1 conv
// at stride 1 without padding over an even width pairs output columns 2i and 2i + 1, which
// read input columns 2i and 2i + 1: a word's halves are adjacent in the NCHW tensors, so
// the kernel reads each input word with one 32-bit load and writes each output word with
// one 32-bit store, where two images take two 16-bit loads, a pack, an unpack and two
// 16-bit stores. It is the compiler's choice wherever it is legal.
//
// RUN: spconv-translate --spconv-to-ptx --cache-dir=none %s | FileCheck %s
// RUN: spconv-translate --spconv-to-launch-json --cache-dir=none %s | FileCheck %s --check-prefix=JSON
// RUN: sed 's/xf16>/xbf16>/g' %s | spconv-translate --spconv-to-ptx --cache-dir=none | FileCheck %s --check-prefix=BF16

// Chosen by the compiler: whole words in, whole words out.
// CHECK-LABEL: .entry spconv_conv2d_0(
// CHECK-NOT: ld.global.b16
// CHECK: ld.global.b32
// CHECK-NOT: ld.global.b16
// CHECK: fma.rn.f16x2
// CHECK-NOT: st.global.b16
// CHECK: st.global.b32
// CHECK-NOT: st.global.b16
// CHECK: ret;
// The same conv with two images paired: half-word loads and stores.
// CHECK-LABEL: .entry spconv_conv2d_1(
// CHECK: ld.global.b16
// CHECK: st.global.b16
// CHECK: ret;
// BF16-LABEL: .entry spconv_conv2d_0(
// BF16-NOT: ld.global.b16
// BF16: fma.rn.bf16x2
// BF16-NOT: st.global.b16
// BF16: ret;

// JSON: "entry": "spconv_conv2d_0"
// JSON: "pairing": "adjacent"
// JSON: "entry": "spconv_conv2d_1"
// JSON: "pairing": "images"
// An odd width, a stride, padding or a 3x3 filter: two images, as before.
// JSON: "entry": "spconv_conv2d_2"
// JSON: "pairing": "images"
// JSON: "entry": "spconv_conv2d_3"
// JSON: "pairing": "images"
// JSON: "entry": "spconv_conv2d_4"
// JSON: "pairing": "images"
// JSON: "entry": "spconv_conv2d_5"
// JSON: "pairing": "images"
// Batch 1: adjacent pairs where legal, else two output columns.
// JSON: "entry": "spconv_conv2d_6"
// JSON: "pairing": "adjacent"
// JSON: "entry": "spconv_conv2d_7"
// JSON: "pairing": "columns"

func.func @convs(%x: tensor<2x3x4x6xf16>, %o: tensor<2x3x4x5xf16>, %b: tensor<1x3x4x6xf16>)
    -> (tensor<2x4x4x6xf16>, tensor<2x4x4x6xf16>, tensor<2x4x4x5xf16>, tensor<2x4x2x3xf16>,
        tensor<2x4x6x8xf16>, tensor<2x4x4x6xf16>, tensor<1x4x4x6xf16>, tensor<1x4x4x6xf16>) {
  %a = spconv.conv2d %x {weights = dense<[[[[1.5]], [[0.0]], [[-2.0]]], [[[0.0]], [[0.5]], [[0.0]]],
                                          [[[0.0]], [[0.0]], [[0.0]]], [[[-1.0]], [[0.25]], [[3.0]]]]> : tensor<4x3x1x1xf32>}
      : tensor<2x3x4x6xf16> -> tensor<2x4x4x6xf16>
  %i = spconv.conv2d %x {weights = dense<[[[[1.5]], [[0.0]], [[-2.0]]], [[[0.0]], [[0.5]], [[0.0]]],
                                          [[[0.0]], [[0.0]], [[0.0]]], [[[-1.0]], [[0.25]], [[3.0]]]]> : tensor<4x3x1x1xf32>,
                         pairing = #spconv.pairing<images>}
      : tensor<2x3x4x6xf16> -> tensor<2x4x4x6xf16>
  %odd = spconv.conv2d %o {weights = dense<0.5> : tensor<4x3x1x1xf32>}
      : tensor<2x3x4x5xf16> -> tensor<2x4x4x5xf16>
  %s2 = spconv.conv2d %x {weights = dense<0.5> : tensor<4x3x1x1xf32>, strides = array<i64: 2, 2>}
      : tensor<2x3x4x6xf16> -> tensor<2x4x2x3xf16>
  %pad = spconv.conv2d %x {weights = dense<0.5> : tensor<4x3x1x1xf32>, padding = array<i64: 1, 1, 1, 1>}
      : tensor<2x3x4x6xf16> -> tensor<2x4x6x8xf16>
  %r3 = spconv.conv2d %x {weights = dense<0.5> : tensor<4x3x3x3xf32>, padding = array<i64: 1, 1, 1, 1>}
      : tensor<2x3x4x6xf16> -> tensor<2x4x4x6xf16>
  %b1 = spconv.conv2d %b {weights = dense<0.5> : tensor<4x3x1x1xf32>}
      : tensor<1x3x4x6xf16> -> tensor<1x4x4x6xf16>
  %b1c = spconv.conv2d %b {weights = dense<0.5> : tensor<4x3x3x3xf32>, padding = array<i64: 1, 1, 1, 1>}
      : tensor<1x3x4x6xf16> -> tensor<1x4x4x6xf16>
  return %a, %i, %odd, %s2, %pad, %r3, %b1, %b1c
      : tensor<2x4x4x6xf16>, tensor<2x4x4x6xf16>, tensor<2x4x4x5xf16>, tensor<2x4x2x3xf16>,
        tensor<2x4x6x8xf16>, tensor<2x4x4x6xf16>, tensor<1x4x4x6xf16>, tensor<1x4x4x6xf16>
}
