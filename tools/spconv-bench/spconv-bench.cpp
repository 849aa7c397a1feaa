//===- spconv-bench.cpp - Verify and time one generated convolution -------===//
//
// Order matters: the generated kernel is verified against cuDNN FP32 before anything is
// timed, and a verification failure ends the run with an error (it is never a table
// row). See Options.cpp for the flags and docs/launch-abi.md for the kernel contract.
//
//===----------------------------------------------------------------------===//

#include "Baselines.h"
#include "CudaCheck.h"
#include "DeviceKernels.h"
#include "HalfBaselines.h"
#include "HalfKernels.h"
#include "Options.h"
#include "Timing.h"

#include "spconv/Runtime/Json.h"
#include "spconv/Runtime/Runtime.h"

#include <cuda_runtime.h>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

using namespace spconv;
using namespace spconv::bench;
using json::Value;

namespace {

// H100 SXM datasheet numbers the project's sparse roofline is defined with.
constexpr double kPeakFp32Flops = 67e12;
// Half kernels: fma.rn.f16x2/bf16x2 issue at the FP32 FMA rate with two FMAs each.
constexpr double kPeakHalfx2Flops = 134e12;
constexpr double kPeakBytesPerS = 3.35e12;

struct VerificationFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::vector<float> readFloats(const std::string &path, int64_t expected, const char *what) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in)
    throw std::runtime_error(std::string("cannot open ") + what + " file " + path);
  std::streamsize bytes = in.tellg();
  if (bytes != expected * 4)
    throw std::runtime_error(std::string(what) + " file " + path + " has " +
                             std::to_string(bytes) + " bytes, expected " +
                             std::to_string(expected * 4) + " (" + std::to_string(expected) +
                             " f32)");
  std::vector<float> v(expected);
  in.seekg(0);
  in.read(reinterpret_cast<char *>(v.data()), bytes);
  return v;
}

template <typename T> struct DevBuffer {
  T *p = nullptr;
  int64_t n = 0;
  explicit DevBuffer(int64_t count) : n(count) {
    CUDART_CHECK(cudaMalloc(&p, std::max<int64_t>(count, 1) * sizeof(T)));
  }
  ~DevBuffer() { cudaFree(p); }
  DevBuffer(const DevBuffer &) = delete;
  DevBuffer &operator=(const DevBuffer &) = delete;
};
using DevArray = DevBuffer<float>;
// Half data as raw 16-bit words (HalfKernels.h).
using DevHalf = DevBuffer<uint16_t>;

Value errorJson(const CompareResult &r, double tolerance) {
  Value v;
  v.set("within_tolerance", r.nonFinite == 0 && r.maxRel() <= tolerance);
  v.set("max_rel_err", r.maxRel());
  v.set("max_elem_rel_err", r.maxElemRel);
  v.set("rel_l2_err", r.relL2);
  v.set("max_abs_err", r.maxAbsDiff);
  v.set("max_abs_ref", r.maxAbsRef);
  v.set("non_finite", static_cast<uint64_t>(r.nonFinite));
  return v;
}

// A half output checked against the stated bound (HalfKernels.h).
Value halfErrorJson(const HalfCheckResult &r) {
  Value v;
  v.set("within_bound", r.ok());
  v.set("elements", r.elements);
  v.set("violations", static_cast<uint64_t>(r.violations));
  v.set("non_finite", static_cast<uint64_t>(r.nonFinite));
  // Non-finite numbers are written as null: non_finite says why.
  v.set("max_err_over_bound", r.maxErrOverBound);
  if (r.worstIndex >= 0) {
    Value w;
    w.set("index", r.worstIndex);
    w.set("out", r.worstY);
    w.set("ref", r.worstRef);
    w.set("absref", r.worstAbsRef);
    w.set("bound", r.worstBound);
    v.set("worst", w);
  }
  v.set("first_violation", r.firstViolation >= 0 ? Value(r.firstViolation) : Value());
  v.set("max_rel_err", r.maxRel());
  v.set("max_elem_rel_err", r.maxElemRel);
  v.set("rel_l2_err", r.relL2);
  v.set("max_abs_err", r.maxAbsDiff);
  v.set("max_abs_ref", r.maxAbsRef);
  return v;
}

Value timingJson(const Timing &t, double usefulFlop, double rooflineMs) {
  Value v;
  v.set("time_ms", t.medianMs);
  v.set("min_ms", t.minMs);
  v.set("max_ms", t.maxMs);
  Value batches{json::Array{}};
  for (double b : t.batchMs)
    batches.push(b);
  v.set("batch_ms", batches);
  v.set("iters_per_batch", t.itersPerBatch);
  v.set("method", t.method);
  v.set("useful_tflops", usefulFlop / (t.medianMs * 1e-3) / 1e12);
  v.set("roofline_pct", 100.0 * rooflineMs / t.medianMs);
  if (t.hasCold) {
    v.set("time_ms_cold_l2", t.coldMedianMs);
    v.set("cold_l2_read_ms", t.coldReadMs);
  }
  return v;
}

