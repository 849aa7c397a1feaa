//===- Passes.td - spconv conversion passes ----------------*- tablegen -*-===//
#ifndef SPCONV_CONVERSION_PASSES_TD
#define SPCONV_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"
include "spconv/Conversion/TilingOptions.td"

def ConvertSpconvToAffine : Pass<"convert-spconv-to-affine", "::mlir::ModuleOp"> {
  let summary = "Lower spconv.conv2d to a gpu.func template whose FMAs are affine nests";
  let description = [{
    Emits the kernel of convert-spconv-to-gpu (same signature, attributes, staging loop,
    barriers, channel-block switch, stores) but leaves the FMAs of each staged chunk as an
    affine nest, for inspection and for affine transformations before
    `spconv-unroll-template`:

    ```mlir
    affine.for %cc = 0 to chunkC {          // weight loop: input channel of the chunk
      affine.for %r = 0 to R {              // weight loop: filter row
        affine.for %s = 0 to S {            // weight loop: filter column
          %off = affine.apply (tile offset of (cc, r, s))
          %x = memref.load %tile[%base + %off]      // one shared load per (c, r, s)
          affine.for %kk = max(0, ..) to min(blockK, ..) {  // weight loop (group bounds)
            %bits = affine.apply (0x40000001 + flat KCRS index of (kLo + kk, c, r, s))
            %w = arith.bitcast (arith.index_cast %bits : index to i32) : i32 to f32
            %acc = affine.load %accs[%kk, 0]
            affine.store (llvm.intr.fma %x, %w, %acc), %accs[%kk, 0]
          }
        }
      }
    }
    ```

    With outputs-per-thread > 1 the loads sit in an `affine.for %o` (data loop) storing to a
    register array `%in`, and the FMAs in an `affine.for %o` inside kk.
    `%in` and `%accs` are private `memref.alloca` register arrays; the weight is the
    placeholder of its KCRS index (docs/design.md), a function of the induction variables
    that folds to the immediate once they are constants. With groups, the kk bounds keep
    only the output channels of cc's group: no cross-group FMA exists.
  }];
  let options = SpconvTilingOptions;
  let dependentDialects = [
    "::mlir::gpu::GPUDialect", "::mlir::affine::AffineDialect",
    "::mlir::arith::ArithDialect", "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect", "::mlir::LLVM::LLVMDialect", "::mlir::NVVM::NVVMDialect",
    "::mlir::nvgpu::NVGPUDialect"
  ];
}

def ConvertSpconvToGPU : Pass<"convert-spconv-to-gpu", "::mlir::ModuleOp"> {
  let summary = "Lower spconv.conv2d to a placeholder-weight direct-convolution gpu.func";
  let description = [{
    Emits, for every `spconv.conv2d`, a `gpu.func` kernel in `gpu.module @spconv_kernels`:
    one thread block per (output tile, block of output channels, image); the block stages its
    input tile in workgroup memory (padding as zeros) and each thread computes
    outputs-per-thread columns x block-k channels with the loops over input channel, filter
    row, filter column and channel fully unrolled: it is convert-spconv-to-affine followed by
    spconv-unroll-template on each kernel. Weights are placeholders (see
    docs/design.md), so the kernel depends only on shape, tiling and target; the conv op is
    tagged with `spconv.kernel` and the real weights stay on it for spconv-fold-weights.
  }];
  let options = SpconvTilingOptions;
  let dependentDialects = [
    "::mlir::gpu::GPUDialect", "::mlir::affine::AffineDialect",
    "::mlir::arith::ArithDialect", "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect", "::mlir::LLVM::LLVMDialect", "::mlir::NVVM::NVVMDialect",
    "::mlir::nvgpu::NVGPUDialect"
  ];
}

def ConvertSpconvToCPU : Pass<"convert-spconv-to-cpu", "::mlir::ModuleOp"> {
  let summary = "Lower spconv.conv2d to the same placeholder template, run serially on the host";
  let description = [{
    Emits the same unrolled template as convert-spconv-to-gpu (the same affine nests, unrolled
    the same way) as a `func.func` over memrefs:
    blocks and threads become sequential scf.for loops and each barrier-separated phase runs
    for all threads of a block before the next. Used to check the template and the fold pass
    numerically on machines without a GPU. With `unroll=false` the FMAs stay affine nests,
    as convert-spconv-to-affine leaves them in the GPU kernel, for spconv-unroll-template
    (spconv-cpu-check --affine-pipeline checks a transformation of the nests numerically).
  }];
  let options = !listconcat(SpconvTilingOptions, [
    Option<"unroll", "unroll", "bool", "true",
           "Unroll the FMA nests (false: leave them for spconv-unroll-template)">
  ]);
  let dependentDialects = [
    "::mlir::func::FuncDialect", "::mlir::affine::AffineDialect",
    "::mlir::arith::ArithDialect", "::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect",
    "::mlir::LLVM::LLVMDialect"
  ];
}

#endif // SPCONV_CONVERSION_PASSES_TD
