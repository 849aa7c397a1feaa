//===- Passes.td - spconv conversion passes ----------------*- tablegen -*-===//
#ifndef SPCONV_CONVERSION_PASSES_TD
#define SPCONV_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

// Tiling options shared by the GPU and CPU template lowerings; 0 picks the heuristic value
// (docs/design.md, "Tiling heuristic").
defvar SpconvTilingOptions = [
  Option<"blockK", "block-k", "int64_t", "0", "Output channels per thread (0 = heuristic)">,
  Option<"outputsPerThread", "outputs-per-thread", "int64_t", "0",
         "Output columns per thread (0 = heuristic)">,
  Option<"tileP", "tile-p", "int64_t", "0", "Output rows per thread block (0 = heuristic)">,
  Option<"threadsQ", "threads-q", "int64_t", "0",
         "Threads along the output columns of a block (0 = heuristic)">,
  Option<"chunkC", "chunk-c", "int64_t", "0",
         "Input channels staged in shared memory at a time (0 = heuristic)">
];

def ConvertSpconvToGPU : Pass<"convert-spconv-to-gpu", "::mlir::ModuleOp"> {
  let summary = "Lower spconv.conv2d to a placeholder-weight direct-convolution gpu.func";
  let description = [{
    Emits, for every `spconv.conv2d`, a `gpu.func` kernel in `gpu.module @spconv_kernels`:
    one thread block per (output tile, block of output channels, image); the block stages its
    input tile in workgroup memory (padding as zeros) and each thread computes
    outputs-per-thread columns x block-k channels with the loops over input channel, filter
    row, filter column and channel fully unrolled. Weights are placeholders (see
    docs/design.md), so the kernel depends only on shape, tiling and target; the conv op is
    tagged with `spconv.kernel` and the real weights stay on it for spconv-fold-weights.
  }];
  let options = SpconvTilingOptions;
  let dependentDialects = [
    "::mlir::gpu::GPUDialect", "::mlir::arith::ArithDialect", "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect", "::mlir::LLVM::LLVMDialect"
  ];
}

def ConvertSpconvToCPU : Pass<"convert-spconv-to-cpu", "::mlir::ModuleOp"> {
  let summary = "Lower spconv.conv2d to the same placeholder template, run serially on the host";
  let description = [{
    Emits the same unrolled template as convert-spconv-to-gpu as a `func.func` over memrefs:
    blocks and threads become sequential scf.for loops and each barrier-separated phase runs
    for all threads of a block before the next. Used to check the template and the fold pass
    numerically on machines without a GPU.
  }];
  let options = SpconvTilingOptions;
  let dependentDialects = [
    "::mlir::func::FuncDialect", "::mlir::arith::ArithDialect",
    "::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect", "::mlir::LLVM::LLVMDialect"
  ];
}

#endif // SPCONV_CONVERSION_PASSES_TD
