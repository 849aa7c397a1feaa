//===- Numerics.cpp - the error bound of a half-precision kernel ----------===//
#include "spconv/Conversion/ConvTemplate/Numerics.h"

#include <algorithm>
#include <cmath>

using namespace spconv;

/// The most nonzero weights of one output channel over `run` consecutive input channels of
/// its group, any alignment (an upper bound for every chunking of the window).
static int64_t longestRunOf(const ConvShape &s, llvm::ArrayRef<float> weights, int64_t run) {
  int64_t cpg = s.cpg(), rs = s.r * s.s, longest = 0;
  std::vector<int64_t> perChannel(cpg);
  for (int64_t k = 0; k < s.k; ++k) {
    for (int64_t c = 0; c < cpg; ++c) {
      const float *w = weights.data() + (k * cpg + c) * rs;
      perChannel[c] = std::count_if(w, w + rs, [](float v) { return v != 0.0f; });
    }
    int64_t window = 0;
    for (int64_t c = 0; c < cpg; ++c) {
      window += perChannel[c];
      if (c >= run)
        window -= perChannel[c - run];
      longest = std::max(longest, window);
    }
  }
  return longest;
}

HalfNumerics spconv::halfNumerics(const ConvShape &words, const Tiling &tiling,
                                  llvm::ArrayRef<float> weights) {
  HalfNumerics n;
  bool f16 = words.precision == Precision::f16;
  n.unitRoundoff = std::ldexp(1.0, f16 ? -11 : -8);
  n.tiny = std::ldexp(1.0, f16 ? -24 : -133);
  int64_t run = words.promotesRuns() ? std::max<int64_t>(1, tiling.chunkC) : words.cpg();
  n.longestRun = longestRunOf(words, weights, run);
  double lu = n.longestRun * n.unitRoundoff;
  // gamma_L / u, in whole terms; a run that long (L u >= 1/2) bounds nothing useful, and is
  // stated as such rather than hidden.
  int64_t runTerms = lu < 0.5 ? int64_t(std::ceil(n.longestRun / (1.0 - lu))) : 2 * n.longestRun;
  // A residual is added to the rounded output in its type: one more rounding, of
  // |sum + residual|, which the checkers' |reference| includes (docs/design.md, "Residual
  // epilogue").
  // One more term per group whose partial sum is added (split chunks, in every block of a
  // cluster split).
  int64_t groups = std::max<int64_t>(1, tiling.splitC) * std::max<int64_t>(1, tiling.clusterSplit);
  n.errorTerms = runTerms + groups + 1 + (words.residual ? 1 : 0);
  return n;
}
