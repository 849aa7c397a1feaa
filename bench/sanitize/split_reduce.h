// The body shared by the variants of split_reduce_repro.cu (see there).
#ifndef SPCONV_SPLIT_REDUCE_H
#define SPCONV_SPLIT_REDUCE_H

#include <cuda_runtime.h>

constexpr int kThreads = 256, kGroups = 2, kGroupThreads = kThreads / kGroups;
constexpr int kAcc = 8;     // partial sums per thread (block-k 8)
constexpr int kChunk = 512; // floats each group stages
constexpr int kTaps = 9;    // staged elements each partial sum adds

// In another translation unit (split_reduce_piece.cu): only nvlink sees it and the entry.
extern "C" __device__ void splitReducePiece(const float *in, float *out);
extern "C" __device__ void splitReducePieceUneven(const float *in, float *out);

/// Group g passes its own named barrier (bar.sync g + 1, 128) Bar0 (group 0) or Bar1
/// (group 1) times, as spconv's groups do once or twice per staged chunk; Bar0 = Bar1 = 0
/// syncs the staging with the whole block's barrier 0 instead. Then the reduction:
///   bar.sync 0;  group 1: st.shared partials;  bar.sync 0;  group 0: ld.shared, add, store.
template <int Bar0, int Bar1>
__device__ __forceinline__ void splitReduceBody(const float *in, float *out) {
  // Group g's staged chunk at tile[g * kChunk]; the partial sums later reuse tile[0...].
  __shared__ float tile[kGroups * kChunk];
  const int tid = threadIdx.x, group = tid / kGroupThreads, gtid = tid % kGroupThreads;
  const float *src = in + ((size_t)blockIdx.x * kGroups + group) * kChunk;
  float *mine = tile + group * kChunk;
  for (int i = gtid; i < kChunk; i += kGroupThreads)
    mine[i] = src[i];
  if (Bar0 == 0 && Bar1 == 0) {
    asm volatile("bar.sync 0;" ::: "memory");
  } else {
    int times = group == 0 ? Bar0 : Bar1;
    for (int i = 0; i < times; ++i)
      asm volatile("bar.sync %0, %1;" ::"r"(group + 1), "r"(kGroupThreads) : "memory");
  }
  float acc[kAcc];
#pragma unroll
  for (int a = 0; a < kAcc; ++a) {
    float s = 0;
#pragma unroll
    for (int j = 0; j < kTaps; ++j)
      s += mine[(gtid + a * 3 + j) % kChunk];
    acc[a] = s;
  }
  // Every group is done with its tile: the partial sums may overwrite them.
  asm volatile("bar.sync 0;" ::: "memory");
  if (group != 0) {
#pragma unroll
    for (int a = 0; a < kAcc; ++a)
      tile[((group - 1) * kAcc + a) * kGroupThreads + gtid] = acc[a];
  }
  asm volatile("bar.sync 0;" ::: "memory");
  if (group == 0) {
#pragma unroll
    for (int a = 0; a < kAcc; ++a) {
      float s = acc[a];
      for (int g = 1; g < kGroups; ++g)
        s += tile[((g - 1) * kAcc + a) * kGroupThreads + gtid];
      out[((size_t)blockIdx.x * kGroupThreads + gtid) * kAcc + a] = s;
    }
  }
}

#endif // SPCONV_SPLIT_REDUCE_H
