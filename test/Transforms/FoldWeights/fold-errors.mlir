// Bad spconv.weights entries and weight blobs give located errors, and the pass fails.
// RUN: spconv-opt %s --spconv-fold-weights -split-input-file -verify-diagnostics

// An entry naming a kernel the module does not have.
// expected-error@+1 {{no kernel or weights for 'nope'}}
module attributes {spconv.weights = {nope = {weights = dense<1.0> : tensor<1x1x1x1xf32>}}} {
  llvm.func @k() {
    llvm.return
  }
}

// -----

// An entry without weights.
// expected-error@+1 {{no kernel or weights for 'k'}}
module attributes {spconv.weights = {k = {bias = dense<1.0> : tensor<1xf32>}}} {
  llvm.func @k() {
    llvm.return
  }
}

// -----

// An entry that is not a dictionary.
// expected-error@+1 {{no kernel or weights for 'k'}}
module attributes {spconv.weights = {k = dense<1.0> : tensor<1x1x1x1xf32>}} {
  llvm.func @k() {
    llvm.return
  }
}

// -----

// expected-error@+1 {{'spconv.weights' must be a dictionary}}
module attributes {spconv.weights = [1, 2]} {
}

// -----

// A dense_resource blob shorter than its tensor (a truncated file): 1 float of 2.
module attributes {spconv.weights = {k = {weights = dense_resource<short> : tensor<1x1x1x2xf32>}}} {
  // expected-error@+1 {{cannot read the f32 weights to fold into this kernel (missing or truncated dense_resource blob?)}}
  llvm.func @k(%x: f32) -> f32 {
    %w = llvm.mlir.constant(0x40000001 : f32) : f32
    %r = llvm.intr.fma(%x, %w, %x) : (f32, f32, f32) -> f32
    llvm.return %r : f32
  }
}
{-#
  dialect_resources: {
    builtin: {
      short: "0x040000000000803F"
    }
  }
#-}

// -----

// A dense_resource whose blob is missing altogether.
module attributes {spconv.weights = {k = {weights = dense_resource<absent> : tensor<1x1x1x2xf32>}}} {
  // expected-error@+1 {{cannot read the f32 weights to fold into this kernel}}
  llvm.func @k() {
    llvm.return
  }
}

// -----

// A bias blob that cannot be read.
module attributes {spconv.weights = {k = {weights = dense<1.0> : tensor<1x1x1x1xf32>,
                                          bias = dense_resource<absent> : tensor<1xf32>}}} {
  // expected-error@+1 {{cannot read the f32 bias to fold into this kernel}}
  llvm.func @k() {
    llvm.return
  }
}

// -----

// A placeholder past the end of the weights: the template and the weights disagree.
module attributes {spconv.weights = {k = {weights = dense<1.0> : tensor<1x1x1x2xf32>}}} {
  // expected-error@+1 {{weight placeholder 5 is out of range}}
  llvm.func @k(%x: f32) -> f32 {
    %w = llvm.mlir.constant(0x40000006 : f32) : f32
    %r = llvm.intr.fma(%x, %w, %x) : (f32, f32, f32) -> f32
    llvm.return %r : f32
  }
}

// -----

// A bias placeholder in a kernel whose conv has no bias.
module attributes {spconv.weights = {k = {weights = dense<1.0> : tensor<1x1x1x2xf32>}}} {
  // expected-error@+1 {{bias placeholder 0 is out of range}}
  llvm.func @k(%x: f32) -> f32 {
    %b = llvm.mlir.constant(0x40800001 : f32) : f32
    %r = llvm.fadd %x, %b : f32
    llvm.return %r : f32
  }
}
