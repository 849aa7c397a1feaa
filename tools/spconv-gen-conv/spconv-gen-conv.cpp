//===- spconv-gen-conv.cpp - synthetic pruned convolutions ----------------===//
//
// Writes a one-conv .mlir (weights as a dense_resource blob, as real models carry them) plus
// the same weights as raw KCRS float32 (weights.bin) and bias (bias.bin) for spconv-bench and
// reference checks. Weights are random normal, magnitude-pruned to the requested sparsity:
// the floor(p * count) smallest magnitudes become +0.0.
//
//   spconv-gen-conv --layer vgg-conv3 --batch 64 --sparsity 0.9 --seed 1 -o DIR
//   spconv-gen-conv --shape N,C,H,W,K,R,S --stride 1,1 --pad 1,1,1,1 ... -o DIR
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <vector>

namespace {
struct Layer {
  const char *name;
  int64_t c, hw, k, rs, stride, pad;
};
// paper10 (../shared/DESIGN.md).
const Layer kPaper10[] = {
    {"lenet-conv1", 1, 28, 20, 5, 1, 0},     {"lenet-conv2", 20, 12, 50, 5, 1, 0},
    {"alexnet-conv1", 3, 224, 64, 11, 4, 2}, {"alexnet-conv2", 64, 27, 192, 5, 1, 2},
    {"vgg-conv1", 3, 224, 64, 3, 1, 1},      {"vgg-conv2", 64, 224, 64, 3, 1, 1},
    {"vgg-conv3", 128, 112, 128, 3, 1, 1},   {"resnet-conv1", 64, 56, 64, 3, 1, 1},
    {"resnet-conv2", 128, 28, 128, 3, 1, 1}, {"googlenet-1x1", 192, 28, 64, 1, 1, 0},
};

struct Options {
  int64_t n = 1, c = 0, h = 0, w = 0, k = 0, r = 0, s = 0;
  int64_t sh = 1, sw = 1, pt = 0, pl = 0, pb = 0, pr = 0, dh = 1, dw = 1, groups = 1;
  double sparsity = 0.9;
  uint64_t seed = 1;
  bool bias = false, relu = false, relu6 = false, residual = false;
  std::string layer, outDir;
  std::string dtype = "f32", pairing, accumulate, layout;
};

[[noreturn]] void die(const std::string &msg) {
  std::fprintf(stderr, "spconv-gen-conv: error: %s\n", msg.c_str());
  std::exit(1);
}

std::vector<int64_t> parseList(const std::string &s, size_t expected, const char *flag) {
  std::vector<int64_t> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    char *end = nullptr;
    long long v = std::strtoll(item.c_str(), &end, 10);
    if (item.empty() || *end)
      die(std::string("bad integer '") + item + "' in " + flag);
    out.push_back(v);
  }
  if (out.size() != expected)
    die(std::string(flag) + " needs " + std::to_string(expected) + " comma-separated values");
  return out;
}

void usage() {
  std::printf(
      "usage: spconv-gen-conv (--layer NAME | --shape N,C,H,W,K,R,S) [options] -o DIR\n"
      "  --layer NAME        a paper10 layer (lenet-conv1 ... googlenet-1x1)\n"
      "  --batch N           batch size for --layer (default 1)\n"
      "  --shape N,C,H,W,K,R,S\n"
      "  --stride SH,SW  --pad T,L,B,R  --dilation DH,DW\n"
      "  --groups G          grouped conv: weights K x C/G x R x S (G = C: depthwise)\n"
      "  --sparsity P        fraction of weights pruned to zero (default 0.9)\n"
      "  --seed S            random seed (default 1)\n"
      "  --bias              add a random bias     --relu   fuse a ReLU\n"
      "  --relu6             fuse a ReLU6, min(max(x, 0), 6)\n"
      "  --residual          add a residual operand (a second argument of the output's\n"
      "                      type) before the activation\n"
      "  --dtype T           input/output element type: f32 (default), f16 or bf16; the\n"
      "                      weights stay f32 (rounded to T when folded into the code)\n"
      "  --pairing P         half precision: images, rows, columns or adjacent (default: the\n"
      "                      compiler's choice)\n"
      "  --accumulate A      half precision: where sums live, f32 (bounded half runs\n"
      "                      promoted to f32) or the --dtype (default: the compiler's)\n"
      "  --layout L          how the input and output are stored: nchw (default) or\n"
      "                      image_pairs (half precision, even batch: images n and n + N/2\n"
      "                      share a 32-bit word; docs/design.md, \"Image-pair layout\")\n"
      "writes DIR/conv.mlir, DIR/weights.bin (KCRS f32), DIR/bias.bin (with --bias)\n");
}

