// The fold on a real lowered template: a 2x1x1x2 conv (K = 2, C = 1, R = 1, S = 2) with
// weights [[1.5, 0.0], [-2.0, -0.0]] lowered by convert-spconv-to-cpu with two output columns
// per thread, so every weight sits in exactly 2 FMAs. Column s = 1 is all zero (+0.0 and
// -0.0): its 4 FMAs go, and with them the 2 staged-tile loads that fed only them.


// 4 weights x 2 columns in the template; 2 nonzero weights x 2 columns after the fold; all 8
// with strict-ieee.
// The fold deletes the 2 loads that fed only deleted FMAs, and no other load.

func.func @conv(%x: tensor<1x1x1x3xf32>) -> tensor<1x2x1x2xf32> {
  %y = spconv.conv2d %x {weights = dense<[[[[1.5, 0.0]]], [[[-2.0, -0.0]]]]> : tensor<2x1x1x2xf32>}
      : tensor<1x1x1x3xf32> -> tensor<1x2x1x2xf32>
  return %y : tensor<1x2x1x2xf32>
}

// The template: placeholders encode the flat KCRS index i as the f32 with bits
// 0x40000000 | (i + 1), in the order (s, k): index 0 (k0 s0), 2 (k1 s0), 1 (k0 s1), 3 (k1 s1).

// The folded kernel: real immediates, the weights attribute consumed, the s = 1 loads and
// FMAs gone, and the accumulators saved straight from the s = 0 FMAs (the deleted FMAs'
// results were replaced by their addends).

// strict-ieee: all 8 FMAs stay, the zero weights as 0.0 and -0.0 immediates.
