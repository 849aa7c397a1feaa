//===- spconv-ptx-template-fuzzer.cpp - block-template PTX and stamping ----===//
//
// Input: the PTX text of a block template, as spconv-stamp-ptx and a template-cache hit
// read it. PtxBlockTemplate::parse runs on it; when it succeeds, the weights of a conv are
// stamped in, the way spconv-stamp-ptx and spconv-translate's PTX-level fold do.
//
// The conv's K, block-k and weights per channel come from the template's info line
// ("// spconv block template: k=.. block_k=.. weights_per_channel=.. bias=0|1", which the
// fuzzer mutates like any other text; defaults when it is missing), clamped so that an
// input stays cheap. A hash of the input then picks whether the weights match the template
// or are off in the ways a wrong weight file is (one float more or fewer, a missing or
// extra bias, another block-k), and which values they hold (+-0, NaN, Inf, denormals,
// ordinary). Everything spconv-stamp-ptx would pass to the library is passed here.
//
//===----------------------------------------------------------------------===//
#include "spconv/Target/PtxBlockTemplate.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

using namespace spconv;

namespace {
struct ConvParams {
  int64_t k = 4, blockK = 2, weightsPerChannel = 9;
  bool hasBias = false;
};

/// The numbers of the info line, when the input starts with one.
ConvParams readParams(llvm::StringRef text) {
  ConvParams params;
  llvm::StringRef line = text.split('\n').first;
  if (!line.consume_front("// spconv block template:"))
    return params;
  llvm::SmallVector<llvm::StringRef> fields;
  line.split(fields, ' ', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef field : fields) {
    auto [name, value] = field.split('=');
    int64_t number = 0;
    if (value.getAsInteger(10, number))
      continue;
    if (name == "k")
      params.k = number;
    else if (name == "block_k")
      params.blockK = number;
    else if (name == "weights_per_channel")
      params.weightsPerChannel = number;
    else if (name == "bias")
      params.hasBias = number != 0;
  }
  return params;
}

float weightValue(uint64_t hash, int64_t i) {
  static const float special[] = {0.0f,
                                  -0.0f,
                                  1.0f,
                                  -2.5f,
                                  std::numeric_limits<float>::quiet_NaN(),
                                  std::numeric_limits<float>::infinity(),
                                  -std::numeric_limits<float>::infinity(),
                                  std::numeric_limits<float>::denorm_min(),
                                  std::numeric_limits<float>::max(),
                                  3.0f}; // a value in the placeholders' binade [2, 4)
  uint64_t h = llvm::xxh3_64bits(llvm::ArrayRef<uint8_t>(
      reinterpret_cast<const uint8_t *>(&i), sizeof(i))) ^ hash;
  // Mostly zeros, as in a pruned network.
  if (h % 4 != 0)
    return 0.0f;
  return special[(h >> 8) % (sizeof(special) / sizeof(special[0]))];
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  uint64_t hash = llvm::xxh3_64bits(llvm::ArrayRef<uint8_t>(data, size));
  llvm::Expected<PtxBlockTemplate> tmpl =
      PtxBlockTemplate::parse(text, "spconv_block_template");
  if (!tmpl) {
    llvm::consumeError(tmpl.takeError());
    return 0;
  }
  (void)countPtxInstructions(text);

  ConvParams params = readParams(text);
  // Keep one input to a few milliseconds; the fold is linear in K x weights per channel.
  params.k = std::clamp<int64_t>(params.k, 1, 64);
  params.blockK = std::clamp<int64_t>(params.blockK, 1, 64);
  params.weightsPerChannel = std::clamp<int64_t>(params.weightsPerChannel, 1, 1024);
  switch ((hash >> 60) & 7) {
  case 0:
    ++params.k; // one channel more than the template was made for
    break;
  case 1:
    params.blockK = params.blockK > 1 ? params.blockK - 1 : 2;
    break;
  case 2:
    params.hasBias = !params.hasBias;
    break;
  case 3:
    ++params.weightsPerChannel;
    break;
  default:
    break; // matching weights
  }
  std::vector<float> weights(params.k * params.weightsPerChannel), bias;
  if ((hash >> 56 & 15) == 0)
    weights.pop_back(); // a weight file one float short: spconv-stamp-ptx refuses it
  for (size_t i = 0; i < weights.size(); ++i)
    weights[i] = weightValue(hash, int64_t(i));
  if (params.hasBias) {
    bias.resize(params.k);
    for (int64_t i = 0; i < params.k; ++i)
      bias[i] = weightValue(~hash, i);
  }
  // spconv-stamp-ptx's own checks (tools/spconv-stamp-ptx) before it calls the library.
  if (weights.empty() || weights.size() % params.k != 0)
    return 0;
  BlockWeights w{weights, bias, params.k, params.blockK,
                 (params.k + params.blockK - 1) / params.blockK,
                 /*strictIEEE=*/(hash >> 52 & 1) != 0};
  if (llvm::Error error = tmpl->checkWeights(w)) {
    llvm::consumeError(std::move(error));
    return 0;
  }

  PtxFoldCounts counts;
  llvm::Expected<std::string> kernel =
      tmpl->instantiate("spconv_conv2d_0", w, 4, counts, /*shareStaging=*/true,
                        /*smAffine=*/(hash >> 54 & 1) != 0);
  if (!kernel) {
    llvm::consumeError(kernel.takeError());
    return 0;
  }
  llvm::nulls() << ptxModule(tmpl->moduleHeader(), "\n" + *kernel);

  // The split form spconv-translate uses past the code budget: every block stamped on its
  // own, packed into .func pieces of a small budget, each piece a ptxas unit.
  std::vector<std::string> blocks;
  for (int64_t kb = 0; kb < w.kBlocks; ++kb) {
    llvm::Expected<std::string> block = tmpl->stampBlock("spconv_conv2d_0", w, kb, counts);
    if (!block) {
      llvm::consumeError(block.takeError());
      return 0;
    }
    blocks.push_back(std::move(*block));
  }
  // Pieces with and without the SM-affine work queues (the %ctaid rename, the work slot).
  AssemblyOptions assembly;
  assembly.budget = 64 + (hash & 255);
  assembly.smAffine = (hash >> 53 & 1) != 0;
  std::vector<PtxUnit> units = tmpl->assemble("spconv_conv2d_0", blocks, assembly);
  for (const PtxUnit &unit : units)
    llvm::nulls() << ptxUnitModule(tmpl->moduleHeader(), unit);
  llvm::nulls() << ptxModule(tmpl->moduleHeader(), units);
  return 0;
}