Value convJson(const runtime::ConvDesc &c) {
  Value v;
  const std::pair<const char *, int64_t> dims[] = {{"N", c.N}, {"C", c.C}, {"H", c.H},
                                                   {"W", c.W}, {"K", c.K}, {"R", c.R},
                                                   {"S", c.S}, {"P", c.P}, {"Q", c.Q}};
  for (const auto &kv : dims)
    v.set(kv.first, kv.second);
  v.set("stride", Value(json::Array{c.stride[0], c.stride[1]}));
  v.set("padding", Value(json::Array{c.padding[0], c.padding[1], c.padding[2], c.padding[3]}));
  v.set("dilation", Value(json::Array{c.dilation[0], c.dilation[1]}));
  v.set("groups", c.groups);
  v.set("activation", c.activation);
  v.set("has_bias", c.hasBias);
  return v;
}

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string t = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    t += (i ? ", " : "") + std::to_string(shape[i]);
  return t + "]";
}

// Whether the kernel adds a residual (spconv.conv2d's `residual`: a param with role
// "residual", the output's shape, dtype and layout; docs/launch-abi.md). The sidecar's
// conv.has_residual, where stated, must agree: checked against the wrong reference, a
// kernel would fail (or pass) for a reason that is not its own.
bool kernelHasResidual(const runtime::KernelDesc &kd) {
  const runtime::ConvDesc &c = kd.conv;
  int count = 0;
  for (const auto &p : kd.params) {
    if (p.role != "residual")
      continue;
    ++count;
    const std::vector<int64_t> nkpq{c.N, c.K, c.P, c.Q};
    if (p.shape != nkpq)
      throw std::runtime_error("param '" + p.name + "' (residual) has shape " +
                               shapeText(p.shape) + ", the conv output " + shapeText(nkpq));
  }
  if (count > 1)
    throw std::runtime_error("kernel '" + kd.entry + "' has " + std::to_string(count) +
                             " residual params: at most one is supported");
  if (const Value *conv = kd.raw.find("conv"))
    if (const Value *h = conv->find("has_residual"); h && h->asBool() != (count == 1))
      throw std::runtime_error(std::string("sidecar conv.has_residual is ") +
                               (h->asBool() ? "true" : "false") + " but the kernel has " +
                               (count ? "a" : "no") + " residual param");
  return count == 1;
}

// y = act(conv(x, w) + bias + residual): the conv by cuDNN FP32, FMA math, implicit GEMM (a
// plain sum, no Winograd/FFT error); bias (length K) and residual (NKPQ, as y) may be null.
// The epilogue runs apart from the conv so that the residual lands between the bias and the
// activation, where the kernel adds it; with no residual, the same two steps as a
// CudnnConv of `c` with its epilogue.
void referenceConv(cudnnHandle_t dnn, const runtime::ConvDesc &c, const float *x,
                   const float *w, const float *bias, const float *residual, float *y,
                   cudaStream_t s) {
  runtime::ConvDesc plain = c;
  plain.activation = "none";
  plain.hasBias = false;
  CudnnConv conv(dnn, plain, CUDNN_FMA_MATH, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, x, w,
                 nullptr, y);
  // Poisoned like every output: compare() and checkHalf reject a reference element nobody
  // wrote.
  fillNaN(y, c.N * c.K * c.P * c.Q, s);
  conv.run(s);
  if (bias || residual || c.activation != "none")
    biasActivation(y, bias, residual, c.N, c.K, c.P * c.Q, c.activation, s);
  CUDART_CHECK(cudaStreamSynchronize(s));
}

// The NVIDIA kernel module's version (e.g. "580.159.04"); cuDriverGetVersion only
// gives the CUDA API level the driver supports.
std::string kernelDriverVersion() {
  std::ifstream f("/proc/driver/nvidia/version");
  std::string line, word;
  std::getline(f, line);
  std::istringstream words(line);
  // "NVRM version: NVIDIA UNIX [Open] Kernel Module [for x86_64]  580.159.04  Release ..."
  while (words >> word)
    if (word.find('.') != std::string::npos &&
        word.find_first_not_of("0123456789.") == std::string::npos)
      return word;
  return "unknown";
}

void writeReport(const Options &o, const Value &report) {
  if (o.out.empty())
    return;
  std::ofstream f(o.out);
  f << report.dump(2) << "\n";
  if (!f)
    std::cerr << "spconv-bench: cannot write " << o.out << "\n";
}

