//===- Passes.td - spconv transformation passes ------------*- tablegen -*-===//
#ifndef SPCONV_TRANSFORMS_PASSES_TD
#define SPCONV_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"
include "spconv/Conversion/TilingOptions.td"

def SpconvImportLinalg : Pass<"spconv-import-linalg"> {
  let summary = "Rewrite linalg.conv_2d_nchw_fchw with a constant filter into spconv.conv2d";
  let description = [{
    Rewrites `linalg.conv_2d_nchw_fchw` and `linalg.depthwise_conv_2d_nchw_chw` (as
    `groups` = C, its C x R x S filter read as C x 1 x R x S) on static f32 tensors whose
    filter is an `arith.constant` (`dense` or `dense_resource`) into `spconv.conv2d`:
    - an input `tensor.pad` of constant 0.0 on H/W only becomes `padding`; any other pad
      stays and feeds the conv as its (already padded) input;
    - the init must be a `linalg.fill` (0.0: no bias; another constant: a splat bias) or a
      per-channel constant broadcast (`linalg.broadcast` with dimensions [0, 2, 3], or the
      equivalent `linalg.generic`), which becomes `bias`; other inits leave the conv alone.
    Then the sole user of a `spconv.conv2d` is fused into it when it is a per-channel
    constant bias add and/or a ReLU: a `linalg.generic` over (n, k, p, q) whose body is
    `arith.addf` with a tensor<K> constant read through (d0, d1, d2, d3) -> (d1), then
    `arith.maximumf`/`arith.maxnumf` against 0.0; or `linalg.add` with such a
    `linalg.broadcast`; or `linalg.max` against a zero fill or zero splat. The fused ReLU
    propagates NaN like `maximumf`, so fusing `maxnumf` changes the result for NaN inputs
    only. A sole user that is a `linalg.generic` computing a per-channel affine function of
    the conv result (an inference batch norm `(x - mean) * gamma / sqrt(var + eps) + beta`,
    a scale, a shift: any mix of `addf`/`subf`/`mulf`/`divf`/`negf` with per-channel
    tensor<K> constants, scalar constants, `math.sqrt`/`math.rsqrt`), optionally ending in
    `max(., 0)` (ReLU) or `min(max(., 0), 6)` (ReLU6), is folded into the weights (a[k] * w),
    the bias (a[k] * bias + b[k]) and the activation. Folding keeps the zero pattern of the
    weights exactly: zero weights are left as they are, and when a nonzero weight would round
    to zero or become non-finite the user is left unfused. Convs that spconv.conv2d cannot express (non-constant filter, other element
    types, dynamic shapes, outputs smaller than the full extent) are left untouched.
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

def SpconvUnrollTemplate : Pass<"spconv-unroll-template", "::mlir::ModuleOp"> {
  let summary = "Unroll the affine nests of spconv templates into straight-line FMAs";
  let description = [{
    Runs on the template functions (`gpu.func` or `func.func` marked `spconv.template` or
    `spconv.block_template`) that convert-spconv-to-affine writes, also after other affine
    transformations of their nests, and turns every affine.for into straight-line code with
    upstream `affine::loopUnrollFull`, outermost loop first (the channel loop's bounds depend
    on the input channel in grouped convs).

    The rule is that every loop of a template is fully unrolled:
    - *weight loops* (input channel cc, filter row r, filter column s, output channel kk:
      their induction variables reach an FMA's weight) because each FMA must carry its
      weight as an immediate: unrolled, the weight computation folds to the placeholder
      constant that spconv-fold-weights and the PTX-level fold replace;
    - *data loops* (o, the outputs of a thread: their induction variables only index the
      staged tile and the register arrays) because the private register arrays become SSA
      values only when every access has constant indices.
    A loop whose bounds are not constant once its enclosing loops are unrolled is an error.
    The unrolled bodies' constant arithmetic is folded, the register arrays (`memref.alloca`
    accessed only by affine.load/store in one block) are forwarded to SSA values and
    erased, so no accumulator touches memory, and any affine op left is lowered to arith.
    The result is what convert-spconv-to-gpu (or convert-spconv-to-cpu) emits.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect"
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

def SpconvChoosePairing : Pass<"spconv-choose-pairing", "::mlir::ModuleOp"> {
  let summary = "Give half-precision convs the output pairing a tuning table chose";
  let description = [{
    For every f16/bf16 `spconv.conv2d` without a `pairing` attribute: where an entry of the
    tuning table marked `choose_pairing` names its logical conv, type and accumulation and
    holds its count of nonzero weights in its `nnz` range, sets `pairing` to the entry's
    and tags the op `spconv.pairing_by` (the entry's source; the launch sidecar then says
    `"pairing_from": "tuning-table"`). Other convs are left as they are: an explicit
    `pairing` is the user's choice, and a conv already compiled (`spconv.kernel`) keeps the
    pairing its kernel was built with. Without an entry the compiler's heuristic still
    chooses (`choosePairing`: images, else columns, else rows).

    The pairing is part of the kernel's word shape, which everything that lowers or
    describes a conv derives from the op (`ConvShape::fromOp`): deciding it here, on the op,
    before any of them runs keeps them in agreement. spconv-translate runs this pass at the
    start of the PTX-level fold with the table of `--tuning-table` (docs/design.md, "Tuning
    table"); in spconv-opt it makes the choice visible, or fixes it ahead of another flow.
  }];
  let options = [
    Option<"tuningTable", "tuning-table", "std::string", "\"\"",
           "The tuning table ('' = $SPCONV_TUNING_TABLE, 'none' = no table: nothing changes)">
  ];
  let statistics = [
    Statistic<"numChosen", "pairings-chosen", "Convs given the pairing of a table entry">
  ];
}

def SpconvExternDynamicShared
    : Pass<"spconv-extern-dynamic-shared", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Declare dynamic shared memory external after convert-gpu-to-nvvm";
  let description = [{
    `convert-gpu-to-nvvm` lowers `gpu.dynamic_shared_memory` to an internal zero-length
    `llvm.mlir.global` in the shared address space. NVPTX demotes such a global into the one
    function that uses it, as a one-byte static `.shared` variable, and a kernel with
    `--dynamic-shared=2` (docs/design.md, "Dynamic shared memory") then addresses its tiles
    past it. This pass makes the global external, which NVPTX declares as the launch's
    dynamic shared memory (`.extern .shared .align 16 .b8 NAME[];`). Run it after
    `convert-gpu-to-nvvm` in a pipeline of one's own that lowers
    `convert-spconv-to-affine`'s kernels; spconv-translate applies the same rewrite itself.
  }];
  let statistics = [
    Statistic<"numChanged", "globals-made-external", "Dynamic shared memory globals made external">
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
  let options = !listconcat([
    Option<"chip", "chip", "std::string", "\"sm_90\"", "Target SM (e.g. sm_90)">,
    Option<"optLevel", "opt-level", "int", "3",
           "LLVM optimisation level of the NVVM target attached to the kernels (0-3)">,
    Option<"minBlocksPerSM", "min-blocks-per-sm", "int64_t", "0",
           "Blocks per SM ptxas must fit (nvvm.minctasm: caps registers per thread so that "
           "enough warps hide latency; 0 = heuristic, -1 = no cap)">,
    Option<"cacheDir", "cache-dir", "std::string", "\"\"",
           "Template cache directory ('' = default, 'none' = no disk cache)">,
    Option<"strictIEEE", "strict-ieee", "bool", "false",
           "Keep zero-weight FMAs (see spconv-fold-weights)">,
    Option<"reportCache", "report-cache", "bool", "false",
           "Emit a remark per conv saying whether its template came from the cache">
  ], SpconvTilingOptions);
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
