// The PTX-level fold of a half-precision conv (the default route): each nonzero weight w,
// rounded to the conv's type, becomes the word (w, w) that a mov.b32 gives one paired FMA;
// a zero weight (+0 or -0) leaves no FMA and no mov; the bias of f32 sums is an f32
// immediate added to each lane's sum (the bias rounded to the half type); with half sums
// (accumulate = f16) it is a word too. K = 6 at block-k 4: the second channel block's channels 6 and 7 are past K.
// Weights 1.5, 0, -2, -0, 0.1, 3; bias 0.5, -1, 0, 2, 0.25, 0.1. In f16, 1.5 is 0x3E00,
// -2 0xC000, 0.1 0x2E66 (0.0999755859375, f32 0x3DCCC000), 3 0x4200; in bf16 1.5 is
// 0x3FC0, 0.1 0x3DCD, 3 0x4040.
//
// RUN: spconv-translate --spconv-to-ptx --cache-dir=none --block-k=4 --outputs-per-thread=1 %s | FileCheck %s
// RUN: spconv-translate --spconv-to-ptx --cache-dir=none --block-k=4 --outputs-per-thread=1 %s | grep -c "fma.rn.f16x2" | FileCheck %s --check-prefix=COUNT
// RUN: spconv-translate --spconv-to-ptx --cache-dir=none --block-k=4 --outputs-per-thread=1 --strict-ieee %s | FileCheck %s --check-prefix=STRICT
// RUN: spconv-translate --spconv-to-ptx --cache-dir=none --block-k=4 --outputs-per-thread=1 --strict-ieee %s | grep -c "fma.rn.f16x2" | FileCheck %s --check-prefix=STRICT-COUNT
// RUN: sed 's/xf16>/xbf16>/g' %s | spconv-translate --spconv-to-ptx --cache-dir=none --block-k=4 --outputs-per-thread=1 | FileCheck %s --check-prefix=BF16
// RUN: sed 's/accumulate = f32/accumulate = f16/' %s | spconv-translate --spconv-to-ptx --cache-dir=none --block-k=4 --outputs-per-thread=1 | FileCheck %s --check-prefix=HALFSUM
// RUN: spconv-translate --spconv-to-launch-json --cache-dir=none --block-k=4 --outputs-per-thread=1 %s | FileCheck %s --check-prefix=JSON
//
// A nonzero weight that would round to zero is refused, as by the LLVM-level fold.
// RUN: sed "s/\[\[\[\[1.5\]\]\]/[[[[1.0e-9]]]/" %s | not spconv-translate --spconv-to-ptx --cache-dir=none 2>&1 | FileCheck %s --check-prefix=UNDERFLOW
// RUN: sed "s/\[\[\[\[1.5\]\]\]/[[[[1.0e-9]]]/" %s | not spconv-translate --spconv-to-ptx --cache-dir=none --fold-at=llvm 2>&1 | FileCheck %s --check-prefix=UNDERFLOW

func.func @conv(%x: tensor<2x1x4x4xf16>) -> tensor<2x6x4x4xf16> {
  %y = spconv.conv2d %x {weights = dense<[[[[1.5]]], [[[0.0]]], [[[-2.0]]], [[[-0.0]]], [[[0.1]]], [[[3.0]]]]> : tensor<6x1x1x1xf32>,
                         bias = dense<[0.5, -1.0, 0.0, 2.0, 0.25, 0.1]> : tensor<6xf32>,
                         accumulate = f32}
      : tensor<2x1x4x4xf16> -> tensor<2x6x4x4xf16>
  return %y : tensor<2x6x4x4xf16>
}

// CHECK: spconv: kernels stamped from NVPTX block templates
// CHECK: .entry spconv_conv2d_0(
// CHECK-NOT: fma.rn.f32
// CHECK-DAG: mov.b32 {{%r[0-9]+}}, 1040203264;
// CHECK-DAG: mov.b32 {{%r[0-9]+}}, -1073692672;
// CHECK-DAG: mov.b32 {{%r[0-9]+}}, 778448486;
// CHECK-DAG: mov.b32 {{%r[0-9]+}}, 1107313152;
// CHECK-DAG: add.rn.f32 {{%r[0-9]+}}, {{%r[0-9]+}}, 0f3F000000;
// CHECK-DAG: add.rn.f32 {{%r[0-9]+}}, {{%r[0-9]+}}, 0fBF800000;
// CHECK-DAG: add.rn.f32 {{%r[0-9]+}}, {{%r[0-9]+}}, 0f40000000;
// CHECK-DAG: add.rn.f32 {{%r[0-9]+}}, {{%r[0-9]+}}, 0f3E800000;
// CHECK-DAG: add.rn.f32 {{%r[0-9]+}}, {{%r[0-9]+}}, 0f3DCCC000;
// No placeholder is left: no f32 bias placeholder, no weight or bias word.
// CHECK-NOT: {{0f408[0-9A-F]{5}|, 6710[0-9]{4};|, -20803[0-9]{5};}}
// CHECK-NOT: fma.rn.f32
// No zero word either: the FMAs by 0 and -0 went with their movs.
// CHECK-NOT: {{mov.b32 %r[0-9]+, (0|-2147450880);}}
// COUNT: {{^4$}}

// Strict IEEE keeps the products by +0 and -0 (0x80008000); channels past K still go.
// STRICT-DAG: mov.b32 {{%r[0-9]+}}, 0;
// STRICT-DAG: mov.b32 {{%r[0-9]+}}, -2147450880;
// STRICT-COUNT: {{^6$}}

// BF16: .entry spconv_conv2d_0(
// BF16-DAG: fma.rn.bf16x2
// BF16-DAG: mov.b32 {{%r[0-9]+}}, 1069563840;
// BF16-DAG: mov.b32 {{%r[0-9]+}}, 1036860877;
// BF16-DAG: mov.b32 {{%r[0-9]+}}, 1077952576;
// BF16-DAG: add.rn.f32 {{%r[0-9]+}}, {{%r[0-9]+}}, 0f3DCD0000;
// BF16-NOT: {{fma.rn.f16x2|0f408[0-9A-F]{5}|, 6710[0-9]{4};}}

// Half sums start from the bias word: 0.5 is 0x3800, -1 0xBC00, 2 0x4000, 0.25 0x3400.
// HALFSUM-DAG: mov.b32 {{%r[0-9]+}}, 939538432;
// HALFSUM-DAG: mov.b32 {{%r[0-9]+}}, -1140802560;
// HALFSUM-DAG: mov.b32 {{%r[0-9]+}}, 1073758208;
// HALFSUM-DAG: mov.b32 {{%r[0-9]+}}, 872428544;
// HALFSUM-NOT: add.rn.f32

// JSON: "fold_at": "ptx"
// JSON: "fmas_deleted": 4,
// JSON-NEXT: "fmas_kept": 4,

// UNDERFLOW: error: weight 0 (1.000000e-09) would round to zero or overflow in 'f16'; rescale the layer or keep it in f32
