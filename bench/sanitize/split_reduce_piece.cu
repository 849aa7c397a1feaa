// The "extern" variants' bodies, alone in their translation unit as a spconv .func piece is
// alone in its PTX unit (split_reduce_repro.cu).
#include "split_reduce.h"

extern "C" __device__ __noinline__ void splitReducePiece(const float *in, float *out) {
  splitReduceBody<1, 1>(in, out);
}

extern "C" __device__ __noinline__ void splitReducePieceUneven(const float *in, float *out) {
  splitReduceBody<1, 3>(in, out);
}
