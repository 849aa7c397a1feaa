//===- HalfKernels.cu - Half-precision helpers for spconv-bench -----------===//

#include "HalfKernels.h"
#include "CudaCheck.h"
#include "spconv/Runtime/ImagePairs.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <stdexcept>

namespace spconv {
namespace bench {

namespace {

unsigned gridFor(int64_t n, int block) {
  int64_t g = (n + block - 1) / block;
  return static_cast<unsigned>(std::min<int64_t>(std::max<int64_t>(g, 1), 65535 * 16));
}

#define GRID_STRIDE(i, n)                                                                  \
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < (n);               \
       i += (int64_t)gridDim.x * blockDim.x)

__device__ inline uint16_t toHalfBits(float v, bool bf16) {
  return bf16 ? __bfloat16_as_ushort(__float2bfloat16_rn(v)) : __half_as_ushort(__float2half_rn(v));
}

__device__ inline float fromHalfBits(uint16_t b, bool bf16) {
  return bf16 ? __bfloat162float(__ushort_as_bfloat16(b)) : __half2float(__ushort_as_half(b));
}

__global__ void roundKernel(const float *x, uint16_t *h, float *r, int64_t n, bool bf16) {
  GRID_STRIDE(i, n) {
    uint16_t b = toHalfBits(x[i], bf16);
    h[i] = b;
    if (r)
      r[i] = fromHalfBits(b, bf16);
  }
}

__global__ void absKernel(const float *x, float *y, int64_t n) {
  GRID_STRIDE(i, n) { y[i] = fabsf(x[i]); }
}

__global__ void fillKernel(uint16_t *y, int64_t n, uint16_t v) {
  GRID_STRIDE(i, n) { y[i] = v; }
}

__global__ void nhwcKernel(const uint16_t *__restrict__ src, uint16_t *__restrict__ dst,
                           int64_t C, int64_t HW, int64_t total) {
  GRID_STRIDE(i, total) {
    int64_t c = i % C, t = i / C;
    int64_t hw = t % HW, n = t / HW;
    dst[i] = src[(n * C + c) * HW + hw];
  }
}

// Where element i (row-major N x C x HW) of a half tensor lies in layout l's storage.
__host__ __device__ inline int64_t storedIndex(int64_t i, HalfLayout l, int64_t N, int64_t C,
                                               int64_t HW) {
  int64_t perImage = C * HW, n = i / perImage, rem = i % perImage;
  if (l == HalfLayout::NHWC)
    return (n * HW + rem % HW) * C + rem / HW;
  if (l == HalfLayout::ImagePairs)
    return runtime::imagePairsIndex(i, N, perImage);
  return i;
}

__global__ void imagePairsKernel(const uint16_t *__restrict__ src, uint16_t *__restrict__ dst,
                                 int64_t N, int64_t perImage, int64_t total) {
  GRID_STRIDE(i, total) { dst[runtime::imagePairsIndex(i, N, perImage)] = src[i]; }
}

__global__ void padKernel(const uint16_t *__restrict__ x, uint16_t *__restrict__ xp, int64_t C,
                          int H, int W, int Hp, int Wp, int top, int left, bool nhwc,
                          int64_t total) {
  GRID_STRIDE(i, total) {
    int64_t c, n;
    int h, w;
    if (nhwc) {
      c = i % C;
      int64_t t = i / C;
      w = static_cast<int>(t % Wp);
      t /= Wp;
      h = static_cast<int>(t % Hp);
      n = t / Hp;
    } else {
      w = static_cast<int>(i % Wp);
      int64_t t = i / Wp;
      h = static_cast<int>(t % Hp);
      t /= Hp;
      c = t % C;
      n = t / C;
    }
    h -= top;
    w -= left;
    uint16_t v = 0; // +0 in both types
    if (h >= 0 && h < H && w >= 0 && w < W)
      v = nhwc ? x[((n * H + h) * W + w) * C + c] : x[((n * C + c) * H + h) * W + w];
    xp[i] = v;
  }
}

__global__ void biasActHalfKernel(uint16_t *y, const float *bias, int64_t K, int64_t PQ,
                                  int64_t total, int act, bool nhwc, bool bf16) {
  GRID_STRIDE(i, total) {
    float v = fromHalfBits(y[i], bf16);
    if (bias)
      v += bias[nhwc ? i % K : (i / PQ) % K];
    if (act >= 1) // relu, relu6
      v = fmaxf(v, 0.0f);
    if (act == 2) // relu6
      v = fminf(v, 6.0f);
    y[i] = toHalfBits(v, bf16);
  }
}

struct CheckAccum {
  unsigned long long violations;
  unsigned long long nonFinite;
  unsigned long long refNonFinite;   // ref or absref: a reference not fully written
  unsigned long long worstKey;       // (max ratio's float bits << 32) | index
  unsigned long long firstViolation; // min index outside the bound
  unsigned maxAbsDiffBits;           // non-negative floats order like their bit patterns
  unsigned maxAbsRefBits;
  unsigned maxElemRelBits;
  double sumSqDiff;
  double sumSqRef;
};

struct CheckArgs {
  const uint16_t *y;
  const float *ref, *absref;
  int64_t n, N, K, PQ; // n = N * K * PQ elements
  HalfLayout layout;
  bool bf16;
  double uT, tinyT;  // u * T, T * tiny
  float relFloor;    // pass 2 only (< 0 in pass 1)
};

// Pass 1 (relFloor < 0): the bound, maxima, sums and counts. Pass 2: element-wise relative
// error, which needs max|ref| for its floor.
__global__ void checkKernel(CheckArgs a, CheckAccum *acc) {
  unsigned long long bad = 0, nonFinite = 0, refBad = 0, worst = 0, first = ~0ull;
  float maxDiff = 0, maxRef = 0, maxRel = 0;
  double sd = 0, sr = 0;
  GRID_STRIDE(i, a.n) {
    int64_t j = storedIndex(i, a.layout, a.N, a.K, a.PQ);
    float yv = fromHalfBits(a.y[j], a.bf16), r = a.ref[i], ar = a.absref[i];
    if (!isfinite(r) || !isfinite(ar)) {
      if (a.relFloor < 0)
        ++refBad;
      continue;
    }
    if (a.relFloor >= 0) {
      if (isfinite(yv))
        maxRel = fmaxf(maxRel, fabsf(yv - r) / fmaxf(fabsf(r), a.relFloor));
      continue;
    }
    maxRef = fmaxf(maxRef, fabsf(r));
    sr += (double)r * r;
    double d = fabs((double)yv - (double)r);
    double bound = a.uT * (double)ar + a.tinyT;
    float ratio;
    if (!isfinite(yv)) {
      ++nonFinite;
      ratio = INFINITY;
    } else {
      maxDiff = fmaxf(maxDiff, (float)d);
      sd += d * d;
      ratio = (float)(d / bound);
    }
    if (!(d <= bound)) {
      ++bad;
      first = min(first, (unsigned long long)i);
    }
    unsigned long long key =
        ((unsigned long long)__float_as_uint(ratio) << 32) | (unsigned long long)(uint32_t)i;
    worst = max(worst, key);
  }
  for (int off = 16; off > 0; off >>= 1) {
    bad += __shfl_down_sync(0xffffffff, bad, off);
    nonFinite += __shfl_down_sync(0xffffffff, nonFinite, off);
    refBad += __shfl_down_sync(0xffffffff, refBad, off);
    worst = max(worst, __shfl_down_sync(0xffffffff, worst, off));
    first = min(first, __shfl_down_sync(0xffffffff, first, off));
    maxDiff = fmaxf(maxDiff, __shfl_down_sync(0xffffffff, maxDiff, off));
    maxRef = fmaxf(maxRef, __shfl_down_sync(0xffffffff, maxRef, off));
    maxRel = fmaxf(maxRel, __shfl_down_sync(0xffffffff, maxRel, off));
    sd += __shfl_down_sync(0xffffffff, sd, off);
    sr += __shfl_down_sync(0xffffffff, sr, off);
  }
  if ((threadIdx.x & 31) != 0)
    return;
  if (a.relFloor >= 0) {
    atomicMax(&acc->maxElemRelBits, __float_as_uint(maxRel));
    return;
  }
  if (bad)
    atomicAdd(&acc->violations, bad);
  if (nonFinite)
    atomicAdd(&acc->nonFinite, nonFinite);
  if (refBad)
    atomicAdd(&acc->refNonFinite, refBad);
  atomicMax(&acc->worstKey, worst);
  atomicMin(&acc->firstViolation, first);
  atomicMax(&acc->maxAbsDiffBits, __float_as_uint(maxDiff));
  atomicMax(&acc->maxAbsRefBits, __float_as_uint(maxRef));
  atomicAdd(&acc->sumSqDiff, sd);
  atomicAdd(&acc->sumSqRef, sr);
}

template <typename T> T fetch(const T *p, int64_t i) {
  T v{};
  CUDART_CHECK(cudaMemcpy(&v, p + i, sizeof v, cudaMemcpyDeviceToHost));
  return v;
}

float hostFromHalfBits(uint16_t b, HalfType t) {
  if (t == HalfType::BF16) {
    uint32_t bits = static_cast<uint32_t>(b) << 16;
    return __builtin_bit_cast(float, bits);
  }
  return __half2float(__ushort_as_half(b));
}

} // namespace

bool parseHalfType(const std::string &dtype, HalfType &t) {
  if (dtype == "f16")
    t = HalfType::F16;
  else if (dtype == "bf16")
    t = HalfType::BF16;
  else
    return false;
  return true;
}

const char *halfTypeName(HalfType t) { return t == HalfType::BF16 ? "bf16" : "f16"; }

double halfUnitRoundoff(HalfType t) {
  return t == HalfType::BF16 ? std::ldexp(1.0, -8) : std::ldexp(1.0, -11);
}

double halfTiny(HalfType t) {
  return t == HalfType::BF16 ? std::ldexp(1.0, -133) : std::ldexp(1.0, -24);
}

void roundToHalf(const float *x, uint16_t *h, float *r, int64_t n, HalfType t, cudaStream_t s) {
  roundKernel<<<gridFor(n, 256), 256, 0, s>>>(x, h, r, n, t == HalfType::BF16);
  CUDART_CHECK(cudaGetLastError());
}

void absolute(const float *x, float *y, int64_t n, cudaStream_t s) {
  absKernel<<<gridFor(n, 256), 256, 0, s>>>(x, y, n);
  CUDART_CHECK(cudaGetLastError());
}

void fillNaNHalf(uint16_t *y, int64_t n, HalfType t, cudaStream_t s) {
  fillKernel<<<gridFor(n, 256), 256, 0, s>>>(y, n, t == HalfType::BF16 ? 0x7FC0 : 0x7E00);
  CUDART_CHECK(cudaGetLastError());
}

void nchwToNhwcHalf(const uint16_t *src, uint16_t *dst, int64_t N, int64_t C, int64_t HW,
                    cudaStream_t s) {
  int64_t total = N * C * HW;
  nhwcKernel<<<gridFor(total, 256), 256, 0, s>>>(src, dst, C, HW, total);
  CUDART_CHECK(cudaGetLastError());
}

void nchwToImagePairsHalf(const uint16_t *src, uint16_t *dst, int64_t N, int64_t perImage,
                          cudaStream_t s) {
  if (N % 2 != 0)
    throw std::runtime_error("image-pair layout: odd batch " + std::to_string(N));
  int64_t total = N * perImage;
  imagePairsKernel<<<gridFor(total, 256), 256, 0, s>>>(src, dst, N, perImage, total);
  CUDART_CHECK(cudaGetLastError());
}

void padInputHalf(const uint16_t *x, uint16_t *xp, int64_t N, int64_t C, int H, int W, int Hp,
                  int Wp, int top, int left, HalfLayout l, cudaStream_t s) {
  int64_t total = N * C * Hp * Wp;
  padKernel<<<gridFor(total, 256), 256, 0, s>>>(x, xp, C, H, W, Hp, Wp, top, left,
                                                l == HalfLayout::NHWC, total);
  CUDART_CHECK(cudaGetLastError());
}

void biasActivationHalf(uint16_t *y, const float *bias, int64_t N, int64_t K, int64_t PQ,
                        const std::string &activation, HalfLayout l, HalfType t,
                        cudaStream_t s) {
  int act = activation == "relu6" ? 2 : activation == "relu" ? 1 : 0;
  int64_t total = N * K * PQ;
  biasActHalfKernel<<<gridFor(total, 256), 256, 0, s>>>(
      y, bias, K, PQ, total, act, l == HalfLayout::NHWC, t == HalfType::BF16);
  CUDART_CHECK(cudaGetLastError());
}

double HalfCheckResult::maxRel() const {
  if (nonFinite)
    return INFINITY;
  return maxAbsDiff / std::max(maxAbsRef, (double)FLT_MIN);
}

HalfCheckResult checkHalf(const uint16_t *y, HalfLayout l, HalfType t, const float *ref,
                          const float *absref, int64_t N, int64_t K, int64_t PQ,
                          const HalfBound &bound, cudaStream_t s) {
  const int64_t n = N * K * PQ;
  if (n >= (int64_t(1) << 32))
    throw std::runtime_error("half check: more than 2^32 output elements");
  CheckAccum *acc = nullptr;
  CUDART_CHECK(cudaMalloc(&acc, sizeof(CheckAccum)));
  CheckAccum h{};
  h.firstViolation = ~0ull;
  CUDART_CHECK(cudaMemcpyAsync(acc, &h, sizeof h, cudaMemcpyHostToDevice, s));
  CheckArgs a{y,    ref,  absref, n, N, K, PQ, l, t == HalfType::BF16,
              bound.unitRoundoff * bound.errorTerms, bound.errorTerms * bound.tiny, -1.0f};
  unsigned grid = std::min<unsigned>(gridFor(n, 256), 132 * 16);
  HalfCheckResult r;
  r.elements = n;
  try {
    checkKernel<<<grid, 256, 0, s>>>(a, acc);
    CUDART_CHECK(cudaGetLastError());
    CUDART_CHECK(cudaMemcpyAsync(&h, acc, sizeof h, cudaMemcpyDeviceToHost, s));
    CUDART_CHECK(cudaStreamSynchronize(s));
    if (h.refNonFinite)
      throw std::runtime_error("half check: the FP32 reference has " +
                               std::to_string(h.refNonFinite) +
                               " non-finite or unwritten elements (ref or absref)");
    r.violations = h.violations;
    r.nonFinite = h.nonFinite;
    r.maxAbsDiff = __builtin_bit_cast(float, h.maxAbsDiffBits);
    r.maxAbsRef = __builtin_bit_cast(float, h.maxAbsRefBits);
    r.relL2 = h.sumSqRef > 0 ? std::sqrt(h.sumSqDiff / h.sumSqRef) : 0.0;
    r.firstViolation = h.firstViolation == ~0ull ? -1 : static_cast<int64_t>(h.firstViolation);
    r.maxErrOverBound = __builtin_bit_cast(float, static_cast<uint32_t>(h.worstKey >> 32));
    if (n > 0) {
      r.worstIndex = static_cast<int64_t>(h.worstKey & 0xffffffffull);
      int64_t i = r.worstIndex, j = storedIndex(i, l, N, K, PQ);
      r.worstY = hostFromHalfBits(fetch(y, j), t);
      r.worstRef = fetch(ref, i);
      r.worstAbsRef = fetch(absref, i);
      r.worstBound = a.uT * r.worstAbsRef + a.tinyT;
    }
    // Near zero crossings a pure element-wise ratio measures cancellation, not error:
    // floor the denominator at 1e-3 of the output's scale (as the f32 check does).
    a.relFloor = std::max((float)(1e-3 * r.maxAbsRef), FLT_MIN);
    checkKernel<<<grid, 256, 0, s>>>(a, acc);
    CUDART_CHECK(cudaGetLastError());
    CUDART_CHECK(cudaMemcpyAsync(&h, acc, sizeof h, cudaMemcpyDeviceToHost, s));
    CUDART_CHECK(cudaStreamSynchronize(s));
    r.maxElemRel = __builtin_bit_cast(float, h.maxElemRelBits);
  } catch (...) {
    cudaFree(acc);
    throw;
  }
  CUDART_CHECK(cudaFree(acc));
  return r;
}

} // namespace bench
} // namespace spconv
