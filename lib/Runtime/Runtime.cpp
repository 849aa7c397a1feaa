//===- Runtime.cpp - Load and launch spconv kernels (Driver API) ----------===//

#include "spconv/Runtime/Runtime.h"

#include <fstream>
#include <sstream>
#include <utility>

namespace spconv {
namespace runtime {

static std::string describe(CUresult code) {
  const char *name = nullptr, *text = nullptr;
  // Both may fail for codes this driver does not know; say so instead of printing null.
  if (cuGetErrorName(code, &name) != CUDA_SUCCESS || !name)
    name = "unknown CUresult";
  if (cuGetErrorString(code, &text) != CUDA_SUCCESS || !text)
    text = "";
  std::string s = std::string(name) + " (" + std::to_string(static_cast<int>(code));
  if (*text)
    s += ": " + std::string(text);
  return s + ")";
}

CudaError::CudaError(CUresult code, const std::string &call)
    : std::runtime_error(call + " failed: " + describe(code)), code_(code) {}

void check(CUresult r, const char *call) {
  if (r != CUDA_SUCCESS)
    throw CudaError(r, call);
}

//===----------------------------------------------------------------------===//
// Context
//===----------------------------------------------------------------------===//

Context::Context(int ordinal) {
  SPCONV_CU(cuInit(0));
  int count = 0;
  SPCONV_CU(cuDeviceGetCount(&count));
  if (ordinal < 0 || ordinal >= count)
    throw std::runtime_error("no CUDA device " + std::to_string(ordinal) + " (found " +
                             std::to_string(count) + ")");
  SPCONV_CU(cuDeviceGet(&dev_, ordinal));
  // The primary context is the one the CUDA runtime API uses, so cudaMalloc'ed
  // buffers and cudaStream_t work with our launches.
  SPCONV_CU(cuDevicePrimaryCtxRetain(&ctx_, dev_));
  SPCONV_CU(cuCtxSetCurrent(ctx_));
}

Context::~Context() {
  if (ctx_)
    cuDevicePrimaryCtxRelease(dev_);
}

std::string Context::deviceName() const {
  char buf[256] = {0};
  SPCONV_CU(cuDeviceGetName(buf, sizeof buf - 1, dev_));
  return buf;
}

int Context::driverVersion() const {
  int v = 0;
  SPCONV_CU(cuDriverGetVersion(&v));
  return v;
}

int Context::computeCapability() const {
  int major = 0, minor = 0;
  SPCONV_CU(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev_));
  SPCONV_CU(cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev_));
  return major * 10 + minor;
}

//===----------------------------------------------------------------------===//
// DeviceBuffer
//===----------------------------------------------------------------------===//

DeviceBuffer::DeviceBuffer(size_t bytes) : bytes_(bytes) {
  if (bytes) {
    CUresult r = cuMemAlloc(&ptr_, bytes);
    if (r != CUDA_SUCCESS)
      throw CudaError(r, "cuMemAlloc(" + std::to_string(bytes) + " bytes)");
  }
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_)
    cuMemFree(ptr_);
}

DeviceBuffer::DeviceBuffer(DeviceBuffer &&o) noexcept
    : ptr_(std::exchange(o.ptr_, 0)), bytes_(std::exchange(o.bytes_, 0)) {}

DeviceBuffer &DeviceBuffer::operator=(DeviceBuffer &&o) noexcept {
  if (this != &o) {
    if (ptr_)
      cuMemFree(ptr_);
    ptr_ = std::exchange(o.ptr_, 0);
    bytes_ = std::exchange(o.bytes_, 0);
  }
  return *this;
}

void DeviceBuffer::upload(const void *host, size_t bytes) {
  if (bytes > bytes_)
    throw std::runtime_error("upload of " + std::to_string(bytes) + " bytes into a " +
                             std::to_string(bytes_) + "-byte buffer");
  SPCONV_CU(cuMemcpyHtoD(ptr_, host, bytes));
}

void DeviceBuffer::download(void *host, size_t bytes) const {
  if (bytes > bytes_)
    throw std::runtime_error("download of " + std::to_string(bytes) + " bytes from a " +
                             std::to_string(bytes_) + "-byte buffer");
  SPCONV_CU(cuMemcpyDtoH(host, ptr_, bytes));
}

//===----------------------------------------------------------------------===//
// Module
//===----------------------------------------------------------------------===//

