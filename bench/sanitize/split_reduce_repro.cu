// The split-group reduction of spconv's kernels (lib/Conversion/SpconvToAffine,
// emitChannelBlock with --split-c 2), written by hand to ask compute-sanitizer's racecheck
// about its RAW reports on the partial sums (issue 28; docs/reliability.md, "GPU code").
//
// 256 threads in two warp groups of 128. Each group stages its own slice of the input into
// its own half of the shared tile and passes its own named barrier (bar.sync 1/2, 128)
// some number of times, sums the slice into 8 partial sums per thread, then
//   bar.sync 0;  group 1: st.shared partials;  bar.sync 0;  group 0: ld.shared, add, store.
// Variants (split_reduce.h's Bar0/Bar1: how often group 0/1 passes its named barrier):
//   inline          1/1, in the __global__ kernel
//   noinline        1/1, in a __noinline__ __device__ function of the same translation unit
//   extern          1/1, in a function of another translation unit (split_reduce_piece.cu,
//                   -rdc, linked by nvlink), as spconv's .func pieces are (ptxas -c, nvlink)
//   full            0/0: the whole block's barrier 0 instead of the named ones
//   uneven          1/3: the writing group passes more barriers than the reading one, as in
//                   resnet-conv2's split kernel (3 and 5)
//   uneven-extern   1/3 in the other translation unit
//   reader-more     3/1: the reading group passes more
//   padded          3/3: uneven, with the reading group padded to the same count (the
//                   construction proposed for spconv's template)
// Every variant checks its output on the host (exit 1 on a wrong sum): all are correct.
//
// Build (sm_90):  nvcc -arch=sm_90 -rdc=true -O3 split_reduce_repro.cu split_reduce_piece.cu
// Run:            compute-sanitizer --tool racecheck --racecheck-report all ./a.out VARIANT [BLOCKS]
#include "split_reduce.h"

#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

__device__ __noinline__ void splitReduceNoinline(const float *in, float *out) {
  splitReduceBody<1, 1>(in, out);
}

template <int Bar0, int Bar1>
__global__ void __launch_bounds__(kThreads) splitInline(const float *in, float *out) {
  splitReduceBody<Bar0, Bar1>(in, out);
}

__global__ void __launch_bounds__(kThreads) splitNoinline(const float *in, float *out) {
  splitReduceNoinline(in, out);
}

__global__ void __launch_bounds__(kThreads) splitExtern(const float *in, float *out) {
  splitReducePiece(in, out);
}

__global__ void __launch_bounds__(kThreads) splitExternUneven(const float *in, float *out) {
  splitReducePieceUneven(in, out);
}

int main(int argc, char **argv) {
  const int blocks = argc > 2 ? std::atoi(argv[2]) : 64;
  const size_t inCount = (size_t)blocks * kGroups * kChunk, outCount = (size_t)blocks * kGroupThreads * kAcc;
  std::vector<float> hin(inCount);
  for (size_t i = 0; i < inCount; ++i)
    hin[i] = (float)((i * 7919) % 17) - 8.0f;
  // Reference: out[b][t][a] = sum over groups g of sum_j in[b][g][(t + a * 3 + j) % kChunk]
  // for j < kTaps (integers: exact in float).
  std::vector<float> ref(outCount);
  for (int b = 0; b < blocks; ++b)
    for (int t = 0; t < kGroupThreads; ++t)
      for (int a = 0; a < kAcc; ++a) {
        float s = 0;
        for (int g = 0; g < kGroups; ++g)
          for (int j = 0; j < kTaps; ++j)
            s += hin[((size_t)b * kGroups + g) * kChunk + (t + a * 3 + j) % kChunk];
        ref[((size_t)b * kGroupThreads + t) * kAcc + a] = s;
      }
  float *din, *dout;
  cudaMalloc(&din, inCount * sizeof(float));
  cudaMalloc(&dout, outCount * sizeof(float));
  cudaMemcpy(din, hin.data(), inCount * sizeof(float), cudaMemcpyHostToDevice);
  const char *which = argc > 1 ? argv[1] : "all";
  struct Variant {
    const char *name;
    void (*kernel)(const float *, float *);
  } variants[] = {{"inline", splitInline<1, 1>},      {"noinline", splitNoinline},
                  {"extern", splitExtern},             {"full", splitInline<0, 0>},
                  {"uneven", splitInline<1, 3>},       {"uneven-extern", splitExternUneven},
                  {"reader-more", splitInline<3, 1>},  {"padded", splitInline<3, 3>}};
  int bad = 0;
  for (const Variant &v : variants) {
    if (std::string_view(which) != "all" && std::string_view(which) != v.name)
      continue;
    cudaMemset(dout, 0xff, outCount * sizeof(float)); // NaN
    v.kernel<<<blocks, kThreads>>>(din, dout);
    cudaError_t e = cudaDeviceSynchronize();
    std::vector<float> hout(outCount);
    cudaMemcpy(hout.data(), dout, outCount * sizeof(float), cudaMemcpyDeviceToHost);
    size_t wrong = 0;
    for (size_t i = 0; i < outCount; ++i)
      wrong += hout[i] != ref[i];
    printf("%-13s %s, %zu of %zu outputs wrong\n", v.name, cudaGetErrorString(e), wrong, outCount);
    bad |= e != cudaSuccess || wrong != 0;
  }
  cudaFree(din);
  cudaFree(dout);
  return bad;
}
