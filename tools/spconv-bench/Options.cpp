//===- Options.cpp - spconv-bench command line ----------------------------===//

#include "Options.h"

#include <stdexcept>

namespace spconv {
namespace bench {

const char *kUsage = R"(usage: spconv-bench --launch k.json --module k.cubin|k.ptx --weights w.bin --out r.json [options]

Runs one spconv-generated convolution kernel, checks it against cuDNN FP32 on the same
random input, then times it against cuDNN FP32 (TF32 off), cuDNN with TF32 allowed and
cuSPARSE CSR SpMM over im2col (and, for f16/bf16 kernels, cuDNN in that type), and writes
the results as JSON plus a one-line summary.

Required:
  --launch FILE        launch sidecar written by spconv-translate (docs/launch-abi.md)
  --module FILE        the kernel image: cubin (ELF) or PTX, detected from its contents
  --weights FILE       raw little-endian f32 weights, KCRS, the ones compiled into the kernel
                       (the baselines use them; their nonzero count must match weights_nnz)
Options:
  --entry NAME         kernel to run (default: the first one in the sidecar)
  --bias FILE          raw f32 bias of length K (required when the sidecar says has_bias)
  --out FILE           result JSON (written on failure too, with "status" != "ok")
  --layer NAME         label copied into the JSON
  --sparsity P         label copied into the JSON (the measured sparsity is reported too)
  --compile-json FILE  JSON whose contents are copied into the result under "compile"
  --commit SHA         label copied into the JSON
  --batches N          timed batches per contender, median reported (default 7, min 5)
  --iters N            runs per batch (default: enough for a batch of >= 20 ms)
  --target-ms MS       batch duration used when --iters is not given (default 20)
  --seed N             seed of the random normal input (default 20261122; a residual
                       kernel's residual uses N + 1)
  --tolerance T        max relative error allowed vs cuDNN FP32 (default 1e-4)
  --no-graph           time plain stream launches instead of CUDA graph replays
  --cold-l2            also time every contender with the L2 emptied of it before each run
                       (a read of 4x the L2 size, timed alone and subtracted):
                       time_ms_cold_l2, as a layer runs inside a whole network
  --no-cusparse        skip the cuSPARSE contender
  --no-tf32            skip the cuDNN TF32 contender
  --no-half-baselines  half kernels: skip the cuDNN FP16/BF16 contenders
  --unverified         time the generated kernel even when it fails its check: for
                       experiments on deliberately altered code (a PTX with its staging
                       removed, say, to bound what staging costs). The failure is kept as
                       "verification_failure", "status" is "unverified" and the exit status
                       3, so no script that keeps "ok" results takes the time
  --error-terms T      half kernels: T in the stated bound below, instead of the sidecar's
                       numerics.error_terms (default when absent: C*R*S/groups + 2)
  --help               this text

Errors: max_rel_err = max|out - ref| / max(max|ref|, FLT_MIN) is the pass/fail number;
max_elem_rel_err = max |out - ref| / max(|ref|, 1e-3 max|ref|) and rel_l2_err are reported.
The generated kernel is checked before it is timed (errors.spconv) and again after its timed
launches (errors.spconv_after_timing: kernels with work queues keep state between launches).

Half-precision kernels (params with "dtype": "f16" or "bf16"): the random f32 input is
rounded to the kernel's type on the device (round to nearest even) and every contender,
the FP32 ones too, computes with those rounded values. The kernel gets the half input and
a half output filled with NaN; each output element must satisfy the stated bound
(docs/launch-abi.md, "numerics"):
  |y - ref| <= u * T * absref + T * tiny
with ref = cuDNN FP32 (TF32 off) of the rounded input, weights and bias, then the
activation; absref = the same convolution of |input| and |weights|, plus |bias|;
u = 2^-11 (f16) or 2^-8 (bf16), tiny = 2^-24 (f16) or 2^-133 (bf16). --tolerance does not
apply. errors.spconv gives violations, max_err_over_bound (the max of |y - ref| / bound,
<= 1 to pass), the worst element, max_rel_err, max_elem_rel_err and rel_l2_err. Then, beside
the FP32 contenders, cuDNN in the kernel's type (FP32 compute type, tensor cores allowed,
best of cudnnFindConvolutionForwardAlgorithm), in NCHW and in NHWC: cudnn_fp16_nchw,
cudnn_fp16_nhwc (cudnn_bf16_* for bf16; the NHWC one is timed without the layout changes of
its input and weights), and best_cudnn_half, the faster of the two, which the speedup
best_cudnn_half_over_ours is taken against. Their errors are reported against the same
bound (informative). useful_tflops and roofline_pct use the paired half FMA peak
(134 TFLOP/s) and 2-byte elements.

Residual kernels (a param with "role": "residual"; docs/launch-abi.md): the kernel gets a
third tensor, of the output's shape, dtype and layout, filled with random normal f32 from
--seed + 1 (rounded to the kernel's type for half kernels, in image pairs where the param
says so), in the sidecar's param order. It is checked against act(conv + bias + residual);
in half precision absref adds |residual|. The baselines stay conv + bias + activation: they
neither add the residual nor are timed with the add, which favours them, and their errors
are against the reference without it. The JSON then has "residual": true and, on each
baseline contender, "residual_included": false; io_bytes counts the residual's read.

Exit status: 0 ok, 1 the generated kernel failed verification, 2 any other error, 3 timed
unverified (--unverified) after its check failed.
)";

Options parseOptions(int argc, char **argv, bool &help) {
  Options o;
  help = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc)
        throw std::invalid_argument(a + " needs a value");
      return argv[++i];
    };
    auto number = [&](const std::string &v) {
      size_t used = 0;
      double d = std::stod(v, &used);
      if (used != v.size())
        throw std::invalid_argument(a + ": not a number: " + v);
      return d;
    };
    if (a == "--help" || a == "-h") help = true;
    else if (a == "--launch") o.launch = value();
    else if (a == "--module") o.module = value();
    else if (a == "--entry") o.entry = value();
    else if (a == "--weights") o.weights = value();
    else if (a == "--bias") o.bias = value();
    else if (a == "--out") o.out = value();
    else if (a == "--layer") o.layer = value();
    else if (a == "--sparsity") o.sparsity = number(value());
    else if (a == "--compile-json") o.compileJson = value();
    else if (a == "--commit") o.commit = value();
    else if (a == "--batches") o.batches = static_cast<int>(number(value()));
    else if (a == "--iters") o.iters = static_cast<int64_t>(number(value()));
    else if (a == "--target-ms") o.targetBatchMs = number(value());
    else if (a == "--seed") o.seed = static_cast<uint64_t>(number(value()));
    else if (a == "--tolerance") o.tolerance = number(value());
    else if (a == "--no-graph") o.graph = false;
    else if (a == "--cold-l2") o.coldL2 = true;
    else if (a == "--no-cusparse") o.skipCusparse = true;
    else if (a == "--no-tf32") o.skipTf32 = true;
    else if (a == "--no-half-baselines") o.skipHalfBaselines = true;
    else if (a == "--unverified") o.unverified = true;
    else if (a == "--error-terms") o.errorTerms = number(value());
    else throw std::invalid_argument("unknown option " + a);
  }
  if (help)
    return o;
  if (o.launch.empty() || o.module.empty() || o.weights.empty())
    throw std::invalid_argument("--launch, --module and --weights are required");
  if (o.errorTerms != -1 && !(o.errorTerms >= 1))
    throw std::invalid_argument("--error-terms must be at least 1");
  if (o.batches < 5)
    throw std::invalid_argument("--batches must be at least 5");
  return o;
}

} // namespace bench
} // namespace spconv
