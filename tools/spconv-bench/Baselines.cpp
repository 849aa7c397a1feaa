//===- Baselines.cpp - cuDNN and cuSPARSE contenders ----------------------===//

#include "Baselines.h"
#include "CudaCheck.h"
#include "DeviceKernels.h"

#include <algorithm>
#include <stdexcept>

namespace spconv {
namespace bench {

static void cudnnCheck(cudnnStatus_t st, const char *call) {
  if (st != CUDNN_STATUS_SUCCESS)
    throw std::runtime_error(std::string(call) + " failed: " + cudnnGetErrorString(st));
}
#define CUDNN_CHECK(expr) cudnnCheck((expr), #expr)

static void cusparseCheck(cusparseStatus_t st, const char *call) {
  if (st != CUSPARSE_STATUS_SUCCESS)
    throw std::runtime_error(std::string(call) + " failed: " + cusparseGetErrorName(st) +
                             " (" + cusparseGetErrorString(st) + ")");
}
#define CUSPARSE_CHECK(expr) cusparseCheck((expr), #expr)

static bool needsEpilogue(const runtime::ConvDesc &c) {
  return c.hasBias || c.activation != "none";
}

//===----------------------------------------------------------------------===//
// cuDNN
//===----------------------------------------------------------------------===//

CudnnConv::CudnnConv(cudnnHandle_t h, const runtime::ConvDesc &c, cudnnMathType_t math,
                     int forcedAlgo, const float *x, const float *w, const float *bias,
                     float *y)
    : h_(h), conv_(c), x_(x), w_(w), bias_(bias), y_(y) {
  // The legacy descriptor API has one pad per dimension ([top,left,bottom,right] here).
  // Symmetric padding goes to cuDNN as is. Asymmetric padding: run() first copies the
  // input into an explicitly zero-padded buffer and cuDNN convolves that with padding 0
  // (same P x Q, dilation and stride unchanged).
  const bool asymmetric = c.padding[0] != c.padding[2] || c.padding[1] != c.padding[3];
  int64_t xH = c.H, xW = c.W, padTop = c.padding[0], padLeft = c.padding[1];
  if (asymmetric) {
    if (c.padding[0] < 0 || c.padding[1] < 0 || c.padding[2] < 0 || c.padding[3] < 0)
      throw std::runtime_error("cuDNN baseline: negative padding");
    padH_ = xH = c.H + c.padding[0] + c.padding[2];
    padW_ = xW = c.W + c.padding[1] + c.padding[3];
    padTop = padLeft = 0;
    CUDART_CHECK(cudaMalloc(&xPadded_, static_cast<size_t>(c.N * c.C * xH * xW) * sizeof(float)));
  }
  CUDNN_CHECK(cudnnCreateTensorDescriptor(&xd_));
  CUDNN_CHECK(cudnnCreateTensorDescriptor(&yd_));
  CUDNN_CHECK(cudnnCreateFilterDescriptor(&wd_));
  CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&cd_));
  CUDNN_CHECK(cudnnSetTensor4dDescriptor(xd_, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, c.N, c.C,
                                         xH, xW));
  CUDNN_CHECK(cudnnSetFilter4dDescriptor(wd_, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, c.K,
                                         c.C / c.groups, c.R, c.S));
  CUDNN_CHECK(cudnnSetConvolution2dDescriptor(cd_, padTop, padLeft, c.stride[0],
                                              c.stride[1], c.dilation[0], c.dilation[1],
                                              CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
  CUDNN_CHECK(cudnnSetConvolutionGroupCount(cd_, c.groups));
  CUDNN_CHECK(cudnnSetConvolutionMathType(cd_, math));
  int n, k, p, q;
  CUDNN_CHECK(cudnnGetConvolution2dForwardOutputDim(cd_, xd_, wd_, &n, &k, &p, &q));
  if (n != c.N || k != c.K || p != c.P || q != c.Q)
    throw std::runtime_error("cuDNN computes output " + std::to_string(n) + "x" +
                             std::to_string(k) + "x" + std::to_string(p) + "x" +
                             std::to_string(q) + ", the sidecar says " + std::to_string(c.N) +
                             "x" + std::to_string(c.K) + "x" + std::to_string(c.P) + "x" +
                             std::to_string(c.Q));
  CUDNN_CHECK(cudnnSetTensor4dDescriptor(yd_, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, n, k, p, q));

  // Find (below) runs the convolution on x: give it the padded input's real contents
  // (x may still be being written on the caller's stream, hence the device syncs).
  if (xPadded_ && forcedAlgo < 0) {
    CUDART_CHECK(cudaDeviceSynchronize());
    padInput(x_, xPadded_, c.N * c.C, c.H, c.W, padH_, padW_, c.padding[0], c.padding[1],
             nullptr);
    CUDART_CHECK(cudaDeviceSynchronize());
  }

  if (forcedAlgo >= 0) {
    algo_ = static_cast<cudnnConvolutionFwdAlgo_t>(forcedAlgo);
    chosenMath_ = math;
    CUDNN_CHECK(cudnnGetConvolutionForwardWorkspaceSize(h_, xd_, wd_, cd_, yd_, algo_, &wsBytes_));
  } else {
    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    int returned = 0;
    CUDNN_CHECK(cudnnFindConvolutionForwardAlgorithm(h_, xd_, wd_, cd_, yd_,
                                                     CUDNN_CONVOLUTION_FWD_ALGO_COUNT,
                                                     &returned, perf));
    int best = -1;
    for (int i = 0; i < returned && best < 0; ++i)
      if (perf[i].status == CUDNN_STATUS_SUCCESS &&
          (math != CUDNN_FMA_MATH || perf[i].mathType == CUDNN_FMA_MATH))
        best = i;
    if (best < 0)
      throw std::runtime_error("cudnnFindConvolutionForwardAlgorithm found no usable algorithm");
    algo_ = perf[best].algo;
    chosenMath_ = perf[best].mathType;
    wsBytes_ = perf[best].memory;
    // The result's math type is what the timed call must use (cuDNN may report
    // FMA for an algorithm even when tensor ops were allowed).
    CUDNN_CHECK(cudnnSetConvolutionMathType(cd_, chosenMath_));
  }
  if (wsBytes_)
    CUDART_CHECK(cudaMalloc(&ws_, wsBytes_));
}

CudnnConv::~CudnnConv() {
  if (ws_) cudaFree(ws_);
  if (xPadded_) cudaFree(xPadded_);
  if (cd_) cudnnDestroyConvolutionDescriptor(cd_);
  if (wd_) cudnnDestroyFilterDescriptor(wd_);
  if (yd_) cudnnDestroyTensorDescriptor(yd_);
  if (xd_) cudnnDestroyTensorDescriptor(xd_);
}

void CudnnConv::run(cudaStream_t s) {
  CUDNN_CHECK(cudnnSetStream(h_, s));
  const float one = 1.0f, zero = 0.0f;
  const float *x = x_;
  if (xPadded_) {
    // Asymmetric padding: the copy into the zero-padded buffer is part of the timed
    // work of this contender (a user of cuDNN's legacy API pays it too).
    const auto &c = conv_;
    padInput(x_, xPadded_, c.N * c.C, c.H, c.W, padH_, padW_, c.padding[0], c.padding[1], s);
    x = xPadded_;
  }
  CUDNN_CHECK(cudnnConvolutionForward(h_, &one, xd_, x, wd_, w_, cd_, algo_, ws_, wsBytes_,
                                      &zero, yd_, y_));
  if (needsEpilogue(conv_))
    biasActivation(y_, bias_, /*residual=*/nullptr, conv_.N, conv_.K, conv_.P * conv_.Q,
                   conv_.activation, s);
}

std::string CudnnConv::algoName() const {
  static const char *names[] = {"IMPLICIT_GEMM", "IMPLICIT_PRECOMP_GEMM", "GEMM", "DIRECT",
                                "FFT", "FFT_TILING", "WINOGRAD", "WINOGRAD_NONFUSED"};
  int a = static_cast<int>(algo_);
  return a >= 0 && a < 8 ? names[a] : "algo" + std::to_string(a);
}

std::string CudnnConv::mathName() const {
  switch (chosenMath_) {
  case CUDNN_DEFAULT_MATH: return "DEFAULT_MATH";
  case CUDNN_TENSOR_OP_MATH: return "TENSOR_OP_MATH";
  case CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION: return "TENSOR_OP_MATH_ALLOW_CONVERSION";
  case CUDNN_FMA_MATH: return "FMA_MATH";
  }
  return "math" + std::to_string(static_cast<int>(chosenMath_));
}

//===----------------------------------------------------------------------===//
// cuSPARSE: Y_n (K x PQ) = W (K x CRS, CSR) * im2col(X_n) (CRS x PQ). A grouped conv's W
// is block-diagonal: row k holds its C/groups x R x S weights at its group's columns.
//===----------------------------------------------------------------------===//

CusparseConv::CusparseConv(cusparseHandle_t h, const runtime::ConvDesc &c,
                           const std::vector<float> &w, const float *x, const float *bias,
                           float *y, cudaStream_t s)
    : h_(h), conv_(c), x_(x), bias_(bias), y_(y) {
  const int64_t CRS = c.C * c.R * c.S, PQ = c.P * c.Q;
  const int64_t groupCRS = CRS / c.groups, groupK = c.K / c.groups;
  std::vector<int> rowPtr(c.K + 1, 0), colIdx;
  std::vector<float> vals;
  for (int64_t k = 0; k < c.K; ++k) {
    int64_t firstColumn = k / groupK * groupCRS;
    for (int64_t j = 0; j < groupCRS; ++j) {
      float v = w[k * groupCRS + j];
      if (v != 0.0f) {
        colIdx.push_back(static_cast<int>(firstColumn + j));
        vals.push_back(v);
      }
    }
    rowPtr[k + 1] = static_cast<int>(vals.size());
  }
  const int64_t nnz = static_cast<int64_t>(vals.size());
  CUDART_CHECK(cudaMalloc(&rowPtr_, rowPtr.size() * sizeof(int)));
  CUDART_CHECK(cudaMalloc(&colIdx_, std::max<int64_t>(nnz, 1) * sizeof(int)));
  CUDART_CHECK(cudaMalloc(&vals_, std::max<int64_t>(nnz, 1) * sizeof(float)));
  CUDART_CHECK(cudaMemcpy(rowPtr_, rowPtr.data(), rowPtr.size() * sizeof(int),
                          cudaMemcpyHostToDevice));
  if (nnz) {
    CUDART_CHECK(cudaMemcpy(colIdx_, colIdx.data(), nnz * sizeof(int), cudaMemcpyHostToDevice));
    CUDART_CHECK(cudaMemcpy(vals_, vals.data(), nnz * sizeof(float), cudaMemcpyHostToDevice));
  }
  colsBytes_ = static_cast<size_t>(c.N * CRS * PQ) * sizeof(float);
  CUDART_CHECK(cudaMalloc(&cols_, colsBytes_));

  CUSPARSE_CHECK(cusparseCreateCsr(&a_, c.K, CRS, nnz, rowPtr_, colIdx_, vals_,
                                   CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                   CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
  CUSPARSE_CHECK(cusparseCreateDnMat(&b_, CRS, PQ, PQ, cols_, CUDA_R_32F, CUSPARSE_ORDER_ROW));
  CUSPARSE_CHECK(cusparseCreateDnMat(&c_, c.K, PQ, PQ, y_, CUDA_R_32F, CUSPARSE_ORDER_ROW));
  if (c.N > 1) {
    // One weight matrix broadcast over the batch (A's batch strides 0): Y_n = W * B_n,
    // whose row-major K x PQ blocks are exactly the NKPQ output.
    CUSPARSE_CHECK(cusparseCsrSetStridedBatch(a_, static_cast<int>(c.N), 0, 0));
    CUSPARSE_CHECK(cusparseDnMatSetStridedBatch(b_, static_cast<int>(c.N), CRS * PQ));
    CUSPARSE_CHECK(cusparseDnMatSetStridedBatch(c_, static_cast<int>(c.N), c.K * PQ));
  }
  CUSPARSE_CHECK(cusparseSetStream(h_, s));

  // Fill the columns once so the algorithm trial below times real data.
  Im2colShape sh{(int)c.N, (int)c.C, (int)c.H, (int)c.W, (int)c.R, (int)c.S, (int)c.P, (int)c.Q,
                 (int)c.stride[0], (int)c.stride[1], (int)c.padding[0], (int)c.padding[1],
                 (int)c.dilation[0], (int)c.dilation[1]};
  im2col(x_, cols_, sh, s);

  // Give cuSPARSE its best shot: try each CSR algorithm, keep the fastest that runs.
  const cusparseSpMMAlg_t algs[] = {CUSPARSE_SPMM_ALG_DEFAULT, CUSPARSE_SPMM_CSR_ALG1,
                                    CUSPARSE_SPMM_CSR_ALG2, CUSPARSE_SPMM_CSR_ALG3};
  const float one = 1.0f, zero = 0.0f;
  cudaEvent_t e0, e1;
  CUDART_CHECK(cudaEventCreate(&e0));
  CUDART_CHECK(cudaEventCreate(&e1));
  float bestMs = -1;
  std::string failures;
  for (cusparseSpMMAlg_t alg : algs) {
    size_t bytes = 0;
    void *buf = nullptr;
    auto st = cusparseSpMM_bufferSize(h_, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                      CUSPARSE_OPERATION_NON_TRANSPOSE, &one, a_, b_, &zero, c_,
                                      CUDA_R_32F, alg, &bytes);
    if (st == CUSPARSE_STATUS_SUCCESS && bytes && cudaMalloc(&buf, bytes) != cudaSuccess) {
      cudaGetLastError();
      st = CUSPARSE_STATUS_ALLOC_FAILED;
    }
    float ms = 0;
    if (st == CUSPARSE_STATUS_SUCCESS)
      st = cusparseSpMM(h_, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE,
                        &one, a_, b_, &zero, c_, CUDA_R_32F, alg, buf); // warm-up
    if (st == CUSPARSE_STATUS_SUCCESS) {
      CUDART_CHECK(cudaEventRecord(e0, s));
      for (int i = 0; i < 3 && st == CUSPARSE_STATUS_SUCCESS; ++i)
        st = cusparseSpMM(h_, CUSPARSE_OPERATION_NON_TRANSPOSE,
                          CUSPARSE_OPERATION_NON_TRANSPOSE, &one, a_, b_, &zero, c_, CUDA_R_32F,
                          alg, buf);
      CUDART_CHECK(cudaEventRecord(e1, s));
      CUDART_CHECK(cudaEventSynchronize(e1));
      CUDART_CHECK(cudaEventElapsedTime(&ms, e0, e1));
    }
    if (st != CUSPARSE_STATUS_SUCCESS) {
      failures += std::string(" alg") + std::to_string(static_cast<int>(alg)) + ":" +
                  cusparseGetErrorName(st);
      if (buf) cudaFree(buf);
      continue;
    }
    if (bestMs < 0 || ms < bestMs) {
      if (buf_) cudaFree(buf_);
      bestMs = ms;
      alg_ = alg;
      buf_ = buf;
      bufBytes_ = bytes;
    } else if (buf) {
      cudaFree(buf);
    }
  }
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  if (bestMs < 0)
    throw std::runtime_error("no cusparseSpMM algorithm ran:" + failures);
}

CusparseConv::~CusparseConv() {
  if (a_) cusparseDestroySpMat(a_);
  if (b_) cusparseDestroyDnMat(b_);
  if (c_) cusparseDestroyDnMat(c_);
  for (void *p : {(void *)rowPtr_, (void *)colIdx_, (void *)vals_, (void *)cols_, buf_})
    if (p) cudaFree(p);
}

void CusparseConv::spmm(cudaStream_t s) {
  const float one = 1.0f, zero = 0.0f;
  CUSPARSE_CHECK(cusparseSetStream(h_, s));
  CUSPARSE_CHECK(cusparseSpMM(h_, CUSPARSE_OPERATION_NON_TRANSPOSE,
                              CUSPARSE_OPERATION_NON_TRANSPOSE, &one, a_, b_, &zero, c_,
                              CUDA_R_32F, alg_, buf_));
}

void CusparseConv::run(cudaStream_t s) {
  const auto &c = conv_;
  Im2colShape sh{(int)c.N, (int)c.C, (int)c.H, (int)c.W, (int)c.R, (int)c.S, (int)c.P, (int)c.Q,
                 (int)c.stride[0], (int)c.stride[1], (int)c.padding[0], (int)c.padding[1],
                 (int)c.dilation[0], (int)c.dilation[1]};
  im2col(x_, cols_, sh, s);
  spmm(s);
  if (needsEpilogue(c))
    biasActivation(y_, bias_, /*residual=*/nullptr, c.N, c.K, c.P * c.Q, c.activation, s);
}

std::string CusparseConv::algName() const {
  switch (alg_) {
  case CUSPARSE_SPMM_ALG_DEFAULT: return "SPMM_ALG_DEFAULT";
  case CUSPARSE_SPMM_CSR_ALG1: return "SPMM_CSR_ALG1";
  case CUSPARSE_SPMM_CSR_ALG2: return "SPMM_CSR_ALG2";
  case CUSPARSE_SPMM_CSR_ALG3: return "SPMM_CSR_ALG3";
  default: return "alg" + std::to_string(static_cast<int>(alg_));
  }
}

} // namespace bench
} // namespace spconv
