//===- Passes.td - spconv transformation passes ------------*- tablegen -*-===//
#ifndef SPCONV_TRANSFORMS_PASSES_TD
#define SPCONV_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def SpconvImportLinalg : Pass<"spconv-import-linalg"> {
  let summary = "Rewrite linalg.conv_2d_nchw_fchw with a constant filter into spconv.conv2d";
  let description = [{
    Matches `linalg.conv_2d_nchw_fchw` whose filter is an `arith.constant`, with an optional
    per-channel bias add and ReLU in the usual linalg form (`linalg.generic` or named
    elementwise ops consuming the conv result), and replaces the chain by one
    `spconv.conv2d`. Convs whose filter is not a constant are left untouched.
  }];
  let dependentDialects = ["::spconv::SpconvDialect", "::mlir::tensor::TensorDialect"];
}

def SpconvSparsityStats : Pass<"spconv-sparsity-stats"> {
  let summary = "Print shape, nnz, sparsity, useful FLOP and weight bytes of every conv";
  let description = [{
    For every `spconv.conv2d`, prints one line to the output stream (stderr by default) with
    the shape, the number of nonzero weights, the sparsity, the useful FLOP per image
    (2 * P * Q * nnz) and the bytes of dense weights. The IR is not changed.
  }];
  let options = [
    Option<"outputFile", "output", "std::string", "\"-\"",
           "Where to write the report ('-' for stderr)">
  ];
}

def SpconvFoldWeights : Pass<"spconv-fold-weights", "::mlir::ModuleOp"> {
  let summary = "Fold real weights into a lowered template and delete zero products";
  let description = [{
    Runs on LLVM-dialect IR produced from a placeholder template (functions marked
    `spconv.template`). Each placeholder FMA multiplicand becomes the real weight; where the
    weight is +0.0 or -0.0 the FMA is erased and its addend forwarded, and the loads and
    address arithmetic that became dead are erased too. Deleting 0*x drops NaN/Inf
    propagation from the input (0*Inf = NaN in IEEE); `strict-ieee` keeps those FMAs.
  }];
  let options = [
    Option<"strictIEEE", "strict-ieee", "bool", "false",
           "Keep FMAs whose weight is zero, so NaN/Inf inputs propagate as in IEEE arithmetic">
  ];
  let statistics = [
    Statistic<"numFMAsKept", "fmas-kept", "FMAs kept with a nonzero weight immediate">,
    Statistic<"numFMAsDeleted", "fmas-deleted", "FMAs deleted because their weight is zero">,
    Statistic<"numDeadOpsErased", "dead-ops-erased", "Loads and address ops erased once dead">
  ];
}

def SpconvCompileKernels : Pass<"spconv-compile-kernels", "::mlir::ModuleOp"> {
  let summary = "Lower every spconv.conv2d through the cached template and fold its weights";
  let description = [{
    For each `spconv.conv2d`: computes the template key (shape, strides, padding, dilation,
    tiling, target, compiler version), loads the lowered template from the in-memory or
    on-disk cache or builds it (convert-spconv-to-gpu + convert-gpu-to-nvvm) and stores it,
    then folds the conv's real weights into a copy (spconv-fold-weights). The result is one
    `gpu.module @spconv_kernels` holding an NVVM-dialect kernel per conv, each conv op tagged
    with `spconv.kernel`. The cache directory comes from `cache-dir`, else the environment
    variable SPCONV_CACHE_DIR, else $XDG_CACHE_HOME/spconv or ~/.cache/spconv; `cache-dir=none`
    disables the disk cache.
  }];
  let options = [
    Option<"chip", "chip", "std::string", "\"sm_90\"", "Target SM (e.g. sm_90)">,
    Option<"cacheDir", "cache-dir", "std::string", "\"\"",
           "Template cache directory ('' = default, 'none' = no disk cache)">,
    Option<"strictIEEE", "strict-ieee", "bool", "false",
           "Keep zero-weight FMAs (see spconv-fold-weights)">,
    Option<"blockK", "block-k", "int64_t", "0", "Output channels per thread (0 = heuristic)">,
    Option<"outputsPerThread", "outputs-per-thread", "int64_t", "0",
           "Output columns per thread (0 = heuristic)">,
    Option<"tileP", "tile-p", "int64_t", "0", "Output rows per thread block (0 = heuristic)">,
    Option<"threadsQ", "threads-q", "int64_t", "0",
           "Threads along the output columns of a block (0 = heuristic)">,
    Option<"chunkC", "chunk-c", "int64_t", "0",
           "Input channels staged in shared memory at a time (0 = heuristic)">
  ];
  let statistics = [
    Statistic<"numCacheHits", "cache-hits", "Templates reused from the cache">,
    Statistic<"numCacheMisses", "cache-misses", "Templates lowered from scratch">,
    Statistic<"numFMAsKept", "fmas-kept", "FMAs kept with a nonzero weight immediate">,
    Statistic<"numFMAsDeleted", "fmas-deleted", "FMAs deleted because their weight is zero">
  ];
  // The template is built in these dialects before it is lowered.
  let dependentDialects = [
    "::mlir::gpu::GPUDialect", "::mlir::NVVM::NVVMDialect", "::mlir::LLVM::LLVMDialect",
    "::mlir::arith::ArithDialect", "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect", "::mlir::cf::ControlFlowDialect"
  ];
}

#endif // SPCONV_TRANSFORMS_PASSES_TD
