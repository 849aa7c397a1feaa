//===- Timing.h - Batched, graph-replayed timing of one contender -*- C++ -*-===//
//
// One event pair around one launch measures launch latency, so each batch times many
// back-to-back runs. The runs are captured into a CUDA graph when the contender allows
// it, which removes the host's per-launch cost from small batch-1 kernels for every
// contender alike; otherwise they are plain stream launches. The reported time is the
// median over batches of (batch time / runs per batch).
//
//===----------------------------------------------------------------------===//
#ifndef SPCONV_BENCH_TIMING_H
#define SPCONV_BENCH_TIMING_H

#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace spconv {
namespace bench {

struct TimingOptions {
  int batches = 7;           // median over these (at least 5 is the project's rule)
  int64_t iters = 0;         // runs per batch; 0 = enough for targetBatchMs
  double targetBatchMs = 20; // each batch lasts at least this long
  bool useGraph = true;
};

struct Timing {
  double medianMs = 0;            // per run
  double minMs = 0, maxMs = 0;    // per run, over batches
  std::vector<double> batchMs;    // per run, each batch
  int64_t itersPerBatch = 0;
  std::string method;             // "graph" | "stream"
};

Timing timeRuns(const std::function<void(cudaStream_t)> &run, cudaStream_t s,
                const TimingOptions &opt);

} // namespace bench
} // namespace spconv

#endif // SPCONV_BENCH_TIMING_H
