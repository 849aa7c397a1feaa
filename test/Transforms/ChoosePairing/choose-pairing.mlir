// spconv-choose-pairing: a half-precision conv without a `pairing` takes the pairing of the
// tuning table's choose_pairing entry for its logical conv, type, accumulation and nonzero
// count (docs/design.md, "Tuning table"); everything else is left as it is.
// RUN: spconv-opt %s --spconv-choose-pairing=tuning-table=%S/Inputs/table.json | FileCheck %s
// The table from $SPCONV_TUNING_TABLE when the option is empty; 'none' turns it off.
// RUN: env SPCONV_TUNING_TABLE=%S/Inputs/table.json spconv-opt %s --spconv-choose-pairing | FileCheck %s
// RUN: env SPCONV_TUNING_TABLE=%S/Inputs/table.json spconv-opt %s --spconv-choose-pairing=tuning-table=none | FileCheck %s --check-prefix=OFF
// RUN: env -u SPCONV_TUNING_TABLE spconv-opt %s --spconv-choose-pairing | FileCheck %s --check-prefix=OFF
// A table that does not load is an error at the module, naming the file.
// RUN: not spconv-opt %s --spconv-choose-pairing=tuning-table=%t.missing.json 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: sed 's/"choose_pairing": true/"choose_pairing": 1/' %S/Inputs/table.json > %t.bad.json
// RUN: not spconv-opt %s --spconv-choose-pairing=tuning-table=%t.bad.json 2>&1 | FileCheck %s --check-prefix=BAD

// OFF-NOT: pairing_by
// OFF-NOT: pairing<rows>
// OFF-NOT: pairing<images>
// MISSING: error: tuning table {{.*}}missing.json: No such file or directory
// BAD: error: tuning table {{.*}}bad.json: expected boolean at table.entries[0].choose_pairing

// 3 nonzero weights: the first entry's rows (the heuristic would pair the two columns).
// CHECK-LABEL: func.func @chosen
// CHECK: spconv.conv2d %{{.*}} {pairing = #spconv.pairing<rows>, spconv.pairing_by = "pass test rows", weights
func.func @chosen(%x: tensor<1x1x3x3xf16>) -> tensor<1x2x2x2xf16> {
  %y = spconv.conv2d %x {weights = dense<[[[[1.0, 0.0], [0.0, 2.0]]], [[[0.0, -0.0], [0.0, -1.0]]]]> : tensor<2x1x2x2xf32>}
      : tensor<1x1x3x3xf16> -> tensor<1x2x2x2xf16>
  return %y : tensor<1x2x2x2xf16>
}

// The user's pairing wins.
// CHECK-LABEL: func.func @explicit
// CHECK: spconv.conv2d %{{.*}} {pairing = #spconv.pairing<columns>, weights
// CHECK-NOT: pairing_by
func.func @explicit(%x: tensor<1x1x3x3xf16>) -> tensor<1x2x2x2xf16> {
  %y = spconv.conv2d %x {pairing = #spconv.pairing<columns>, weights = dense<[[[[1.0, 0.0], [0.0, 2.0]]], [[[0.0, -0.0], [0.0, -1.0]]]]> : tensor<2x1x2x2xf32>}
      : tensor<1x1x3x3xf16> -> tensor<1x2x2x2xf16>
  return %y : tensor<1x2x2x2xf16>
}

// 4 nonzero weights: outside the choosing entry's range. The plain columns entry of the
// same conv chooses nothing (it is the tiling of convs already paired by columns).
// CHECK-LABEL: func.func @other_nnz
// CHECK-NOT: pairing
// CHECK: return
func.func @other_nnz(%x: tensor<1x1x3x3xf16>) -> tensor<1x2x2x2xf16> {
  %y = spconv.conv2d %x {weights = dense<[[[[1.0, 3.0], [0.0, 2.0]]], [[[0.0, -0.0], [0.0, -1.0]]]]> : tensor<2x1x2x2xf32>}
      : tensor<1x1x3x3xf16> -> tensor<1x2x2x2xf16>
  return %y : tensor<1x2x2x2xf16>
}

// f32 sums: another key (accumulate f32).
// CHECK-LABEL: func.func @f32_sums
// CHECK-NOT: pairing
// CHECK: return
func.func @f32_sums(%x: tensor<1x1x3x3xf16>) -> tensor<1x2x2x2xf16> {
  %y = spconv.conv2d %x {accumulate = f32, weights = dense<[[[[1.0, 0.0], [0.0, 2.0]]], [[[0.0, -0.0], [0.0, -1.0]]]]> : tensor<2x1x2x2xf32>}
      : tensor<1x1x3x3xf16> -> tensor<1x2x2x2xf16>
  return %y : tensor<1x2x2x2xf16>
}

// f32 convs have no pairing.
// CHECK-LABEL: func.func @single
// CHECK-NOT: pairing
// CHECK: return
func.func @single(%x: tensor<1x1x3x3xf32>) -> tensor<1x2x2x2xf32> {
  %y = spconv.conv2d %x {weights = dense<[[[[1.0, 0.0], [0.0, 2.0]]], [[[0.0, -0.0], [0.0, -1.0]]]]> : tensor<2x1x2x2xf32>}
      : tensor<1x1x3x3xf32> -> tensor<1x2x2x2xf32>
  return %y : tensor<1x2x2x2xf32>
}

// bf16: the bf16 entry's images, even at batch 1.
// CHECK-LABEL: func.func @bf16
// CHECK: spconv.conv2d %{{.*}} {pairing = #spconv.pairing<images>, spconv.pairing_by = "tuning table", weights
func.func @bf16(%x: tensor<1x1x3x3xbf16>) -> tensor<1x2x2x2xbf16> {
  %y = spconv.conv2d %x {weights = dense<[[[[1.0, 0.0], [0.0, 2.0]]], [[[0.0, -0.0], [0.0, -1.0]]]]> : tensor<2x1x2x2xf32>}
      : tensor<1x1x3x3xbf16> -> tensor<1x2x2x2xbf16>
  return %y : tensor<1x2x2x2xbf16>
}

// Weights that cannot be read (a blob that is not there) are left to the compile to report.
// CHECK-LABEL: func.func @unreadable
// CHECK-NOT: pairing
// CHECK: return
func.func @unreadable(%x: tensor<1x1x3x3xf16>) -> tensor<1x2x2x2xf16> {
  %y = spconv.conv2d %x {weights = dense_resource<absent> : tensor<2x1x2x2xf32>}
      : tensor<1x1x3x3xf16> -> tensor<1x2x2x2xf16>
  return %y : tensor<1x2x2x2xf16>
}

// A conv compiled already keeps the pairing its kernel has.
// CHECK-LABEL: func.func @compiled
// CHECK-NOT: pairing
// CHECK: return
func.func @compiled(%x: tensor<1x1x3x3xf16>) -> tensor<1x2x2x2xf16> {
  %y = spconv.conv2d %x {spconv.kernel = @spconv_kernels::@k, weights = dense<[[[[1.0, 0.0], [0.0, 2.0]]], [[[0.0, -0.0], [0.0, -1.0]]]]> : tensor<2x1x2x2xf32>}
      : tensor<1x1x3x3xf16> -> tensor<1x2x2x2xf16>
  return %y : tensor<1x2x2x2xf16>
}
