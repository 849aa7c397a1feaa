// The fold on a real lowered template: a 2x1x1x2 conv (K = 2, C = 1, R = 1, S = 2) with
// weights [[1.5, 0.0], [-2.0, -0.0]] lowered by convert-spconv-to-cpu with two output columns
// per thread, so every weight sits in exactly 2 FMAs. Column s = 1 is all zero (+0.0 and
// -0.0): its 4 FMAs go, and with them the 2 staged-tile loads that fed only them.

// RUN: spconv-opt %s --convert-spconv-to-cpu=outputs-per-thread=2 --convert-scf-to-cf --convert-to-llvm --reconcile-unrealized-casts > %t.template.mlir
// RUN: FileCheck %s --check-prefix=TEMPLATE < %t.template.mlir
// RUN: spconv-opt %t.template.mlir --spconv-fold-weights | FileCheck %s --check-prefix=FOLD
// RUN: spconv-opt %t.template.mlir --spconv-fold-weights=strict-ieee | FileCheck %s --check-prefix=STRICT

// 4 weights x 2 columns in the template; 2 nonzero weights x 2 columns after the fold; all 8
// with strict-ieee.
// RUN: grep llvm.intr.fma %t.template.mlir | count 8
// RUN: spconv-opt %t.template.mlir --spconv-fold-weights | grep llvm.intr.fma | count 4
// RUN: spconv-opt %t.template.mlir --spconv-fold-weights=strict-ieee | grep llvm.intr.fma | count 8
// The fold deletes the 2 loads that fed only deleted FMAs, and no other load.
// RUN: grep -c llvm.load %t.template.mlir > %t.loads
// RUN: spconv-opt %t.template.mlir --spconv-fold-weights | grep -c llvm.load >> %t.loads
// RUN: FileCheck %s --check-prefix=LOADS < %t.loads
// LOADS: [[#BEFORE:]]
// LOADS-NEXT: [[#BEFORE-2]]

func.func @conv(%x: tensor<1x1x1x3xf32>) -> tensor<1x2x1x2xf32> {
  %y = spconv.conv2d %x {weights = dense<[[[[1.5, 0.0]]], [[[-2.0, -0.0]]]]> : tensor<2x1x1x2xf32>}
      : tensor<1x1x1x3xf32> -> tensor<1x2x1x2xf32>
  return %y : tensor<1x2x1x2xf32>
}

// The template: placeholders encode the flat KCRS index i as the f32 with bits
// 0x40000000 | (i + 1), defined at the function entry (unrollTemplateNests) and used in the
// order (s, k): index 0 (k0 s0), 2 (k1 s0), 1 (k0 s1), 3 (k1 s1).
// TEMPLATE: module attributes {spconv.weights = {spconv_conv2d_0 = {weights = dense<{{.*}}> : tensor<2x1x1x2xf32>}}}
// TEMPLATE-LABEL: llvm.func @spconv_conv2d_0(
// TEMPLATE-DAG: %[[P0:[0-9]+]] = llvm.mlir.constant(2.00000024 : f32) : f32
// TEMPLATE-DAG: %[[P2:[0-9]+]] = llvm.mlir.constant(2.00000072 : f32) : f32
// TEMPLATE-DAG: %[[P1:[0-9]+]] = llvm.mlir.constant(2.00000048 : f32) : f32
// TEMPLATE-DAG: %[[P3:[0-9]+]] = llvm.mlir.constant(2.00000095 : f32) : f32
// TEMPLATE: llvm.intr.fma(%{{[0-9]+}}, %[[P0]], %{{[0-9]+}}) : (f32, f32, f32) -> f32
// TEMPLATE-NEXT: llvm.intr.fma(%{{[0-9]+}}, %[[P0]], %{{[0-9]+}}) : (f32, f32, f32) -> f32
// TEMPLATE-NEXT: llvm.intr.fma(%{{[0-9]+}}, %[[P2]], %{{[0-9]+}}) : (f32, f32, f32) -> f32
// TEMPLATE-NEXT: llvm.intr.fma(%{{[0-9]+}}, %[[P2]], %{{[0-9]+}}) : (f32, f32, f32) -> f32
// TEMPLATE: llvm.load
// TEMPLATE: llvm.load
// TEMPLATE: llvm.intr.fma(%{{[0-9]+}}, %[[P1]], %{{[0-9]+}}) : (f32, f32, f32) -> f32
// TEMPLATE-NEXT: llvm.intr.fma(%{{[0-9]+}}, %[[P1]], %{{[0-9]+}}) : (f32, f32, f32) -> f32
// TEMPLATE-NEXT: llvm.intr.fma(%{{[0-9]+}}, %[[P3]], %{{[0-9]+}}) : (f32, f32, f32) -> f32
// TEMPLATE-NEXT: llvm.intr.fma(%{{[0-9]+}}, %[[P3]], %{{[0-9]+}}) : (f32, f32, f32) -> f32
// TEMPLATE-NOT: llvm.intr.fma

