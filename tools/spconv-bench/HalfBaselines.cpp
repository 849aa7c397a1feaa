//===- HalfBaselines.cpp - cuDNN FP16/BF16 contenders ---------------------===//

#include "HalfBaselines.h"
#include "CudaCheck.h"

#include <stdexcept>

namespace spconv {
namespace bench {

static void cudnnCheck(cudnnStatus_t st, const char *call) {
  if (st != CUDNN_STATUS_SUCCESS)
    throw std::runtime_error(std::string(call) + " failed: " + cudnnGetErrorString(st));
}
#define CUDNN_CHECK(expr) cudnnCheck((expr), #expr)

CudnnHalfConv::CudnnHalfConv(cudnnHandle_t h, const runtime::ConvDesc &c, HalfType t,
                             HalfLayout layout, const uint16_t *x, const uint16_t *w,
                             const float *bias, uint16_t *y)
    : h_(h), conv_(c), type_(t), layout_(layout), x_(x), w_(w), bias_(bias), y_(y) {
  const cudnnDataType_t data = t == HalfType::BF16 ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_HALF;
  const cudnnTensorFormat_t format =
      layout == HalfLayout::NHWC ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
  // Padding as CudnnConv handles it: symmetric goes to cuDNN, asymmetric through an
  // explicitly zero-padded copy convolved with padding 0.
  const bool asymmetric = c.padding[0] != c.padding[2] || c.padding[1] != c.padding[3];
  int64_t xH = c.H, xW = c.W, padTop = c.padding[0], padLeft = c.padding[1];
  if (asymmetric) {
    if (c.padding[0] < 0 || c.padding[1] < 0 || c.padding[2] < 0 || c.padding[3] < 0)
      throw std::runtime_error("cuDNN half baseline: negative padding");
    xH = c.H + c.padding[0] + c.padding[2];
    xW = c.W + c.padding[1] + c.padding[3];
    padH_ = static_cast<int>(xH);
    padW_ = static_cast<int>(xW);
    padTop = padLeft = 0;
    CUDART_CHECK(cudaMalloc(&xPadded_, static_cast<size_t>(c.N * c.C * xH * xW) * 2));
  }
  CUDNN_CHECK(cudnnCreateTensorDescriptor(&xd_));
  CUDNN_CHECK(cudnnCreateTensorDescriptor(&yd_));
  CUDNN_CHECK(cudnnCreateFilterDescriptor(&wd_));
  CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&cd_));
  CUDNN_CHECK(cudnnSetTensor4dDescriptor(xd_, format, data, c.N, c.C, xH, xW));
  CUDNN_CHECK(cudnnSetFilter4dDescriptor(wd_, data, format, c.K, c.C / c.groups, c.R, c.S));
  // FP32 compute type on half data: cuDNN's PSEUDO_HALF / PSEUDO_BFLOAT16 configurations.
  CUDNN_CHECK(cudnnSetConvolution2dDescriptor(cd_, padTop, padLeft, c.stride[0], c.stride[1],
                                              c.dilation[0], c.dilation[1],
                                              CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
  CUDNN_CHECK(cudnnSetConvolutionGroupCount(cd_, c.groups));
  CUDNN_CHECK(cudnnSetConvolutionMathType(cd_, CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION));
  int n, k, p, q;
  CUDNN_CHECK(cudnnGetConvolution2dForwardOutputDim(cd_, xd_, wd_, &n, &k, &p, &q));
  if (n != c.N || k != c.K || p != c.P || q != c.Q)
    throw std::runtime_error("cuDNN computes output " + std::to_string(n) + "x" +
                             std::to_string(k) + "x" + std::to_string(p) + "x" +
                             std::to_string(q) + ", the sidecar says " + std::to_string(c.N) +
                             "x" + std::to_string(c.K) + "x" + std::to_string(c.P) + "x" +
                             std::to_string(c.Q));
  CUDNN_CHECK(cudnnSetTensor4dDescriptor(yd_, format, data, n, k, p, q));

  cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
  int returned = 0;
  CUDNN_CHECK(cudnnFindConvolutionForwardAlgorithm(h_, xd_, wd_, cd_, yd_,
                                                   CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &returned,
                                                   perf));
  int best = -1;
  for (int i = 0; i < returned && best < 0; ++i)
    if (perf[i].status == CUDNN_STATUS_SUCCESS)
      best = i;
  if (best < 0)
    throw std::runtime_error("cudnnFindConvolutionForwardAlgorithm found no usable " +
                             std::string(halfTypeName(t)) + " algorithm");
  algo_ = perf[best].algo;
  chosenMath_ = perf[best].mathType;
  wsBytes_ = perf[best].memory;
  CUDNN_CHECK(cudnnSetConvolutionMathType(cd_, chosenMath_));
  if (wsBytes_)
    CUDART_CHECK(cudaMalloc(&ws_, wsBytes_));
}

CudnnHalfConv::~CudnnHalfConv() {
  if (ws_) cudaFree(ws_);
  if (xPadded_) cudaFree(xPadded_);
  if (cd_) cudnnDestroyConvolutionDescriptor(cd_);
  if (wd_) cudnnDestroyFilterDescriptor(wd_);
  if (yd_) cudnnDestroyTensorDescriptor(yd_);
  if (xd_) cudnnDestroyTensorDescriptor(xd_);
}

void CudnnHalfConv::run(cudaStream_t s) {
  CUDNN_CHECK(cudnnSetStream(h_, s));
  const float one = 1.0f, zero = 0.0f; // FP32 compute type: float scaling factors
  const uint16_t *x = x_;
  const auto &c = conv_;
  if (xPadded_) {
    padInputHalf(x_, xPadded_, c.N, c.C, c.H, c.W, padH_, padW_, c.padding[0], c.padding[1],
                 layout_, s);
    x = xPadded_;
  }
  CUDNN_CHECK(cudnnConvolutionForward(h_, &one, xd_, x, wd_, w_, cd_, algo_, ws_, wsBytes_,
                                      &zero, yd_, y_));
  if (c.hasBias || c.activation != "none")
    biasActivationHalf(y_, bias_, c.N, c.K, c.P * c.Q, c.activation, layout_, type_, s);
}

std::string CudnnHalfConv::algoName() const {
  static const char *names[] = {"IMPLICIT_GEMM", "IMPLICIT_PRECOMP_GEMM", "GEMM", "DIRECT",
                                "FFT", "FFT_TILING", "WINOGRAD", "WINOGRAD_NONFUSED"};
  int a = static_cast<int>(algo_);
  return a >= 0 && a < 8 ? names[a] : "algo" + std::to_string(a);
}

std::string CudnnHalfConv::mathName() const {
  switch (chosenMath_) {
  case CUDNN_DEFAULT_MATH: return "DEFAULT_MATH";
  case CUDNN_TENSOR_OP_MATH: return "TENSOR_OP_MATH";
  case CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION: return "TENSOR_OP_MATH_ALLOW_CONVERSION";
  case CUDNN_FMA_MATH: return "FMA_MATH";
  }
  return "math" + std::to_string(static_cast<int>(chosenMath_));
}

} // namespace bench
} // namespace spconv
