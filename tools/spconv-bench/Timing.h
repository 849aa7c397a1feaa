//===- Timing.h - Batched, graph-replayed timing of one contender -*- C++ -*-===//
//
// One event pair around one launch measures launch latency, so each batch times many
// back-to-back runs. The runs are captured into a CUDA graph when the contender allows
// it, which removes the host's per-launch cost from small batch-1 kernels for every
// contender alike; otherwise they are plain stream launches. The reported time is the
// median over batches of (batch time / runs per batch).
//
// With a cold-L2 pass (--cold-l2), each contender is timed a second way: every run is
// preceded by a read of a buffer several times the L2 (readThroughL2), so the run finds
// neither its code nor its data in L2, as a layer of a whole network does when the layers
// between two of its runs stream more than the L2 holds. The runs and the reads are timed
// together, the reads alone, and the difference is the cold time of a run. A sparse kernel's
// code is large (16 bytes per nonzero weight per channel block), a library's small, so the
// two timings differ most for the sparse kernels.
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
  // Bytes read through L2 before each run of the cold pass; 0 = no cold pass.
  int64_t coldL2Bytes = 0;
};

struct Timing {
  double medianMs = 0;            // per run
  double minMs = 0, maxMs = 0;    // per run, over batches
  std::vector<double> batchMs;    // per run, each batch
  int64_t itersPerBatch = 0;
  std::string method;             // "graph" | "stream"
  // The cold pass (coldL2Bytes > 0): median per run (reads and run, less the reads alone:
  // a small kernel's may come out near 0 or below, within the reads' noise), and the reads'.
  bool hasCold = false;
  double coldMedianMs = 0, coldReadMs = 0;
};

Timing timeRuns(const std::function<void(cudaStream_t)> &run, cudaStream_t s,
                const TimingOptions &opt);

} // namespace bench
} // namespace spconv

#endif // SPCONV_BENCH_TIMING_H
