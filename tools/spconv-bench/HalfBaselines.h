//===- HalfBaselines.h - cuDNN FP16/BF16 contenders -------------*- C++ -*-===//
//
// cuDNN's legacy API on half-precision data (f16 or bf16 input, weights and output), FP32
// compute type, tensor cores allowed (CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION: Find may
// take any algorithm, with or without tensor cores), best algorithm from
// cudnnFindConvolutionForwardAlgorithm, in NCHW or NHWC. Like CudnnConv, run() enqueues
// the whole computation a user pays for: the explicit zero padding when the padding is
// asymmetric, the convolution, and the bias/activation epilogue. The NHWC contender takes
// its input and weights already channel-last: the layout change is the caller's, and
// untimed.
//
//===----------------------------------------------------------------------===//
#ifndef SPCONV_BENCH_HALFBASELINES_H
#define SPCONV_BENCH_HALFBASELINES_H

#include "HalfKernels.h"

#include "spconv/Runtime/LaunchConfig.h"

#include <cudnn.h>

#include <string>

namespace spconv {
namespace bench {

class CudnnHalfConv {
public:
  // x: N x C x H x W, w: K x C/groups x R x S, y: N x K x P x Q, each in layout `layout`
  // (NHWC: x NHWC, w KRSC, y NPQK) and type t; bias f32 (values of type t) or null.
  CudnnHalfConv(cudnnHandle_t h, const runtime::ConvDesc &conv, HalfType t, HalfLayout layout,
                const uint16_t *x, const uint16_t *w, const float *bias, uint16_t *y);
  ~CudnnHalfConv();
  CudnnHalfConv(const CudnnHalfConv &) = delete;
  CudnnHalfConv &operator=(const CudnnHalfConv &) = delete;

  void run(cudaStream_t s);
  std::string algoName() const;
  std::string mathName() const;
  size_t workspaceBytes() const { return wsBytes_; }

private:
  cudnnHandle_t h_;
  runtime::ConvDesc conv_;
  HalfType type_;
  HalfLayout layout_;
  cudnnTensorDescriptor_t xd_ = nullptr, yd_ = nullptr;
  cudnnFilterDescriptor_t wd_ = nullptr;
  cudnnConvolutionDescriptor_t cd_ = nullptr;
  cudnnConvolutionFwdAlgo_t algo_{};
  cudnnMathType_t chosenMath_{};
  void *ws_ = nullptr;
  size_t wsBytes_ = 0;
  const uint16_t *x_, *w_;
  const float *bias_;
  uint16_t *y_;
  // Asymmetric padding only: x_ copied into an explicitly zero-padded buffer.
  uint16_t *xPadded_ = nullptr;
  int padH_ = 0, padW_ = 0;
};

} // namespace bench
} // namespace spconv

#endif // SPCONV_BENCH_HALFBASELINES_H
