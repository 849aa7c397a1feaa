//===- Options.h - spconv-bench command line --------------------*- C++ -*-===//
#ifndef SPCONV_BENCH_OPTIONS_H
#define SPCONV_BENCH_OPTIONS_H

#include <cstdint>
#include <string>

namespace spconv {
namespace bench {

struct Options {
  std::string launch, module, entry, weights, bias, out, layer, compileJson, commit;
  double sparsity = -1; // label only; <0 = not given
  int batches = 7;
  int64_t iters = 0;
  uint64_t seed = 20261122;
  double tolerance = 1e-4;
  double targetBatchMs = 20;
  bool graph = true;
  bool coldL2 = false;
  bool skipCusparse = false;
  bool skipTf32 = false;
  bool skipHalfBaselines = false;
  bool unverified = false; // time the kernel even when its check fails (altered code)
  double errorTerms = -1; // half kernels: T of the stated bound; <0 = the sidecar's/default
};

extern const char *kUsage;

// Throws std::invalid_argument on a bad command line; sets `help` for --help.
Options parseOptions(int argc, char **argv, bool &help);

} // namespace bench
} // namespace spconv

#endif // SPCONV_BENCH_OPTIONS_H
