// -mlir-pass-statistics should report the fold's counts: here 1 weight of 2 is zero and the
// template has 2 output columns per thread, so 2 FMAs are kept and 2 deleted.
//
// XFAIL: *
// Expected to fail with the Debian/Ubuntu LLVM 22 packages: they are built with NDEBUG and
// without LLVM_FORCE_ENABLE_STATS, so mlir::Pass::Statistic is an llvm::NoopStatistic and
// every pass (upstream ones too) reports an empty statistics table. Remove the XFAIL once
// spconv-fold-weights reports its counts by a route that survives release builds.
//
// RUN: spconv-opt %s --convert-spconv-to-cpu=outputs-per-thread=2 --convert-scf-to-cf --convert-to-llvm --reconcile-unrealized-casts \
// RUN:   | spconv-opt --spconv-fold-weights -mlir-pass-statistics -o /dev/null 2>&1 | FileCheck %s
// RUN: spconv-opt %s --convert-spconv-to-cpu=outputs-per-thread=2 --convert-scf-to-cf --convert-to-llvm --reconcile-unrealized-casts \
// RUN:   | spconv-opt --spconv-fold-weights=strict-ieee -mlir-pass-statistics -o /dev/null 2>&1 | FileCheck %s --check-prefix=STRICT

func.func @conv(%x: tensor<1x1x1x3xf32>) -> tensor<1x1x1x2xf32> {
  %y = spconv.conv2d %x {weights = dense<[[[[0.75, 0.0]]]]> : tensor<1x1x1x2xf32>}
      : tensor<1x1x1x3xf32> -> tensor<1x1x1x2xf32>
  return %y : tensor<1x1x1x2xf32>
}

// CHECK: Pass statistics report
// CHECK: SpconvFoldWeights
// CHECK-DAG: (S) {{ *}}2 fmas-kept
// CHECK-DAG: (S) {{ *}}2 fmas-deleted

// STRICT: SpconvFoldWeights
// STRICT-DAG: (S) {{ *}}4 fmas-kept
// STRICT-DAG: (S) {{ *}}0 fmas-deleted
