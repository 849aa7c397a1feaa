// Half precision reaches PTX as paired FMAs: each nonzero weight w is one fma.rn.f16x2 (or
// bf16x2) whose multiplicand is the packed constant (w, w), given by mov.b32 (ptxas makes
// it the HFMA2 immediate); zero weights leave no FMA, and no f32 FMA remains. Here K = 4,
// C = 1, a 1x1 filter, weights 1.5, 0, -2, -0: two FMAs. 1.5 is 0x3E00 in f16 and 0x3FC0
// in bf16, -2 is 0xC000 in both.
//
// RUN: spconv-translate --spconv-to-ptx --cache-dir=none %s | FileCheck %s
// RUN: spconv-translate --spconv-to-ptx --cache-dir=none %s | grep -c "fma.rn.f16x2" | FileCheck %s --check-prefix=COUNT
// RUN: spconv-translate --spconv-to-ptx --cache-dir=none --strict-ieee %s | grep -c "fma.rn.f16x2" | FileCheck %s --check-prefix=STRICT
// RUN: sed 's/xf16>/xbf16>/g' %s | spconv-translate --spconv-to-ptx --cache-dir=none | FileCheck %s --check-prefix=BF16
// The sidecar states the numerics contract; a half-precision module is folded in PTX.
// RUN: spconv-translate --spconv-to-launch-json --cache-dir=none %s | FileCheck %s --check-prefix=JSON

func.func @conv(%x: tensor<2x1x4x4xf16>) -> tensor<2x4x4x4xf16> {
  %y = spconv.conv2d %x {weights = dense<[[[[1.5]]], [[[0.0]]], [[[-2.0]]], [[[-0.0]]]]> : tensor<4x1x1x1xf32>}
      : tensor<2x1x4x4xf16> -> tensor<2x4x4x4xf16>
  return %y : tensor<2x4x4x4xf16>
}

// CHECK: .target sm_90
// CHECK: .entry spconv_conv2d_0(
// CHECK-NOT: fma.rn.f32
// CHECK-DAG: mov.b32 {{%r[0-9]+}}, 1040203264;
// CHECK-DAG: mov.b32 {{%r[0-9]+}}, -1073692672;
// CHECK-NOT: fma.rn.f32
// COUNT: {{^2$}}
// STRICT: {{^4$}}
// BF16-DAG: mov.b32 {{%r[0-9]+}}, 1069563840;
// BF16-DAG: fma.rn.bf16x2
// JSON: "fold_at": "ptx"
// JSON: "numerics": {
// JSON-DAG: "accumulate": "f16"
// JSON-DAG: "dtype": "f16"
// JSON-DAG: "error_terms": 4
// JSON-DAG: "longest_half_run": 1
// JSON-DAG: "pairing": "adjacent"
// JSON-DAG: "unit_roundoff": 0.00048828125
// JSON: "params": [
// JSON: "dtype": "f16"
// JSON: "role": "input"
// JSON-NEXT: "shape": [
// JSON-NEXT: 2,
