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
         "Input channels staged in shared memory at a time (0 = heuristic)">,
  Option<"splitC", "split-c", "int64_t", "0",
         "Warp groups that split a block's chunks (0 = heuristic, 1 = no split)">,
  Option<"chunkLoop", "chunk-loop", "int64_t", "0",
         "How a group walks its chunks (0 = heuristic: a loop for 4 warp groups at block-k <= 16 with 2+ chunks each or any group with 8+ chunks, 1 = straight-line, 2 = loop)">,
  Option<"imagesPerBlock", "images-per-block", "int64_t", "0",
         "Images a thread block computes side by side, in lock-step (0 = heuristic: blocks of <= 2 warps pack up to 256 threads, 4-warp blocks of filters over 1x1 with 8+ channel blocks 2 images; 1 = one image; not with split-c > 1)">,
  Option<"blockOrder", "block-order", "int64_t", "0",
         "Grid order (0 = heuristic: 1; 1 = (tiles, channel blocks, images); 2 = (tiles, images, channel blocks): each wave runs fewer channel blocks' code, docs/design.md \"Instruction fetch\")">,
  Option<"asyncStaging", "async-staging", "int64_t", "0",
         "How chunks are staged (0 = heuristic: 2 for a chunk loop over packed images with an unstrided filter over 1x1, in half precision where its words lie whole (the image-pair layout), else 1; 1 = loads and stores through registers; 2 = cp.async copies, double-buffered in a chunk loop, in half precision of whole words only, docs/design.md \"Asynchronous staging\")">,
  Option<"columnOrder", "column-order", "int64_t", "0",
    "Which output columns a thread computes with outputs-per-thread > 1 (0 = heuristic: 1; 1 = strided by threads-q; 2 = adjacent, sharing their inputs along the filter width, docs/design.md \"Adjacent outputs\")">,
  Option<"directInputs", "direct-inputs", "int64_t", "0",
    "Where a thread's inputs come from (0 = heuristic; 1 = staged through shared memory; 2 = read directly into registers where the filter is 1x1 and a thread has one output, docs/design.md \"Direct inputs\")">,
  Option<"channelVector", "channel-vector", "int64_t", "0",
    "Input channels one shared load reads (0 = heuristic: 1; 1, 2 or 4: with 2 or 4 the staged tile interleaves the chunk's channels so a thread reads them with one ld.shared.v2/.v4; staged inputs with one output per thread only, docs/design.md \"Channel vectors\")">,
  Option<"loadAhead", "load-ahead", "int64_t", "0",
    "Global loads of the next straight-line chunk a thread issues before this chunk's FMAs (0 = none, or a tuning table entry's; 1-64 input words, held in registers through the FMAs; register staging of straight-line chunks only, docs/design.md \"Loads ahead\")">,
  Option<"dynamicShared", "dynamic-shared", "int64_t", "0",
    "Where the staged tiles live (0 = heuristic: 1; 1 = static shared memory, at most 48 KB; 2 = dynamic shared memory up to 227 KB, opted in by the runtimes, so a double-buffered chunk loop keeps whole chunks, docs/design.md \"Dynamic shared memory\")">,
  Option<"numSMs", "num-sms", "int64_t", "0",
    "SMs of the target GPU, over which the heuristic counts waves of blocks (0 = 132, an H100 SXM's or H200's; docs/design.md \"Target GPU\")">
];

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
