// Only template functions (spconv.template / spconv.block_template) are unrolled; a user's
// own affine code is left alone.
// RUN: spconv-opt %s --spconv-unroll-template | FileCheck %s

// CHECK-LABEL: func.func @user
// CHECK: affine.for %{{.*}} = 0 to 4
func.func @user(%m: memref<4xf32>, %v: f32) {
  affine.for %i = 0 to 4 {
    affine.store %v, %m[%i] : memref<4xf32>
  }
  return
}

// CHECK-LABEL: func.func @tmpl
// CHECK-NOT: affine.
// CHECK-COUNT-3: memref.store
// CHECK-NOT: memref.store
// CHECK: return
func.func @tmpl(%m: memref<3xf32>, %v: f32) attributes {spconv.template} {
  affine.for %i = 0 to 3 {
    memref.store %v, %m[%i] : memref<3xf32>
  }
  return
}