Options parse(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc)
        die("missing value after " + a);
      return argv[++i];
    };
    if (a == "--help" || a == "-h") {
      usage();
      std::exit(0);
    } else if (a == "--layer") {
      o.layer = next();
    } else if (a == "--batch") {
      o.n = parseList(next(), 1, "--batch")[0];
    } else if (a == "--shape") {
      auto v = parseList(next(), 7, "--shape");
      o.n = v[0], o.c = v[1], o.h = v[2], o.w = v[3], o.k = v[4], o.r = v[5], o.s = v[6];
    } else if (a == "--stride") {
      auto v = parseList(next(), 2, "--stride");
      o.sh = v[0], o.sw = v[1];
    } else if (a == "--pad") {
      auto v = parseList(next(), 4, "--pad");
      o.pt = v[0], o.pl = v[1], o.pb = v[2], o.pr = v[3];
    } else if (a == "--dilation") {
      auto v = parseList(next(), 2, "--dilation");
      o.dh = v[0], o.dw = v[1];
    } else if (a == "--groups") {
      o.groups = std::atoll(next().c_str());
    } else if (a == "--sparsity") {
      o.sparsity = std::atof(next().c_str());
    } else if (a == "--seed") {
      o.seed = std::strtoull(next().c_str(), nullptr, 10);
    } else if (a == "--bias") {
      o.bias = true;
    } else if (a == "--relu") {
      o.relu = true;
    } else if (a == "--dtype") {
      o.dtype = next();
      if (o.dtype != "f32" && o.dtype != "f16" && o.dtype != "bf16")
        die("--dtype must be f32, f16 or bf16, got " + o.dtype);
    } else if (a == "--pairing") {
      o.pairing = next();
      if (o.pairing != "images" && o.pairing != "rows" && o.pairing != "columns" &&
          o.pairing != "adjacent")
        die("--pairing must be images, rows, columns or adjacent, got " + o.pairing);
    } else if (a == "--layout") {
      o.layout = next();
      if (o.layout != "nchw" && o.layout != "image_pairs")
        die("--layout must be nchw or image_pairs, got " + o.layout);
    } else if (a == "--accumulate") {
      o.accumulate = next();
      if (o.accumulate != "f32" && o.accumulate != "f16" && o.accumulate != "bf16")
        die("--accumulate must be f32, f16 or bf16, got " + o.accumulate);
    } else if (a == "--relu6") {
      o.relu6 = true;
    } else if (a == "--residual") {
      o.residual = true;
    } else if (a == "-o") {
      o.outDir = next();
    } else {
      die("unknown argument '" + a + "' (see --help)");
    }
  }
  if (!o.layer.empty()) {
    const Layer *found = nullptr;
    for (const Layer &l : kPaper10)
      if (o.layer == l.name)
        found = &l;
    if (!found)
      die("unknown layer '" + o.layer + "'");
    o.c = found->c, o.h = o.w = found->hw, o.k = found->k, o.r = o.s = found->rs;
    o.sh = o.sw = found->stride;
    o.pt = o.pl = o.pb = o.pr = found->pad;
  }
  if (o.outDir.empty())
    die("missing -o DIR");
  for (int64_t v : {o.n, o.c, o.h, o.w, o.k, o.r, o.s, o.sh, o.sw, o.dh, o.dw, o.groups})
    if (v <= 0)
      die("shape, strides, dilations and groups must be positive (use --layer or --shape)");
  if (o.c % o.groups || o.k % o.groups)
    die("--groups must divide C and K");
  if (!(o.sparsity >= 0.0 && o.sparsity <= 1.0))
    die("--sparsity must be in [0, 1]");
  return o;
}

std::string hexBlob(const std::vector<float> &values) {
  // dense_resource blobs start with their alignment as a little-endian uint32.
  static const char *digits = "0123456789ABCDEF";
  std::string out = "0x04000000";
  out.reserve(out.size() + values.size() * 8);
  const auto *bytes = reinterpret_cast<const unsigned char *>(values.data());
  for (size_t i = 0; i < values.size() * sizeof(float); ++i) {
    out.push_back(digits[bytes[i] >> 4]);
    out.push_back(digits[bytes[i] & 15]);
  }
  return out;
}

void writeRaw(const std::string &path, const std::vector<float> &v) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char *>(v.data()), v.size() * sizeof(float));
  if (!f)
    die("cannot write " + path);
}
} // namespace

