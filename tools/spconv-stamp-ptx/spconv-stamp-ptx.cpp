//===- spconv-stamp-ptx.cpp - fold weights into a block template's PTX -----===//
//
// The PTX-level fold on its own, without MLIR or LLVM's backend: reads the PTX of a
// one-channel-block template (spconv-translate --spconv-to-block-template-ptx, or a
// template cache entry's payload) and a conv's weights, and writes a PTX module with the
// conv's kernel. spconv-translate does the same in-process; this tool is for inspecting
// and testing the fold, and for stamping kernels where no compiler is installed.
//
//===----------------------------------------------------------------------===//
#include "spconv/Target/PtxBlockTemplate.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

#include <cstring>

using namespace llvm;

static cl::opt<std::string> templatePath(cl::Positional, cl::Required,
                                         cl::desc("<block template .ptx>"));
static cl::opt<std::string> entry("entry", cl::desc("The template's kernel name"),
                                  cl::init("spconv_block_template"));
static cl::opt<std::string> weightsPath(
    "weights", cl::Required,
    cl::desc("Raw little-endian f32 weights, K x C x R x S (rounded to a half-precision "
             "template's f16 or bf16 as the compiler rounds them)"));
static cl::opt<std::string> biasPath("bias", cl::desc("Raw f32 bias of length K"),
                                     cl::init(""));
static cl::opt<int64_t> k("k", cl::Required, cl::desc("Output channels K"));
static cl::opt<int64_t> blockK("block-k", cl::Required,
                               cl::desc("Output channels per channel block (the tiling's)"));
static cl::opt<std::string> name("name", cl::desc("Kernel name"),
                                 cl::init("spconv_conv2d_0"));
static cl::opt<bool> strictIEEE("strict-ieee", cl::desc("Keep products by zero"),
                                cl::init(false));
static cl::opt<int64_t> minBlocksPerSM("min-blocks-per-sm",
                                       cl::desc("Emit .minnctapersm (0 = none)"),
                                       cl::init(4));
static cl::opt<bool> shareStaging("share-staging",
                                  cl::desc("Share the staging code between channel blocks "
                                           "(default on, as spconv-translate for staged "
                                           "kernels; it stamps direct-input kernels whole: "
                                           "pass false for their templates)"),
                                  cl::init(true));
static cl::opt<bool> smAffine("sm-affine",
                              cl::desc("Blocks take their work from per-channel-block queues "
                                       "by SM (spconv-translate --sm-affinity=2)"),
                              cl::init(false));
static cl::opt<std::string> outputPath("o", cl::desc("Output PTX"), cl::init("-"));

static int fail(const Twine &message) {
  WithColor::error(errs(), "spconv-stamp-ptx") << message << "\n";
  return 1;
}

static bool readFloats(StringRef path, std::vector<float> &out, std::string &error) {
  auto buffer = MemoryBuffer::getFile(path, /*IsText=*/false);
  if (!buffer) {
    error = path.str() + ": " + buffer.getError().message();
    return false;
  }
  StringRef bytes = (*buffer)->getBuffer();
  if (bytes.size() % sizeof(float) != 0) {
    error = path.str() + ": size is not a multiple of 4 bytes";
    return false;
  }
  out.resize(bytes.size() / sizeof(float));
  // An empty file leaves out.data() null, which memcpy must not be given even for 0 bytes.
  if (!bytes.empty())
    std::memcpy(out.data(), bytes.data(), bytes.size());
  return true;
}

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  cl::ParseCommandLineOptions(argc, argv, "fold a conv's weights into block template PTX\n");

  auto text = MemoryBuffer::getFileOrSTDIN(templatePath, /*IsText=*/true);
  if (!text)
    return fail(templatePath + ": " + text.getError().message());
  Expected<spconv::PtxBlockTemplate> tmpl =
      spconv::PtxBlockTemplate::parse((*text)->getBuffer().str(), entry);
  if (!tmpl)
    return fail(templatePath + ": " + toString(tmpl.takeError()));

  std::vector<float> weights, bias;
  std::string error;
  if (!readFloats(weightsPath, weights, error) ||
      (!biasPath.empty() && !readFloats(biasPath, bias, error)))
    return fail(error);
  if (k <= 0 || blockK <= 0 || weights.empty() || weights.size() % k != 0)
    return fail("--k must divide the number of weights (" + Twine(weights.size()) +
                ") and --k, --block-k be positive");
  if (!bias.empty() && bias.size() != size_t(k))
    return fail("the bias has " + Twine(bias.size()) + " values, K is " + Twine(k));

  // A half-precision template holds the weights rounded to its type, by the compiler's rule.
  for (auto [values, what] : {std::make_pair(&weights, "weight"),
                              std::make_pair(&bias, "bias value")})
    if (Error err = spconv::roundToTemplateType(*values, tmpl->elementType(), what))
      return fail(toString(std::move(err)));

  // ceil(K / block-k); k + blockK - 1 would overflow for a huge --block-k.
  int64_t kBlocks = k / blockK + (k % blockK != 0);
  spconv::BlockWeights w{weights, bias, k, blockK, kBlocks, strictIEEE};
  spconv::PtxFoldCounts counts;
  Expected<std::string> kernel = tmpl->instantiate(name, w, minBlocksPerSM, counts, shareStaging, smAffine);
  if (!kernel)
    return fail(toString(kernel.takeError()));

  std::error_code ec;
  ToolOutputFile out(outputPath, ec, sys::fs::OF_Text);
  if (ec)
    return fail(outputPath + ": " + ec.message());
  out.os() << spconv::ptxModule(tmpl->moduleHeader(), "\n" + *kernel);
  out.keep();
  if (shareStaging && !tmpl->sharesStaging())
    errs() << "spconv-stamp-ptx: staging not shared: " << tmpl->whyNoSharedStaging() << "\n";
  errs() << "fmas_kept " << counts.kept << " fmas_deleted " << counts.deleted
         << " dead_loads " << counts.deadLoads << "\n";
  return 0;
}