// Everything after option parsing; fills `report` as it goes so a failure still
// leaves what was learned before it.
void runBench(const Options &o, Value &report) {
  runtime::LaunchFile lf = runtime::loadLaunchFile(o.launch);
  const runtime::KernelDesc &kd = lf.kernel(o.entry);
  report.set("entry", kd.entry);
  if (!kd.hasConv)
    throw std::runtime_error("kernel '" + kd.entry + "' has no \"conv\" description: nothing "
                             "to check it against");
  const runtime::ConvDesc &c = kd.conv;
  report.set("N", c.N);
  report.set("shape", convJson(c));
  report.set("grid", Value(json::Array{kd.grid[0] * 1.0, kd.grid[1] * 1.0, kd.grid[2] * 1.0}));
  report.set("block", Value(json::Array{kd.block[0] * 1.0, kd.block[1] * 1.0, kd.block[2] * 1.0}));
  if (!kd.tiling.isNull())
    report.set("tiling", kd.tiling);

  // A residual kernel: result = act(conv + bias + residual), with a third pointer.
  const bool hasResidual = kernelHasResidual(kd);
  if (hasResidual) {
    report.set("residual", true);
    report.set("residual_note",
               "the kernel adds a random normal residual (--seed + 1) before its activation; "
               "the baselines compute conv + bias + activation without it (residual_included "
               "false: the add is not timed for them, which favours them) and their errors "
               "are against a reference without it");
  }

  // Precision: the tensor params' dtype (f32, or a half kernel: HalfKernels.h).
  std::string dtype;
  // How the kernel stores its input, residual and output (docs/launch-abi.md): the bench
  // fills and reads those buffers in that layout and checks the logical NCHW tensors.
  HalfLayout inLayout = HalfLayout::NCHW, resLayout = HalfLayout::NCHW,
             outLayout = HalfLayout::NCHW;
  for (const auto &p : kd.params) {
    if (p.role != "input" && p.role != "residual" && p.role != "output")
      continue;
    if (p.layout == "image_pairs")
      (p.role == "input" ? inLayout : p.role == "residual" ? resLayout : outLayout) =
          HalfLayout::ImagePairs;
    if (!dtype.empty() && p.dtype != dtype)
      throw std::runtime_error("param '" + p.name + "' has dtype '" + p.dtype + "', another '" +
                               dtype + "': mixed precisions are not supported");
    dtype = p.dtype;
  }
  if (dtype.empty())
    dtype = "f32";
  HalfType ht = HalfType::F16;
  const bool half = dtype != "f32";
  if (half && !parseHalfType(dtype, ht))
    throw std::runtime_error("unsupported kernel dtype '" + dtype + "'");
  report.set("dtype", dtype);
  // How the kernel stores its tensors (all params alike today; docs/launch-abi.md).
  if (inLayout == HalfLayout::ImagePairs || resLayout == HalfLayout::ImagePairs ||
      outLayout == HalfLayout::ImagePairs)
    report.set("layout", "image_pairs");
  HalfBound hb;
  if (half) {
    // The stated bound: the sidecar's "numerics" (docs/launch-abi.md), else the default.
    hb.unitRoundoff = halfUnitRoundoff(ht);
    hb.tiny = halfTiny(ht);
    hb.errorTerms = double(c.C * c.R * c.S / c.groups + 2);
    Value numerics;
    numerics.set("dtype", dtype);
    std::string source = "default: C*R*S/groups + 2 (the sidecar has no numerics)";
    if (const Value *nm = kd.raw.find("numerics")) {
      if (const Value *d = nm->find("dtype"); d && d->asString() != dtype)
        throw std::runtime_error("sidecar numerics.dtype '" + d->asString() +
                                 "' differs from the params' '" + dtype + "'");
      if (const Value *u = nm->find("unit_roundoff"); u && u->asNumber() != hb.unitRoundoff)
        throw std::runtime_error("sidecar numerics.unit_roundoff " +
                                 std::to_string(u->asNumber()) + " is not " + dtype + "'s " +
                                 std::to_string(hb.unitRoundoff));
      if (const Value *t = nm->find("tiny"); t && t->asNumber() != hb.tiny)
        throw std::runtime_error("sidecar numerics.tiny " + std::to_string(t->asNumber()) +
                                 " is not " + dtype + "'s subnormal step");
      for (const char *key : {"accumulate", "pairing"})
        if (const Value *v = nm->find(key))
          numerics.set(key, *v);
      hb.errorTerms = nm->at("error_terms").asNumber();
      if (!(hb.errorTerms >= 1))
        throw std::runtime_error("sidecar numerics.error_terms must be at least 1");
      source = "sidecar";
    }
    if (o.errorTerms > 0) {
      hb.errorTerms = o.errorTerms;
      source = "--error-terms";
    }
    numerics.set("unit_roundoff", hb.unitRoundoff);
    numerics.set("error_terms", hb.errorTerms);
    numerics.set("tiny", hb.tiny);
    numerics.set("error_terms_from", source);
    numerics.set("bound", "|y - ref| <= unit_roundoff * error_terms * absref + error_terms * "
                          "tiny, every output element");
    numerics.set("input", "random normal f32 (--seed), rounded to " + dtype +
                              " on the device (RNE); every contender computes with the "
                              "rounded values");
    if (hasResidual) {
      numerics.set("residual", "random normal f32 (--seed + 1), rounded to " + dtype +
                                   " on the device (RNE); the reference adds the rounded "
                                   "values");
      numerics.set("reference", "cuDNN FP32 (FMA math, implicit GEMM) of the rounded input, "
                                "weights and bias, plus the rounded residual, then the "
                                "activation; absref: the same of |input|, |weights|, plus "
                                "|bias| and |residual|");
    } else {
      numerics.set("reference", "cuDNN FP32 (FMA math, implicit GEMM) of the rounded input, "
                                "weights and bias, then the activation; absref: the same of "
                                "|input|, |weights|, plus |bias|");
    }
    report.set("numerics", numerics);
  }

  // Weights: the baselines compute with exactly what was compiled into the kernel.
  std::vector<float> w = readFloats(o.weights, c.weightCount(), "weights");
  int64_t nnz = 0;
  for (float x : w)
    nnz += x != 0.0f;
  report.set("nnz", nnz);
  report.set("weights_total", c.weightCount());
  report.set("measured_sparsity", 1.0 - double(nnz) / double(c.weightCount()));
  if (kd.weightsNnz >= 0 && kd.weightsNnz != nnz)
    throw std::runtime_error("weights file has " + std::to_string(nnz) +
                             " nonzeros but the kernel folded " + std::to_string(kd.weightsNnz) +
                             ": wrong --weights for this kernel?");
  std::vector<float> bias;
  if (c.hasBias) {
    if (o.bias.empty())
      throw std::runtime_error("the kernel has a bias: pass it with --bias");
    bias = readFloats(o.bias, c.K, "bias");
  }

  const double usefulFlop = 2.0 * c.N * c.P * c.Q * double(nnz);
  const double elemBytes = half ? 2.0 : 4.0;
  const double peakFlops = half ? kPeakHalfx2Flops : kPeakFp32Flops;
  // A residual kernel reads one more tensor of the output's size.
  const double ioBytes =
      elemBytes * (c.N * c.C * c.H * c.W + c.N * c.K * c.P * c.Q * (hasResidual ? 2 : 1));
  const double rooflineMs = 1e3 * std::max(usefulFlop / peakFlops, ioBytes / kPeakBytesPerS);
  report.set("roofline_peak_flops", peakFlops);
  report.set("useful_flop", usefulFlop);
  report.set("io_bytes", ioBytes);
  report.set("roofline_ms", rooflineMs);

  // Device and library identity. The Context retains the primary context, which the
  // CUDA runtime (and so cuDNN/cuSPARSE) then uses too.
  runtime::Context ctx(0);
  CUDART_CHECK(cudaSetDevice(0));
  Value dev;
  dev.set("name", ctx.deviceName());
  dev.set("compute_capability", ctx.computeCapability());
  // What a tuning table made from these runs records as its "sms" (bench/tuning_table.py):
  // the SM count the compiler's heuristic then tiles for (--num-sms).
  int sms = 0;
  CUDART_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  dev.set("sms", sms);
  dev.set("driver_version", ctx.driverVersion());
  dev.set("driver", kernelDriverVersion());
  int rtv = 0;
  CUDART_CHECK(cudaRuntimeGetVersion(&rtv));
  dev.set("cuda_runtime_version", rtv);
  dev.set("cudnn_version", static_cast<uint64_t>(cudnnGetVersion()));
  int spv = 0;
  cusparseGetProperty(MAJOR_VERSION, &spv);
  int spmin = 0;
  cusparseGetProperty(MINOR_VERSION, &spmin);
  dev.set("cusparse_version", std::to_string(spv) + "." + std::to_string(spmin));
  report.set("device", dev);

  cudaStream_t stream;
  CUDART_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

  runtime::Module mod = runtime::Module::loadFile(o.module);
  runtime::Kernel kernel(mod, kd);
  Value attrs;
  attrs.set("registers", kernel.attribute(CU_FUNC_ATTRIBUTE_NUM_REGS));
  attrs.set("static_shared_bytes", kernel.attribute(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES));
  attrs.set("local_bytes", kernel.attribute(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES));
  attrs.set("max_threads_per_block", kernel.attribute(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK));
  report.set("kernel_attributes", attrs);

  const int64_t inCount = c.N * c.C * c.H * c.W, outCount = c.N * c.K * c.P * c.Q;
  DevArray x(inCount), yOurs(half ? 1 : outCount), yRef(outCount), yOther(outCount),
      wDev(w.size()), bDev(std::max<size_t>(bias.size(), 1));
  CUDART_CHECK(cudaMemcpy(wDev.p, w.data(), w.size() * 4, cudaMemcpyHostToDevice));
  if (!bias.empty())
    CUDART_CHECK(cudaMemcpy(bDev.p, bias.data(), bias.size() * 4, cudaMemcpyHostToDevice));
  const float *biasPtr = bias.empty() ? nullptr : bDev.p;
  fillNormal(x.p, inCount, o.seed, stream);
  // The residual: random normal like the input, from the next seed (another draw), kept in
  // f32 NCHW for the references (rounded in place below for half kernels, as x is).
  DevArray res(hasResidual ? outCount : 0);
  if (hasResidual)
    fillNormal(res.p, outCount, o.seed + 1, stream);

  // Half kernels: the input rounded in place (x then holds the rounded values as f32, for
  // every contender), its half copy for the kernel, and the weights and bias rounded as the
  // compiler rounds them (as f32 for the reference, as half for the cuDNN half contenders).
  const int64_t hIn = half ? inCount : 0, hOut = half ? outCount : 0;
  DevHalf xh(hIn), yh(hOut), wh(half ? w.size() : 0);
  DevArray wr(half ? w.size() : 0), br(half ? bias.size() : 0), yRefH(hOut), yAbs(hOut);
  const float *biasRoundedPtr = nullptr;
  // The input as the kernel stores it, where that is not NCHW.
  DevHalf xhStored(inLayout == HalfLayout::NCHW ? 0 : hIn);
  // The residual's half copy, and as the kernel stores it where that is not NCHW.
  const int64_t hRes = hasResidual ? hOut : 0;
  DevHalf resh(hRes), reshStored(resLayout == HalfLayout::NCHW ? 0 : hRes);
  if (half) {
    roundToHalf(x.p, xh.p, x.p, inCount, ht, stream);
    if (inLayout == HalfLayout::ImagePairs)
      nchwToImagePairsHalf(xh.p, xhStored.p, c.N, c.C * c.H * c.W, stream);
    if (hasResidual) {
      roundToHalf(res.p, resh.p, res.p, outCount, ht, stream);
      if (resLayout == HalfLayout::ImagePairs)
        nchwToImagePairsHalf(resh.p, reshStored.p, c.N, c.K * c.P * c.Q, stream);
    }
    roundToHalf(wDev.p, wh.p, wr.p, w.size(), ht, stream);
    DevHalf bh(bias.size());
    if (!bias.empty()) {
      roundToHalf(bDev.p, bh.p, br.p, bias.size(), ht, stream);
      biasRoundedPtr = br.p;
    }
    CUDART_CHECK(cudaStreamSynchronize(stream));
    // The compiler refuses a nonzero weight that rounds to 0 or overflows: so does the bench.
    auto checkRounded = [&](const std::vector<float> &orig, const float *dev, const char *what) {
      std::vector<float> r(orig.size());
      if (!r.empty())
        CUDART_CHECK(cudaMemcpy(r.data(), dev, r.size() * 4, cudaMemcpyDeviceToHost));
      for (size_t i = 0; i < r.size(); ++i)
        if (orig[i] != 0.0f && (r[i] == 0.0f || !std::isfinite(r[i])))
          throw std::runtime_error(std::string(what) + " " + std::to_string(i) + " (" +
                                   std::to_string(orig[i]) + ") rounds to " +
                                   std::to_string(r[i]) + " in " + dtype);
    };
    checkRounded(w, wr.p, "weight");
    checkRounded(bias, br.p, "bias");
  }

  // Kernel arguments follow the sidecar's parameter order and roles.
  std::vector<CUdeviceptr> args;
  for (const auto &p : kd.params) {
    if (p.role == "input") {
      if (p.numElements() != inCount)
        throw std::runtime_error("param '" + p.name + "' has " + std::to_string(p.numElements()) +
                                 " elements, the conv input " + std::to_string(inCount));
      const uint16_t *xin = inLayout == HalfLayout::NCHW ? xh.p : xhStored.p;
      args.push_back(half ? reinterpret_cast<CUdeviceptr>(xin)
                          : reinterpret_cast<CUdeviceptr>(x.p));
    } else if (p.role == "residual") {
      // Its shape was checked against the conv output (kernelHasResidual).
      const uint16_t *rin = resLayout == HalfLayout::NCHW ? resh.p : reshStored.p;
      args.push_back(half ? reinterpret_cast<CUdeviceptr>(rin)
                          : reinterpret_cast<CUdeviceptr>(res.p));
    } else if (p.role == "output") {
      if (p.numElements() != outCount)
        throw std::runtime_error("param '" + p.name + "' has " + std::to_string(p.numElements()) +
                                 " elements, the conv output " + std::to_string(outCount));
      args.push_back(half ? reinterpret_cast<CUdeviceptr>(yh.p)
                          : reinterpret_cast<CUdeviceptr>(yOurs.p));
    } else {
      throw std::runtime_error("param '" + p.name + "' has unsupported role '" + p.role + "'");
    }
  }
  auto runOurs = [&](cudaStream_t s) { kernel.launch(args, reinterpret_cast<CUstream>(s)); };

  // Reference: cuDNN FP32, FMA math, implicit GEMM (a plain sum, no Winograd/FFT error).
  cudnnHandle_t dnn;
  {
    cudnnStatus_t st = cudnnCreate(&dnn);
    if (st != CUDNN_STATUS_SUCCESS)
      throw std::runtime_error(std::string("cudnnCreate failed: ") + cudnnGetErrorString(st));
  }
  std::unique_ptr<cudnnContext, decltype(&cudnnDestroy)> dnnGuard(dnn, cudnnDestroy);
  // yRef: of x and the weights and bias as given. Half kernels: yRefH, of the rounded weights
  // and bias, and yAbs (absref), of the absolute values, without the activation. `residual`
  // (f32 NCHW, the values the kernel gets; or null) is added before the activation, and its
  // absolute value to absref: the bound then covers the kernel's rounding of the add.
  auto computeReferences = [&](const float *residual) {
    referenceConv(dnn, c, x.p, wDev.p, biasPtr, residual, yRef.p, stream);
    if (!half)
      return;
    referenceConv(dnn, c, x.p, wr.p, biasRoundedPtr, residual, yRefH.p, stream);
    // absref: |x| * |w| + |bias| + |residual|, no activation.
    DevArray xAbs(inCount), wAbs(w.size()), bAbs(bias.size()), resAbs(residual ? outCount : 0);
    absolute(x.p, xAbs.p, inCount, stream);
    absolute(wr.p, wAbs.p, w.size(), stream);
    if (!bias.empty())
      absolute(br.p, bAbs.p, bias.size(), stream);
    if (residual)
      absolute(residual, resAbs.p, outCount, stream);
    runtime::ConvDesc ca = c;
    ca.activation = "none";
    referenceConv(dnn, ca, xAbs.p, wAbs.p, bias.empty() ? nullptr : bAbs.p,
                  residual ? resAbs.p : nullptr, yAbs.p, stream);
  };
  computeReferences(hasResidual ? res.p : nullptr);

  // Verify the generated kernel before any timing, and again after every timed launch: a
  // kernel that keeps state between launches (the work queues of --sm-affinity=2) must leave
  // it ready for the next one. `key` names the check in the report's errors; the first
  // (`when` empty) also gives max_rel_err.
  Value errors, contenders, times, speedup;
  auto verifyOursHalf = [&](const char *key, const std::string &when) {
    fillNaNHalf(yh.p, outCount, ht, stream);
    runOurs(stream);
    CUDART_CHECK(cudaStreamSynchronize(stream));
    HalfCheckResult r = checkHalf(yh.p, outLayout, ht, yRefH.p, yAbs.p, c.N, c.K,
                                  c.P * c.Q, hb, stream);
    errors.set(key, halfErrorJson(r));
    report.set("errors", errors);
    if (when.empty()) {
      report.set("max_rel_err", r.maxRel());
      report.set("max_err_over_bound", r.maxErrOverBound);
      report.set("rel_l2_err", r.relL2);
    }
    if (!r.ok()) {
      std::string why = std::to_string(r.violations) + " of " + std::to_string(r.elements) +
                        " output elements outside the stated bound";
      if (r.nonFinite)
        why += " (" + std::to_string(r.nonFinite) + " unwritten or non-finite)";
      why += "; max |out - ref| / bound " + std::to_string(r.maxErrOverBound) + " at " +
             std::to_string(r.worstIndex) + " (out " + std::to_string(r.worstY) + ", ref " +
             std::to_string(r.worstRef) + ", bound " + std::to_string(r.worstBound) + ")";
      throw VerificationFailure("generated " + dtype + " kernel disagrees with cuDNN FP32" +
                                when + ": " + why);
    }
  };
  auto verifyOursOnce = [&](const char *key, const std::string &when) {
    if (half)
      return verifyOursHalf(key, when);
    fillNaN(yOurs.p, outCount, stream);
    runOurs(stream);
    CUDART_CHECK(cudaStreamSynchronize(stream));
    CompareResult r = compare(yOurs.p, yRef.p, outCount, stream);
    errors.set(key, errorJson(r, o.tolerance));
    report.set("errors", errors);
    if (when.empty())
      report.set("max_rel_err", r.maxRel());
    if (r.nonFinite || !(r.maxRel() <= o.tolerance)) {
      std::string why = r.nonFinite ? std::to_string(r.nonFinite) +
                                          " output elements unwritten or non-finite"
                                    : "max relative error " + std::to_string(r.maxRel()) +
                                          " > " + std::to_string(o.tolerance);
      throw VerificationFailure("generated kernel disagrees with cuDNN FP32" + when + ": " +
                                why);
    }
  };
  // --unverified: altered code (a speed-of-light experiment) is timed all the same; the first
  // failure is kept and main() reports the run as "unverified", never "ok".
  auto verifyOurs = [&](const char *key, const std::string &when) {
    try {
      verifyOursOnce(key, when);
    } catch (const VerificationFailure &e) {
      if (!o.unverified)
        throw;
      if (!report.find("verification_failure"))
        report.set("verification_failure", e.what());
    }
  };
  verifyOurs("spconv", "");

  TimingOptions topt;
  topt.batches = o.batches;
  topt.iters = o.iters;
  topt.targetBatchMs = o.targetBatchMs;
  topt.useGraph = o.graph;
  if (o.coldL2) {
    int device = 0, l2 = 0;
    CUDART_CHECK(cudaGetDevice(&device));
    CUDART_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
    topt.coldL2Bytes = 4 * static_cast<int64_t>(l2);
  }

  Timing tOurs = timeRuns(runOurs, stream, topt);
  verifyOurs("spconv_after_timing", " after its timed launches");
  // The baselines compute conv + bias + activation without the residual (not timed with the
  // add, which favours them): their errors, informative, are against references without
  // it. Nothing checks the generated kernel after this.
  if (hasResidual)
    computeReferences(nullptr);
  contenders.set("spconv", timingJson(tOurs, usefulFlop, rooflineMs));
  times.set("spconv", tOurs.medianMs);

  // Each baseline: build, run once into a poisoned buffer, check, then time.
  auto baseline = [&](const std::string &name, const std::function<void(cudaStream_t)> &run,
                      Value info) {
    fillNaN(yOther.p, outCount, stream);
    run(stream);
    CUDART_CHECK(cudaStreamSynchronize(stream));
    CompareResult r = compare(yOther.p, yRef.p, outCount, stream);
    errors.set(name, errorJson(r, o.tolerance));
    Timing t = timeRuns(run, stream, topt);
    Value v = timingJson(t, usefulFlop, rooflineMs);
    for (const auto &kv : info.asObject())
      v.set(kv.first, kv.second);
    if (hasResidual)
      v.set("residual_included", false);
    contenders.set(name, v);
    times.set(name, t.medianMs);
    speedup.set(name, t.medianMs / tOurs.medianMs);
  };
  auto skipped = [&](const std::string &name, const std::string &why) {
    Value v;
    v.set("skipped", why);
    contenders.set(name, v);
    times.set(name, Value());
    speedup.set(name, Value());
    std::cerr << "spconv-bench: " << name << " skipped: " << why << "\n";
  };

  {
    CudnnConv fp32(dnn, c, CUDNN_FMA_MATH, -1, x.p, wDev.p, biasPtr, yOther.p);
    Value info;
    info.set("algo", fp32.algoName());
    info.set("math", fp32.mathName());
    info.set("workspace_bytes", static_cast<uint64_t>(fp32.workspaceBytes()));
    baseline("cudnn_fp32", [&](cudaStream_t s) { fp32.run(s); }, info);
  }
  if (o.skipTf32) {
    skipped("cudnn_tf32", "--no-tf32");
  } else {
    // DEFAULT_MATH lets cuDNN use TF32 tensor cores for FP32 data (what frameworks do
    // with allow_tf32); Find then picks the fastest, tensor cores or not.
    CudnnConv tf32(dnn, c, CUDNN_DEFAULT_MATH, -1, x.p, wDev.p, biasPtr, yOther.p);
    Value info;
    info.set("algo", tf32.algoName());
    info.set("math", tf32.mathName());
    info.set("workspace_bytes", static_cast<uint64_t>(tf32.workspaceBytes()));
    baseline("cudnn_tf32", [&](cudaStream_t s) { tf32.run(s); }, info);
  }
  if (o.skipCusparse) {
    skipped("cusparse", "--no-cusparse");
  } else {
    cusparseHandle_t sp;
    cusparseStatus_t st = cusparseCreate(&sp);
    if (st != CUSPARSE_STATUS_SUCCESS)
      throw std::runtime_error(std::string("cusparseCreate failed: ") + cusparseGetErrorName(st));
    std::unique_ptr<cusparseContext, decltype(&cusparseDestroy)> spGuard(sp, cusparseDestroy);
    std::unique_ptr<CusparseConv> conv;
    try {
      conv = std::make_unique<CusparseConv>(sp, c, w, x.p, biasPtr, yOther.p, stream);
    } catch (const std::exception &e) {
      // e.g. the im2col matrix does not fit: record, keep the other results.
      cudaGetLastError();
      skipped("cusparse", e.what());
    }
    if (conv) {
      Value info;
      info.set("alg", conv->algName());
      info.set("im2col_included", true);
      info.set("scratch_bytes", static_cast<uint64_t>(conv->scratchBytes()));
      baseline("cusparse", [&](cudaStream_t s) { conv->run(s); }, info);
    }
  }

  // Half kernels: cuDNN in the kernel's type, NCHW and NHWC; each run once into a poisoned
  // buffer, checked against the same bound (recorded, informative), then timed.
  std::vector<std::string> halfNames;
  if (half) {
    const std::string prefix = std::string("cudnn_") + (ht == HalfType::BF16 ? "bf16" : "fp16");
    halfNames = {prefix + "_nchw", prefix + "_nhwc"};
    if (o.skipHalfBaselines) {
      for (const auto &name : halfNames)
        skipped(name, "--no-half-baselines");
    } else {
      DevHalf yHalf(outCount), xNhwc(inCount), wNhwc(w.size());
      nchwToNhwcHalf(xh.p, xNhwc.p, c.N, c.C, c.H * c.W, stream);
      nchwToNhwcHalf(wh.p, wNhwc.p, c.K, c.C / c.groups, c.R * c.S, stream);
      CUDART_CHECK(cudaStreamSynchronize(stream));
      for (HalfLayout layout : {HalfLayout::NCHW, HalfLayout::NHWC}) {
        const bool nhwc = layout == HalfLayout::NHWC;
        const std::string &name = halfNames[nhwc];
        std::unique_ptr<CudnnHalfConv> conv;
        try {
          conv = std::make_unique<CudnnHalfConv>(dnn, c, ht, layout, nhwc ? xNhwc.p : xh.p,
                                                 nhwc ? wNhwc.p : wh.p, biasRoundedPtr, yHalf.p);
        } catch (const std::exception &e) {
          cudaGetLastError();
          skipped(name, e.what());
          continue;
        }
        fillNaNHalf(yHalf.p, outCount, ht, stream);
        conv->run(stream);
        CUDART_CHECK(cudaStreamSynchronize(stream));
        HalfCheckResult r = checkHalf(yHalf.p, layout, ht, yRefH.p, yAbs.p, c.N, c.K,
                                      c.P * c.Q, hb, stream);
        errors.set(name, halfErrorJson(r));
        Timing t = timeRuns([&](cudaStream_t s) { conv->run(s); }, stream, topt);
        Value v = timingJson(t, usefulFlop, rooflineMs);
        v.set("dtype", dtype);
        v.set("layout", nhwc ? "NHWC" : "NCHW");
        v.set("compute_type", "FP32");
        v.set("algo", conv->algoName());
        v.set("math", conv->mathName());
        v.set("workspace_bytes", static_cast<uint64_t>(conv->workspaceBytes()));
        if (nhwc)
          v.set("layout_transform_included", false);
        if (hasResidual)
          v.set("residual_included", false);
        v.set("note", nhwc ? "input and weights changed to NHWC before timing (not timed); the "
                             "output stays NHWC; bias/activation as a separate kernel, timed"
                           : "bias/activation as a separate kernel, timed");
        contenders.set(name, v);
        times.set(name, t.medianMs);
        speedup.set(name, t.medianMs / tOurs.medianMs);
      }
    }
    // The half baseline: the faster of the two layouts by a contender's `field` (null where
    // none ran).
    auto fastestHalf = [&](const char *field) {
      Value best;
      for (const auto &name : halfNames) {
        const Value *v = contenders.find(name);
        const Value *t = v ? v->find(field) : nullptr;
        if (t && t->isNumber() &&
            (best.isNull() || t->asNumber() < best.at("time_ms").asNumber())) {
          best.set("contender", name);
          best.set("time_ms", t->asNumber());
        }
      }
      return best;
    };
    Value best = fastestHalf("time_ms");
    report.set("best_cudnn_half", best);
    // --cold-l2: the same comparison with every contender run from a cold L2.
    if (tOurs.hasCold) {
      Value cold;
      cold.set("spconv", tOurs.coldMedianMs);
      Value bestCold = fastestHalf("time_ms_cold_l2");
      cold.set("best_cudnn_half", bestCold);
      cold.set("speedup_vs_best_cudnn_half",
               bestCold.isNull()
                   ? Value()
                   : Value(bestCold.at("time_ms").asNumber() / tOurs.coldMedianMs));
      report.set("cold_l2", cold);
    }
    times.set("best_cudnn_half", best.isNull() ? Value() : best.at("time_ms"));
    speedup.set("best_cudnn_half",
                best.isNull() ? Value() : Value(best.at("time_ms").asNumber() / tOurs.medianMs));
  }

  report.set("errors", errors);
  report.set("contenders", contenders);
  report.set("times_ms", times);
  Value named;
  named.set("cudnn_fp32_over_ours", speedup.at("cudnn_fp32"));
  named.set("cudnn_tf32_over_ours", speedup.at("cudnn_tf32"));
  named.set("cusparse_over_ours", speedup.at("cusparse"));
  for (const auto &name : halfNames)
    named.set(name + "_over_ours", speedup.at(name));
  if (half)
    named.set("best_cudnn_half_over_ours", speedup.at("best_cudnn_half"));
  report.set("speedup", named);
  report.set("useful_tflops", usefulFlop / (tOurs.medianMs * 1e-3) / 1e12);
  report.set("roofline_pct", 100.0 * rooflineMs / tOurs.medianMs);
  CUDART_CHECK(cudaStreamDestroy(stream));
}

