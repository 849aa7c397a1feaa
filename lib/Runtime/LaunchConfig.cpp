//===- LaunchConfig.cpp - The compiler's JSON launch sidecar --------------===//

#include "spconv/Runtime/LaunchConfig.h"

#include <stdexcept>

namespace spconv {
namespace runtime {

using json::Value;

// Sizes a launch file may describe: every dimension fits CUDA's 32-bit grid and tensor
// extents, and every product stays far from int64_t's range, so a hostile sidecar is
// refused here rather than overflowing in the caller's arithmetic.
static constexpr int64_t kMaxDim = 0x7fffffff;
static constexpr int64_t kMaxElements = int64_t(1) << 53;

static int64_t checkedProduct(int64_t a, int64_t b, const std::string &what) {
  int64_t n = 0;
  if (__builtin_mul_overflow(a, b, &n) || n > kMaxElements)
    throw std::runtime_error(what + ": size out of range");
  return n;
}

int64_t ParamDesc::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n = checkedProduct(n, d, "param '" + name + "'");
  return n;
}

int64_t ParamDesc::numBytes() const {
  if (dtype != "f32")
    throw std::runtime_error("param '" + name + "': unsupported dtype '" + dtype + "'");
  return checkedProduct(numElements(), 4, "param '" + name + "'");
}

int KernelDesc::findParam(const std::string &role) const {
  for (size_t i = 0; i < params.size(); ++i)
    if (params[i].role == role)
      return static_cast<int>(i);
  return -1;
}

const KernelDesc &LaunchFile::kernel(const std::string &entry) const {
  if (kernels.empty())
    throw std::runtime_error("launch file lists no kernels");
  if (entry.empty())
    return kernels.front();
  for (const auto &k : kernels)
    if (k.entry == entry)
      return k;
  throw std::runtime_error("launch file has no kernel named '" + entry + "'");
}

// Wraps a lookup so errors say which field was wrong.
template <typename F> static auto field(const std::string &where, F f) -> decltype(f()) {
  try {
    return f();
  } catch (const std::exception &e) {
    throw std::runtime_error(where + ": " + e.what());
  }
}

template <size_t N>
static std::array<int64_t, N> intArray(const Value &v, const std::string &name) {
  const auto &a = v.asArray();
  if (a.size() != N)
    throw std::runtime_error(name + ": expected " + std::to_string(N) + " entries");
  std::array<int64_t, N> out{};
  for (size_t i = 0; i < N; ++i)
    out[i] = a[i].asInt();
  return out;
}

template <size_t N>
static std::array<unsigned, N> dims(const Value &v, const std::string &name) {
  auto a = intArray<N>(v, name);
  std::array<unsigned, N> out{};
  for (size_t i = 0; i < N; ++i) {
    if (a[i] < 1 || a[i] > 0x7fffffff)
      throw std::runtime_error(name + ": dimension out of range");
    out[i] = static_cast<unsigned>(a[i]);
  }
  return out;
}

static ConvDesc parseConv(const Value &c) {
  ConvDesc d;
  d.N = c.at("N").asInt();
  d.C = c.at("C").asInt();
  d.H = c.at("H").asInt();
  d.W = c.at("W").asInt();
  d.K = c.at("K").asInt();
  d.R = c.at("R").asInt();
  d.S = c.at("S").asInt();
  d.P = c.at("P").asInt();
  d.Q = c.at("Q").asInt();
  if (const Value *v = c.find("stride")) d.stride = intArray<2>(*v, "stride");
  if (const Value *v = c.find("padding")) d.padding = intArray<4>(*v, "padding");
  if (const Value *v = c.find("dilation")) d.dilation = intArray<2>(*v, "dilation");
  if (const Value *v = c.find("groups")) d.groups = v->asInt();
  if (const Value *v = c.find("activation")) d.activation = v->asString();
  if (const Value *v = c.find("has_bias")) d.hasBias = v->asBool();
  for (int64_t v : {d.N, d.C, d.H, d.W, d.K, d.R, d.S, d.P, d.Q, d.stride[0], d.stride[1],
                    d.dilation[0], d.dilation[1]})
    if (v < 1 || v > kMaxDim)
      throw std::runtime_error("sizes, strides and dilations must be in [1, 2^31-1]");
  for (int64_t v : d.padding)
    if (v < 0 || v > kMaxDim)
      throw std::runtime_error("padding must be in [0, 2^31-1]");
  if (d.groups < 1 || d.C % d.groups || d.K % d.groups)
    throw std::runtime_error("groups must divide C and K");
  // weightCount() and the tensor sizes derived from the conv must not overflow.
  checkedProduct(checkedProduct(checkedProduct(d.K, d.C / d.groups, "conv"), d.R, "conv"),
                 d.S, "conv");
  checkedProduct(checkedProduct(checkedProduct(d.N, d.C, "conv"), d.H, "conv"), d.W, "conv");
  checkedProduct(checkedProduct(checkedProduct(d.N, d.K, "conv"), d.P, "conv"), d.Q, "conv");
  if (d.activation != "none" && d.activation != "relu" && d.activation != "relu6")
    throw std::runtime_error("unknown activation '" + d.activation + "'");
  return d;
}

static KernelDesc parseKernel(const Value &k) {
  KernelDesc d;
  d.raw = k;
  d.entry = field("entry", [&] { return k.at("entry").asString(); });
  std::string where = "kernel '" + d.entry + "'";
  d.grid = field(where + " grid", [&] { return dims<3>(k.at("grid"), "grid"); });
  d.block = field(where + " block", [&] { return dims<3>(k.at("block"), "block"); });
  if (const Value *v = k.find("dynamic_shared_bytes"))
    d.dynamicSharedBytes = field(where + " dynamic_shared_bytes", [&] {
      int64_t bytes = v->asInt();
      if (bytes < 0 || bytes > kMaxDim)
        throw std::runtime_error("out of range");
      return static_cast<unsigned>(bytes);
    });
  field(where + " params", [&] {
    for (const Value &p : k.at("params").asArray()) {
      ParamDesc pd;
      pd.name = p.at("name").asString();
      pd.role = p.at("role").asString();
      pd.dtype = p.find("dtype") ? p.at("dtype").asString() : "f32";
      if (const Value *l = p.find("layout")) {
        pd.layout = l->asString();
        if (pd.layout != "nchw" && pd.layout != "image_pairs")
          throw std::runtime_error("param '" + pd.name + "': unknown layout '" + pd.layout +
                                   "'");
        if (pd.layout == "image_pairs" && pd.dtype == "f32")
          throw std::runtime_error("param '" + pd.name +
                                   "': layout 'image_pairs' needs a half dtype");
      }
      for (const Value &s : p.at("shape").asArray()) {
        pd.shape.push_back(s.asInt());
        if (pd.shape.back() < 0 || pd.shape.back() > kMaxDim)
          throw std::runtime_error("param '" + pd.name + "': dimension out of range");
      }
      (void)pd.numElements(); // throws when the product is out of range
      if (pd.layout == "image_pairs" && (pd.shape.empty() || pd.shape[0] % 2 != 0))
        throw std::runtime_error("param '" + pd.name +
                                 "': layout 'image_pairs' needs an even batch (shape[0])");
      d.params.push_back(std::move(pd));
    }
    return 0;
  });
  if (const Value *c = k.find("conv")) {
    d.conv = field(where + " conv", [&] { return parseConv(*c); });
    d.hasConv = true;
  }
  if (const Value *v = k.find("weights_nnz")) d.weightsNnz = v->asInt();
  if (const Value *v = k.find("weights_total")) d.weightsTotal = v->asInt();
  if (const Value *v = k.find("tiling")) d.tiling = *v;
  if (const Value *num = k.find("numerics"))
    if (const Value *pairing = num->find("pairing"))
      if (pairing->asString() == "adjacent")
        d.pointerAlignment = 4;
  for (const ParamDesc &p : d.params)
    if (p.layout == "image_pairs")
      d.pointerAlignment = 4;
  return d;
}

LaunchFile parseLaunchFile(const Value &doc) {
  LaunchFile f;
  if (const Value *v = doc.find("format")) f.format = v->asString();
  if (!f.format.empty() && f.format != "spconv-launch")
    throw std::runtime_error("not a spconv launch file (format '" + f.format + "')");
  if (const Value *v = doc.find("version")) f.version = v->asInt();
  if (f.version > 1)
    throw std::runtime_error("launch file version " + std::to_string(f.version) +
                             " is newer than this runtime (1)");
  if (const Value *v = doc.find("chip")) f.chip = v->asString();
  for (const Value &k : doc.at("kernels").asArray())
    f.kernels.push_back(parseKernel(k));
  return f;
}

LaunchFile loadLaunchFile(const std::string &path) {
  Value doc = json::parseFile(path);
  try {
    return parseLaunchFile(doc);
  } catch (const std::exception &e) {
    throw std::runtime_error(path + ": " + e.what());
  }
}

} // namespace runtime
} // namespace spconv
