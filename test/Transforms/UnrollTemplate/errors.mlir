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

// -----

// A register array indexed by something that unrolling does not make constant cannot become
// SSA values.
func.func @dynamic_index(%i: index, %v: f32) attributes {spconv.template} {
  %a = memref.alloca() : memref<2xf32>
  affine.for %j = 0 to 1 {
  }
  // expected-error @below {{'affine.store' op accesses a register array of a spconv template at an index that is not constant after unrolling}}
  affine.store %v, %a[%i] : memref<2xf32>
  return
}

// -----

// A loop with an empty body that still carries values is refused rather than guessed at
// (templates never write one; loopUnrollFull would leave it in place).
func.func @empty_iter_args(%x: f32) -> f32 attributes {spconv.template} {
  // expected-error @below {{carries values through an empty body}}
  %r = affine.for %i = 0 to 2 iter_args(%a = %x) -> (f32) {
    affine.yield %a : f32
  }
  return %r : f32
}