int main(int argc, char **argv) {
  Options o = parse(argc, argv);
  int64_t extH = o.dh * (o.r - 1) + 1, extW = o.dw * (o.s - 1) + 1;
  int64_t p = (o.h + o.pt + o.pb - extH) / o.sh + 1, q = (o.w + o.pl + o.pr - extW) / o.sw + 1;
  if (o.h + o.pt + o.pb < extH || o.w + o.pl + o.pr < extW)
    die("filter larger than the padded input");

  std::mt19937_64 rng(o.seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> weights(o.k * (o.c / o.groups) * o.r * o.s);
  for (float &v : weights)
    v = normal(rng);
  // Magnitude pruning: zero the floor(p * count) smallest |w| (ties broken by index).
  std::vector<int64_t> order(weights.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  size_t pruned = static_cast<size_t>(std::floor(o.sparsity * weights.size() + 1e-9));
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return std::fabs(weights[a]) < std::fabs(weights[b]);
  });
  for (size_t i = 0; i < pruned; ++i)
    weights[order[i]] = 0.0f;
  std::vector<float> bias;
  if (o.bias)
    for (int64_t i = 0; i < o.k; ++i)
      bias.push_back(normal(rng) * 0.1f);

  mkdir(o.outDir.c_str(), 0755);
  writeRaw(o.outDir + "/weights.bin", weights);
  if (o.bias)
    writeRaw(o.outDir + "/bias.bin", bias);

  std::ofstream m(o.outDir + "/conv.mlir");
  std::string in = "tensor<" + std::to_string(o.n) + "x" + std::to_string(o.c) + "x" +
                   std::to_string(o.h) + "x" + std::to_string(o.w) + "x" + o.dtype + ">";
  std::string out = "tensor<" + std::to_string(o.n) + "x" + std::to_string(o.k) + "x" +
                    std::to_string(p) + "x" + std::to_string(q) + "x" + o.dtype + ">";
  std::string wt = "tensor<" + std::to_string(o.k) + "x" + std::to_string(o.c / o.groups) + "x" +
                   std::to_string(o.r) + "x" + std::to_string(o.s) + "xf32>";
  m << "// Generated by spconv-gen-conv" << (o.layer.empty() ? "" : " --layer " + o.layer)
    << ": sparsity " << o.sparsity << ", seed " << o.seed << "\n";
  m << "func.func @conv(%x: " << in << (o.residual ? ", %r: " + out : std::string()) << ") -> "
    << out << " {\n";
  m << "  %y = spconv.conv2d %x "
    << (o.residual ? "residual(%r : " + out + ") " : std::string())
    << "{weights = dense_resource<conv_weights> : " << wt;
  if (o.bias)
    m << ", bias = dense_resource<conv_bias> : tensor<" << o.k << "xf32>";
  m << ", strides = array<i64: " << o.sh << ", " << o.sw << ">";
  m << ", padding = array<i64: " << o.pt << ", " << o.pl << ", " << o.pb << ", " << o.pr << ">";
  m << ", dilations = array<i64: " << o.dh << ", " << o.dw << ">";
  if (o.groups != 1)
    m << ", groups = " << o.groups;
  if (!o.accumulate.empty())
    m << ", accumulate = " << o.accumulate;
  if (!o.pairing.empty())
    m << ", pairing = #spconv.pairing<" << o.pairing << ">";
  if (!o.layout.empty() && o.layout != "nchw")
    m << ", layout = #spconv.layout<" << o.layout << ">";
  if (o.relu6)
    m << ", activation = #spconv.activation<relu6>";
  else if (o.relu)
    m << ", activation = #spconv.activation<relu>";
  m << "} : " << in << " -> " << out << "\n";
  m << "  return %y : " << out << "\n}\n";
  m << "{-#\n  dialect_resources: {\n    builtin: {\n      conv_weights: \"" << hexBlob(weights)
    << "\"";
  if (o.bias)
    m << ",\n      conv_bias: \"" << hexBlob(bias) << "\"";
  m << "\n    }\n  }\n#-}\n";
  if (!m)
    die("cannot write " + o.outDir + "/conv.mlir");
  std::printf("%s: %lld x %lld x %lld x %lld weights, %zu zero (sparsity %.4f)\n",
              o.outDir.c_str(), (long long)o.k, (long long)(o.c / o.groups), (long long)o.r,
              (long long)o.s, pruned, weights.empty() ? 0.0 : double(pruned) / weights.size());
  return 0;
}
