// Adjacent pairs under filters wider than one column (docs/design.md, "How the outputs are
// paired"): asked for by the op's pairing (or a tuning-table entry), a 3x3 or 5x5 conv at
// column stride 1 over even widths pairs output columns 2i and 2i + 1. The kernel reads and
// writes whole 32-bit words, stages them whole (through registers, or by cp.async when asked),
// and joins an odd tap's two halves in registers with one prmt.b32 of two whole words: the hi
// half of one word and the lo half of the next. No 16-bit load or pack is left in the FMA
// stream for ptxas to spill (docs/tuning-log.md, "Partial spill reloads"). Without the
// attribute the compiler keeps its own choice: a 3x3 conv at batch 1 pairs two output
// columns half the width apart (two 16-bit loads a word).
//
// RUN: spconv-translate --spconv-to-ptx --cache-dir=none %s | FileCheck %s
// RUN: spconv-translate --spconv-to-ptx --cache-dir=none --async-staging=2 %s 2>&1 | FileCheck %s --check-prefix=ASYNC
// RUN: spconv-translate --spconv-to-launch-json --cache-dir=none %s | FileCheck %s --check-prefix=JSON
// RUN: spconv-translate --spconv-to-launch-json --cache-dir=none --outputs-per-thread=2 --column-order=1 %s 2>&1 | FileCheck %s --check-prefix=ORDER
// RUN: spconv-translate --spconv-to-launch-json --cache-dir=none --tuning-table=%S/Inputs/adjacent-windows-table.json --outputs-per-thread=2 %s 2>&1 | FileCheck %s --check-prefix=TABLE

// CHECK-LABEL: .entry spconv_conv2d_0(
// CHECK-NOT: ld.global.b16
// CHECK: ld.global.b32
// CHECK-NOT: ld.global.b16
// CHECK: ld.shared.b32 [[LO:%r[0-9]+]], [{{%rd[0-9]+}}+{{[0-9]+}}];
// CHECK-NEXT: ld.shared.b32 [[NEXT:%r[0-9]+]], [{{%rd[0-9]+}}+{{[0-9]+}}];
// CHECK-NOT: ld.shared.b16
// CHECK-NOT: mov.b32 {{%r[0-9]+}}, {
// CHECK: prmt.b32 {{%r[0-9]+}}, [[LO]], [[NEXT]], 0x5432U;
// CHECK-NOT: ld.shared.b16
// CHECK-NOT: mov.b32 {{%r[0-9]+}}, {
// CHECK: fma.rn.f16x2
// CHECK-NOT: ld.shared.b16
// CHECK-NOT: st.global.b16
// CHECK: st.global.b32
// CHECK-NOT: st.global.b16
// CHECK: ret;
// The same conv left to the compiler: two columns half the width apart.
// CHECK-LABEL: .entry spconv_conv2d_1(
// CHECK: ld.global.b16
// CHECK: st.global.b16
// CHECK: ret;
// A valid 5x5 in bf16: even taps whole words, odd taps joined.
// CHECK-LABEL: .entry spconv_conv2d_2(
// CHECK-NOT: ld.global.b16
// CHECK: prmt.b32 {{%r[0-9]+}}, {{%r[0-9]+}}, {{%r[0-9]+}}, 0x5432U;
// CHECK: fma.rn.bf16x2
// CHECK-NOT: st.global.b16
// CHECK: ret;

// cp.async copies the adjacent pairs' whole words; the columns pairing's gathered words
// cannot be copied, and the conv that pairs them says so.
// ASYNC-NOT: warning
// ASYNC: adjacent-windows.mlir:[[@LINE+26]]:8: warning: async-staging=2 does not apply to this conv: its half-precision words are gathered from NCHW tensors
// ASYNC-NOT: warning
// ASYNC-LABEL: .entry spconv_conv2d_0(
// ASYNC-NOT: ld.global
// ASYNC: cp.async.ca.shared.global [{{%rd[0-9]+}}], [{{%rd[0-9]+}}+{{-?[0-9]+}}], 4, {{%r[0-9]+}};
// ASYNC: cp.async.wait_group 0;
// ASYNC: prmt.b32
// ASYNC: ret;

// Several outputs a thread read one window: they are adjacent whatever was asked.
// ORDER: adjacent-windows.mlir:[[@LINE+13]]:8: warning: column-order=1 does not apply to this conv: its adjacent pairs read each input row's window of words once for all of a thread's outputs, which must then be adjacent (column-order=2)
// ORDER: "entry": "spconv_conv2d_0"
// ORDER: "adjacent_columns": true

// JSON: "entry": "spconv_conv2d_0"
// JSON: "pairing": "adjacent"
// JSON: "entry": "spconv_conv2d_1"
// JSON: "pairing": "columns"
// JSON: "entry": "spconv_conv2d_2"
// JSON: "pairing": "adjacent"

func.func @convs(%x: tensor<1x3x4x6xf16>, %y: tensor<1x3x8x10xbf16>)
    -> (tensor<1x4x4x6xf16>, tensor<1x4x4x6xf16>, tensor<1x4x4x6xbf16>) {
  %a = spconv.conv2d %x {weights = dense<0.5> : tensor<4x3x3x3xf32>, padding = array<i64: 1, 1, 1, 1>,
                         pairing = #spconv.pairing<adjacent>}
      : tensor<1x3x4x6xf16> -> tensor<1x4x4x6xf16>
  %c = spconv.conv2d %x {weights = dense<0.5> : tensor<4x3x3x3xf32>, padding = array<i64: 1, 1, 1, 1>}
      : tensor<1x3x4x6xf16> -> tensor<1x4x4x6xf16>
  %v = spconv.conv2d %y {weights = dense<0.25> : tensor<4x3x5x5xf32>, pairing = #spconv.pairing<adjacent>}
      : tensor<1x3x8x10xbf16> -> tensor<1x4x4x6xbf16>
  return %a, %c, %v : tensor<1x4x4x6xf16>, tensor<1x4x4x6xf16>, tensor<1x4x4x6xbf16>
}

// A table entry of one output a thread orders nothing under --outputs-per-thread=2: the
// outputs are adjacent, and no warning blames a column order nobody asked for.
// TABLE-NOT: warning
// TABLE: "adjacent_columns": true,
// TABLE: "tuned_by": "test entry: adjacent windows, one output a thread; the request's outputs-per-thread over it"