// The folded kernel: real immediates, the weights attribute consumed, the s = 1 loads and
// FMAs gone, and the accumulators saved straight from the s = 0 FMAs (the deleted FMAs'
// results were replaced by their addends).
// FOLD-NOT: spconv.weights
// FOLD-LABEL: llvm.func @spconv_conv2d_0(
// FOLD-DAG: %[[W0:[0-9]+]] = llvm.mlir.constant(1.500000e+00 : f32) : f32
// FOLD-DAG: %[[W2:[0-9]+]] = llvm.mlir.constant(-2.000000e+00 : f32) : f32
// FOLD: %[[A0:[0-9]+]] = llvm.intr.fma(%[[X0:[0-9]+]], %[[W0]], %{{[0-9]+}}) : (f32, f32, f32) -> f32
// FOLD-NEXT: %[[A1:[0-9]+]] = llvm.intr.fma(%[[X1:[0-9]+]], %[[W0]], %{{[0-9]+}}) : (f32, f32, f32) -> f32
// FOLD-NEXT: %[[A2:[0-9]+]] = llvm.intr.fma(%[[X0]], %[[W2]], %{{[0-9]+}}) : (f32, f32, f32) -> f32
// FOLD-NEXT: %[[A3:[0-9]+]] = llvm.intr.fma(%[[X1]], %[[W2]], %{{[0-9]+}}) : (f32, f32, f32) -> f32
// FOLD-NOT: llvm.load
// FOLD: llvm.store %[[A0]], %{{[0-9]+}} : f32, !llvm.ptr
// FOLD-NOT: llvm.load
// FOLD: llvm.store %[[A1]], %{{[0-9]+}} : f32, !llvm.ptr
// FOLD-NOT: llvm.load
// FOLD: llvm.store %[[A2]], %{{[0-9]+}} : f32, !llvm.ptr
// FOLD-NOT: llvm.load
// FOLD: llvm.store %[[A3]], %{{[0-9]+}} : f32, !llvm.ptr
// FOLD-NOT: llvm.intr.fma
// FOLD-NOT: 2.000000{{[0-9]+}} : f32
// FOLD-LABEL: llvm.func @_mlir_ciface_spconv_conv2d_0(

// strict-ieee: all 8 FMAs stay, the zero weights as 0.0 and -0.0 immediates (the weight
// constants come first at the entry, before the accumulators' zeros).
// STRICT-NOT: spconv.weights
// STRICT-LABEL: llvm.func @spconv_conv2d_0(
// STRICT-DAG: %[[W3:[0-9]+]] = llvm.mlir.constant(-0.000000e+00 : f32) : f32
// STRICT-DAG: %[[W1:[0-9]+]] = llvm.mlir.constant(0.000000e+00 : f32) : f32
// STRICT-DAG: %[[W2:[0-9]+]] = llvm.mlir.constant(-2.000000e+00 : f32) : f32
// STRICT-DAG: %[[W0:[0-9]+]] = llvm.mlir.constant(1.500000e+00 : f32) : f32
// STRICT: llvm.intr.fma(%{{[0-9]+}}, %[[W0]], %{{[0-9]+}})
// STRICT-NEXT: llvm.intr.fma(%{{[0-9]+}}, %[[W0]], %{{[0-9]+}})
// STRICT-NEXT: llvm.intr.fma(%{{[0-9]+}}, %[[W2]], %{{[0-9]+}})
// STRICT-NEXT: llvm.intr.fma(%{{[0-9]+}}, %[[W2]], %{{[0-9]+}})
// STRICT: llvm.load
// STRICT: llvm.load
// STRICT: llvm.intr.fma(%{{[0-9]+}}, %[[W1]], %{{[0-9]+}})
// STRICT-NEXT: llvm.intr.fma(%{{[0-9]+}}, %[[W1]], %{{[0-9]+}})
// STRICT-NEXT: llvm.intr.fma(%{{[0-9]+}}, %[[W3]], %{{[0-9]+}})
// STRICT-NEXT: llvm.intr.fma(%{{[0-9]+}}, %[[W3]], %{{[0-9]+}})
// STRICT-NOT: llvm.intr.fma
