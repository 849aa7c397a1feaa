// Upstream mlir-opt (not spconv-opt) gets the dialect and the passes from the plugin.
// The plugin is instrumented in the sanitizer build and mlir-opt is not: the runtime of
// AddressSanitizer must come first in the process, so the test cannot run there.
// UNSUPPORTED: sanitizers
// RUN: mlir-opt %s --load-dialect-plugin=%spconv_libs/SpconvPlugin.so \
// RUN:   --load-pass-plugin=%spconv_libs/SpconvPlugin.so \
// RUN:   --pass-pipeline="builtin.module(spconv-sparsity-stats)" 2>%t.stats | FileCheck %s
// RUN: FileCheck %s --check-prefix=STATS < %t.stats
// The template's affine stage and its unrolling run from the plugin too: 8 weights, one
// FMA each, and no loop left.
// RUN: mlir-opt %s --load-dialect-plugin=%spconv_libs/SpconvPlugin.so \
// RUN:   --load-pass-plugin=%spconv_libs/SpconvPlugin.so \
// RUN:   --pass-pipeline="builtin.module(convert-spconv-to-affine, spconv-unroll-template)" \
// RUN:   | FileCheck %s --check-prefix=AFFINE
// Plugin passes must be named in --pass-pipeline: mlir-opt builds its per-pass flags
// (--spconv-sparsity-stats) before the plugin is loaded, so that spelling is unknown there.
//
// Without the dialect plugin the op does not parse, so the run above really used it.
// RUN: not mlir-opt %s 2>&1 | FileCheck %s --check-prefix=NODIALECT
// The verifier runs inside the plugin too.
// RUN: sed 's/1x2x2x2xf32>$/1x2x3x2xf32>/' %s | not mlir-opt - \
// RUN:   --load-dialect-plugin=%spconv_libs/SpconvPlugin.so 2>&1 | FileCheck %s --check-prefix=VERIFY

// CHECK: spconv.conv2d %{{.*}} {weights = dense<{{.*}}> : tensor<2x1x2x2xf32>} : tensor<1x1x3x3xf32> -> tensor<1x2x2x2xf32>
// STATS: spconv.conv2d loc({{.*}}): input 1x1x3x3 weights 2x1x2x2 output 1x2x2x2 nnz 3/8 sparsity 0.6250 useful-flop/image 24 weight-bytes 32 non-finite 0
// AFFINE: gpu.func @spconv_conv2d_0
// AFFINE-NOT: affine.for
// AFFINE-COUNT-8: llvm.intr.fma
// AFFINE-NOT: llvm.intr.fma
// AFFINE-NOT: affine.
// NODIALECT: error: Dialect `spconv' not found for custom op 'spconv.conv2d'
// VERIFY: error: 'spconv.conv2d' op result spatial shape 3x2 does not follow
func.func @f(%x: tensor<1x1x3x3xf32>) -> tensor<1x2x2x2xf32> {
  %y = spconv.conv2d %x {weights = dense<[[[[1.0, 0.0], [0.0, 2.0]]], [[[0.0, 0.0], [0.0, -1.0]]]]> : tensor<2x1x2x2xf32>}
      : tensor<1x1x3x3xf32> -> tensor<1x2x2x2xf32>
  return %y : tensor<1x2x2x2xf32>
}
