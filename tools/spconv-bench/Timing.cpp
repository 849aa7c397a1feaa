//===- Timing.cpp - Batched, graph-replayed timing of one contender -------===//

#include "Timing.h"
#include "CudaCheck.h"
#include "DeviceKernels.h"

#include <algorithm>
#include <cmath>

namespace spconv {
namespace bench {

namespace {
struct Events {
  cudaEvent_t a = nullptr, b = nullptr;
  Events() {
    CUDART_CHECK(cudaEventCreate(&a));
    CUDART_CHECK(cudaEventCreate(&b));
  }
  ~Events() {
    cudaEventDestroy(a);
    cudaEventDestroy(b);
  }
  float elapsed(cudaStream_t s, const std::function<void()> &body) {
    CUDART_CHECK(cudaEventRecord(a, s));
    body();
    CUDART_CHECK(cudaEventRecord(b, s));
    CUDART_CHECK(cudaEventSynchronize(b));
    float ms = 0;
    CUDART_CHECK(cudaEventElapsedTime(&ms, a, b));
    return ms;
  }
};

// Captures `count` runs into an executable graph; returns null when the contender
// cannot be captured (the capture is then abandoned and the error cleared).
cudaGraphExec_t capture(const std::function<void(cudaStream_t)> &run, cudaStream_t s,
                        int64_t count) {
  cudaGraph_t graph = nullptr;
  if (cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) != cudaSuccess) {
    cudaGetLastError();
    return nullptr;
  }
  bool ok = true;
  try {
    for (int64_t i = 0; i < count; ++i)
      run(s);
  } catch (...) {
    ok = false;
  }
  cudaError_t e = cudaStreamEndCapture(s, &graph);
  cudaGraphExec_t exec = nullptr;
  if (ok && e == cudaSuccess && graph &&
      cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess) {
    cudaGraphDestroy(graph);
    return exec;
  }
  if (graph)
    cudaGraphDestroy(graph);
  cudaGetLastError();
  return nullptr;
}
} // namespace

// Warm-up, batch sizing, graph capture and the timed batches of one way of running.
static Timing measure(const std::function<void(cudaStream_t)> &run, cudaStream_t s,
                      const TimingOptions &opt) {
  Events ev;
  // Warm-up: first-call costs (module JIT, library plan selection) stay out.
  for (int i = 0; i < 3; ++i)
    run(s);
  CUDART_CHECK(cudaStreamSynchronize(s));

  Timing t;
  t.itersPerBatch = opt.iters;
  if (t.itersPerBatch <= 0) {
    // Estimate from a short stream burst, then size batches to the target duration.
    float ms = 0;
    int64_t n = 1;
    while (true) {
      ms = ev.elapsed(s, [&] { for (int64_t i = 0; i < n; ++i) run(s); });
      if (ms >= 2.0f || n >= (1 << 16))
        break;
      n *= 4;
    }
    double per = std::max(ms / n, 1e-5f);
    t.itersPerBatch =
        std::max<int64_t>(5, static_cast<int64_t>(std::ceil(opt.targetBatchMs / per)));
  }

  // A graph of up to 200 runs, replayed; the batch is a whole number of replays.
  cudaGraphExec_t exec = nullptr;
  int64_t perGraph = std::min<int64_t>(t.itersPerBatch, 200);
  if (opt.useGraph)
    exec = capture(run, s, perGraph);
  int64_t replays = (t.itersPerBatch + perGraph - 1) / perGraph;
  if (exec) {
    t.itersPerBatch = replays * perGraph;
    t.method = "graph";
    CUDART_CHECK(cudaGraphLaunch(exec, s)); // upload + warm
    CUDART_CHECK(cudaStreamSynchronize(s));
  } else {
    t.method = "stream";
  }

  for (int b = 0; b < std::max(opt.batches, 1); ++b) {
    float ms = ev.elapsed(s, [&] {
      if (exec) {
        for (int64_t r = 0; r < replays; ++r)
          CUDART_CHECK(cudaGraphLaunch(exec, s));
      } else {
        for (int64_t i = 0; i < t.itersPerBatch; ++i)
          run(s);
      }
    });
    t.batchMs.push_back(ms / t.itersPerBatch);
  }
  if (exec)
    cudaGraphExecDestroy(exec);
  CUDART_CHECK(cudaGetLastError());

  std::vector<double> sorted = t.batchMs;
  std::sort(sorted.begin(), sorted.end());
  size_t m = sorted.size();
  t.medianMs = m % 2 ? sorted[m / 2] : 0.5 * (sorted[m / 2 - 1] + sorted[m / 2]);
  t.minMs = sorted.front();
  t.maxMs = sorted.back();
  return t;
}

Timing timeRuns(const std::function<void(cudaStream_t)> &run, cudaStream_t s,
                const TimingOptions &opt) {
  Timing t = measure(run, s, opt);
  if (opt.coldL2Bytes <= 0)
    return t;
  int64_t words = (opt.coldL2Bytes + 15) / 16;
  int4 *buf = nullptr;
  int *sink = nullptr;
  CUDART_CHECK(cudaMalloc(&buf, words * 16));
  CUDART_CHECK(cudaMalloc(&sink, sizeof(int)));
  CUDART_CHECK(cudaMemsetAsync(buf, 0, words * 16, s));
  auto read = [&](cudaStream_t st) { readThroughL2(buf, words, sink, st); };
  Timing both = measure(
      [&](cudaStream_t st) {
        read(st);
        run(st);
      },
      s, opt);
  Timing alone = measure(read, s, opt);
  CUDART_CHECK(cudaStreamSynchronize(s));
  cudaFree(buf);
  cudaFree(sink);
  t.hasCold = true;
  t.coldMedianMs = both.medianMs - alone.medianMs;
  t.coldReadMs = alone.medianMs;
  return t;
}

} // namespace bench
} // namespace spconv