std::string fmt(const Value *v, const char *f) {
  if (!v || !v->isNumber())
    return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v->asNumber());
  return buf;
}

} // namespace

int main(int argc, char **argv) {
  Options o;
  try {
    bool help = false;
    o = parseOptions(argc, argv, help);
    if (help) {
      std::cout << kUsage;
      return 0;
    }
  } catch (const std::exception &e) {
    std::cerr << "spconv-bench: " << e.what() << "\n\n" << kUsage;
    return 2;
  }

  Value report;
  report.set("tool", "spconv-bench");
  report.set("status", "running");
  report.set("layer", o.layer);
  report.set("sparsity", o.sparsity >= 0 ? Value(o.sparsity) : Value());
  if (!o.commit.empty())
    report.set("commit", o.commit);
  report.set("launch", o.launch);
  report.set("module", o.module);

  int rc = 0;
  try {
    if (!o.compileJson.empty())
      report.set("compile", json::parseFile(o.compileJson));
    runBench(o, report);
    if (report.find("verification_failure")) {
      report.set("status", "unverified");
      std::cerr << "spconv-bench: UNVERIFIED (timed anyway, --unverified): "
                << report.at("verification_failure").asString() << "\n";
      rc = 3;
    } else {
      report.set("status", "ok");
    }
  } catch (const VerificationFailure &e) {
    report.set("status", "failed");
    report.set("error", e.what());
    std::cerr << "spconv-bench: FAILED: " << e.what() << "\n";
    rc = 1;
  } catch (const std::exception &e) {
    report.set("status", "error");
    report.set("error", e.what());
    std::cerr << "spconv-bench: error: " << e.what() << "\n";
    rc = 2;
  }
  writeReport(o, report);

  const Value *t = report.find("times_ms");
  const Value *s = report.find("speedup");
  std::printf("%s N=%s p=%s nnz=%s status=%s err=%s ours=%s ms cudnn32=%s (x%s) tf32=%s (x%s) "
              "cusparse=%s (x%s) %s TFLOP/s %s%% roofline\n",
              o.layer.empty() ? "?" : o.layer.c_str(), fmt(report.find("N"), "%.0f").c_str(),
              fmt(report.find("sparsity"), "%.2f").c_str(), fmt(report.find("nnz"), "%.0f").c_str(),
              report.at("status").asString().c_str(), fmt(report.find("max_rel_err"), "%.2e").c_str(),
              fmt(t ? t->find("spconv") : nullptr, "%.4f").c_str(),
              fmt(t ? t->find("cudnn_fp32") : nullptr, "%.4f").c_str(),
              fmt(s ? s->find("cudnn_fp32_over_ours") : nullptr, "%.2f").c_str(),
              fmt(t ? t->find("cudnn_tf32") : nullptr, "%.4f").c_str(),
              fmt(s ? s->find("cudnn_tf32_over_ours") : nullptr, "%.2f").c_str(),
              fmt(t ? t->find("cusparse") : nullptr, "%.4f").c_str(),
              fmt(s ? s->find("cusparse_over_ours") : nullptr, "%.2f").c_str(),
              fmt(report.find("useful_tflops"), "%.2f").c_str(),
              fmt(report.find("roofline_pct"), "%.1f").c_str());
  const Value *dt = report.find("dtype");
  if (dt && dt->isString() && dt->asString() != "f32") {
    // Half kernels: a second line, so the first keeps its format.
    const Value *best = report.find("best_cudnn_half");
    const Value *bestName = best && best->isObject() ? best->find("contender") : nullptr;
    std::string prefix = "cudnn_" + std::string(dt->asString() == "bf16" ? "bf16" : "fp16");
    std::printf("%s %s err/bound=%s rel_l2=%s %s_nchw=%s %s_nhwc=%s best_cudnn_half=%s (%s, x%s)\n",
                o.layer.empty() ? "?" : o.layer.c_str(), dt->asString().c_str(),
                fmt(report.find("max_err_over_bound"), "%.3g").c_str(),
                fmt(report.find("rel_l2_err"), "%.2e").c_str(), prefix.c_str(),
                fmt(t ? t->find(prefix + "_nchw") : nullptr, "%.4f").c_str(), prefix.c_str(),
                fmt(t ? t->find(prefix + "_nhwc") : nullptr, "%.4f").c_str(),
                fmt(t ? t->find("best_cudnn_half") : nullptr, "%.4f").c_str(),
                bestName && bestName->isString() ? bestName->asString().c_str() : "-",
                fmt(s ? s->find("best_cudnn_half_over_ours") : nullptr, "%.2f").c_str());
  }
  return rc;
}
