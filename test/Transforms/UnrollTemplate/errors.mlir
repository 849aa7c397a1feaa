// spconv-unroll-template refuses what it cannot make straight-line, at the offending op.
// RUN: spconv-opt %s --spconv-unroll-template -split-input-file -verify-diagnostics

// A loop whose trip count is not constant cannot be fully unrolled: its weights would not
// become immediates.
func.func @symbolic_bound(%n: index) attributes {spconv.template} {
  // expected-error @below {{'affine.for' op in a spconv template must have constant bounds}}
  affine.for %i = 0 to %n {
  }
  return
}

// -----

// A register array read before anything is stored there has no value to forward.
func.func @read_before_write() -> f32 attributes {spconv.template} {
  %a = memref.alloca() : memref<2xf32>
  affine.for %i = 0 to 2 {
  }
  // expected-error @below {{'affine.load' op reads an element of a register array of a spconv template before it is written}}
  %v = affine.load %a[1] : memref<2xf32>
  return %v : f32
}

// -----

// The grouped kk bounds of an inner loop must be constant once the outer loop is unrolled.
func.func @inner_symbolic(%n: index) attributes {spconv.template} {
  affine.for %i = 0 to 2 {
    // expected-error @below {{must have constant bounds once its enclosing loops are unrolled}}
    affine.for %j = max affine_map<(d0)[s0] -> (d0, s0)>(%i)[%n] to 4 {
    }
  }
  return
}