Module Module::loadFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw std::runtime_error("cannot open module " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string image = ss.str();
  bool isElf = image.size() >= 4 && image.compare(0, 4, "\x7f" "ELF") == 0;
  try {
    return loadImage(image, !isElf);
  } catch (const std::exception &e) {
    throw std::runtime_error(path + ": " + e.what());
  }
}

Module Module::loadImage(const std::string &image, bool isPtx) {
  Module m;
  std::string data = image;
  if (isPtx && (data.empty() || data.back() != '\0'))
    data.push_back('\0'); // the driver reads PTX as a C string

  // The JIT's error log is the only useful diagnostic for bad PTX: capture it.
  std::vector<char> errBuf(16384, 0), infoBuf(4096, 0);
  char *errLog = errBuf.data(), *infoLog = infoBuf.data();
  CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                         CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
  void *vals[] = {errLog, reinterpret_cast<void *>(errBuf.size()), infoLog,
                  reinterpret_cast<void *>(infoBuf.size())};
  CUresult r = cuModuleLoadDataEx(&m.mod_, data.data(), 4, opts, vals);
  if (r != CUDA_SUCCESS) {
    std::string call = isPtx ? "cuModuleLoadDataEx(PTX)" : "cuModuleLoadDataEx(cubin)";
    if (errLog[0])
      call += " [JIT log: " + std::string(errLog) + "]";
    throw CudaError(r, call);
  }
  return m;
}

Module::~Module() {
  if (mod_)
    cuModuleUnload(mod_);
}

Module::Module(Module &&o) noexcept : mod_(std::exchange(o.mod_, nullptr)) {}

Module &Module::operator=(Module &&o) noexcept {
  if (this != &o) {
    if (mod_)
      cuModuleUnload(mod_);
    mod_ = std::exchange(o.mod_, nullptr);
  }
  return *this;
}

CUfunction Module::function(const std::string &entry) const {
  CUfunction f = nullptr;
  CUresult r = cuModuleGetFunction(&f, mod_, entry.c_str());
  if (r != CUDA_SUCCESS)
    throw CudaError(r, "cuModuleGetFunction(\"" + entry + "\")");
  return f;
}

//===----------------------------------------------------------------------===//
// Kernel
//===----------------------------------------------------------------------===//

Kernel::Kernel(const Module &module, const KernelDesc &desc)
    : desc_(desc), fn_(module.function(desc.entry)) {
  // Above 48 KiB of dynamic shared memory a kernel must opt in explicitly.
  if (desc_.dynamicSharedBytes > 48 * 1024)
    SPCONV_CU(cuFuncSetAttribute(fn_, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                 static_cast<int>(desc_.dynamicSharedBytes)));
}

int Kernel::attribute(CUfunction_attribute attr) const {
  int v = 0;
  SPCONV_CU(cuFuncGetAttribute(&v, attr, fn_));
  return v;
}

void Kernel::launch(const std::vector<CUdeviceptr> &args, CUstream stream) const {
  if (args.size() != desc_.params.size())
    throw std::runtime_error("kernel '" + desc_.entry + "' takes " +
                             std::to_string(desc_.params.size()) + " pointers, got " +
                             std::to_string(args.size()));
  std::vector<void *> argPtrs(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    // A misaligned word access would fault the whole context: refuse it here instead.
    if (args[i] % desc_.pointerAlignment != 0)
      throw std::runtime_error("kernel '" + desc_.entry + "' reads and writes whole " +
                               std::to_string(desc_.pointerAlignment) +
                               "-byte words (numerics.pairing adjacent): param '" +
                               desc_.params[i].name + "' must be " +
                               std::to_string(desc_.pointerAlignment) +
                               "-byte aligned (a tensor view at an odd element offset is not)");
    argPtrs[i] = const_cast<CUdeviceptr *>(&args[i]);
  }
  CUresult r = cuLaunchKernel(fn_, desc_.grid[0], desc_.grid[1], desc_.grid[2], desc_.block[0],
                              desc_.block[1], desc_.block[2], desc_.dynamicSharedBytes, stream,
                              argPtrs.data(), nullptr);
  if (r != CUDA_SUCCESS)
    throw CudaError(r, "cuLaunchKernel(\"" + desc_.entry + "\")");
}

} // namespace runtime
} // namespace spconv
