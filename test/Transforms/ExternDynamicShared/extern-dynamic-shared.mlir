// RUN: spconv-opt %s --pass-pipeline='builtin.module(gpu.module(convert-gpu-to-nvvm{index-bitwidth=32 use-bare-ptr-memref-call-conv=1},spconv-extern-dynamic-shared))' | FileCheck %s
// RUN: spconv-opt %s --pass-pipeline='builtin.module(gpu.module(convert-gpu-to-nvvm{index-bitwidth=32 use-bare-ptr-memref-call-conv=1}))' | FileCheck %s --check-prefix=UPSTREAM

// spconv-extern-dynamic-shared (docs/design.md, "Dynamic shared memory"): the global that
// convert-gpu-to-nvvm lowers gpu.dynamic_shared_memory to becomes external, which NVPTX
// declares as the launch's dynamic shared memory; upstream leaves it internal, which NVPTX
// demotes to a one-byte static variable. Static shared globals and other globals keep
// their linkage.
// CHECK-DAG: llvm.mlir.global external @__dynamic_shmem__0() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
// CHECK-DAG: llvm.mlir.global internal @static_tile() {addr_space = 3 : i32} : !llvm.array<16 x f32>
// CHECK-DAG: llvm.mlir.global internal @zeros() {addr_space = 1 : i32} : !llvm.array<0 x i8>
// UPSTREAM: llvm.mlir.global internal @__dynamic_shmem__0()

module attributes {gpu.container_module} {
  gpu.module @kernels {
    llvm.mlir.global internal @static_tile() {addr_space = 3 : i32} : !llvm.array<16 x f32>
    llvm.mlir.global internal @zeros() {addr_space = 1 : i32} : !llvm.array<0 x i8>
    gpu.func @k(%a: memref<64xf32>) kernel {
      %c0 = arith.constant 0 : index
      %d = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
      %v = memref.view %d[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<20000xf32, #gpu.address_space<workgroup>>
      %t = gpu.thread_id x
      %x = memref.load %a[%t] : memref<64xf32>
      memref.store %x, %v[%t] : memref<20000xf32, #gpu.address_space<workgroup>>
      gpu.return
    }
  }
}
