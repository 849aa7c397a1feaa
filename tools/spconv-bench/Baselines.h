//===- Baselines.h - cuDNN and cuSPARSE contenders --------------*- C++ -*-===//
//
// Each contender owns its descriptors and scratch memory, and exposes run(stream),
// which enqueues the whole computation (conv + bias/ReLU epilogue, for cuSPARSE the
// im2col, and for cuDNN with asymmetric padding the copy into a zero-padded input) so the timer measures what a user of that library would pay.
//
//===----------------------------------------------------------------------===//
#ifndef SPCONV_BENCH_BASELINES_H
#define SPCONV_BENCH_BASELINES_H

#include "spconv/Runtime/LaunchConfig.h"

#include <cudnn.h>
#include <cusparse.h>

#include <string>
#include <vector>

namespace spconv {
namespace bench {

class CudnnConv {
public:
  // forcedAlgo < 0: best of cudnnFindConvolutionForwardAlgorithm for `math`.
  CudnnConv(cudnnHandle_t h, const runtime::ConvDesc &conv, cudnnMathType_t math,
            int forcedAlgo, const float *x, const float *w, const float *bias, float *y);
  ~CudnnConv();
  CudnnConv(const CudnnConv &) = delete;
  CudnnConv &operator=(const CudnnConv &) = delete;

  void run(cudaStream_t s);
  std::string algoName() const;
  size_t workspaceBytes() const { return wsBytes_; }
  bool usedTensorCores() const { return chosenMath_ != CUDNN_FMA_MATH; }
  std::string mathName() const;

private:
  cudnnHandle_t h_;
  runtime::ConvDesc conv_;
  cudnnTensorDescriptor_t xd_ = nullptr, yd_ = nullptr;
  cudnnFilterDescriptor_t wd_ = nullptr;
  cudnnConvolutionDescriptor_t cd_ = nullptr;
  cudnnConvolutionFwdAlgo_t algo_{};
  cudnnMathType_t chosenMath_{};
  void *ws_ = nullptr;
  size_t wsBytes_ = 0;
  const float *x_, *w_, *bias_;
  float *y_;
  // Asymmetric padding only: x_ copied into an explicitly zero-padded
  // N x C x (H+top+bottom) x (W+left+right) buffer, convolved with padding 0.
  float *xPadded_ = nullptr;
  int64_t padH_ = 0, padW_ = 0;
};

class CusparseConv {
public:
  // hostWeights: KCRS, groups == 1. Picks the fastest SpMM algorithm that runs.
  CusparseConv(cusparseHandle_t h, const runtime::ConvDesc &conv,
               const std::vector<float> &hostWeights, const float *x, const float *bias,
               float *y, cudaStream_t s);
  ~CusparseConv();
  CusparseConv(const CusparseConv &) = delete;
  CusparseConv &operator=(const CusparseConv &) = delete;

  void run(cudaStream_t s);
  std::string algName() const;
  size_t scratchBytes() const { return colsBytes_ + bufBytes_; }

private:
  void spmm(cudaStream_t s);

  cusparseHandle_t h_;
  runtime::ConvDesc conv_;
  const float *x_, *bias_;
  float *y_;
  int *rowPtr_ = nullptr, *colIdx_ = nullptr;
  float *vals_ = nullptr, *cols_ = nullptr;
  size_t colsBytes_ = 0;
  void *buf_ = nullptr;
  size_t bufBytes_ = 0;
  cusparseSpMatDescr_t a_ = nullptr;
  cusparseDnMatDescr_t b_ = nullptr, c_ = nullptr;
  cusparseSpMMAlg_t alg_ = CUSPARSE_SPMM_ALG_DEFAULT;
};

} // namespace bench
} // namespace spconv

#endif // SPCONV_BENCH_BASELINES_H
