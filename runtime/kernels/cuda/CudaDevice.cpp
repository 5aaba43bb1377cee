//===- CudaDevice.cpp - one CUDA GPU as a cleave::rt::Device -------------===//
//
// Every call makes the device current first: the runtime may drive it from
// any thread. Copies go through the context's stream and wait for it, so a
// copy is ordered after the kernels queued before it.
//
//===----------------------------------------------------------------------===//

#include "CudaDevice.h"

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>
#ifdef CLEAVE_HAVE_CUDNN
#include <cudnn.h>
#endif

#include <cstring>
#include <stdexcept>
#include <string>

using namespace cleave::cuda;

namespace {

void check(cudaError_t status, const char *what) {
  if (status != cudaSuccess)
    throw std::runtime_error(std::string(what) + ": " +
                             cudaGetErrorString(status));
}

void check(cublasStatus_t status, const char *what) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string(what) + ": " +
                             cublasGetStatusString(status));
}

#ifdef CLEAVE_HAVE_CUDNN
void check(cudnnStatus_t status, const char *what) {
  if (status != CUDNN_STATUS_SUCCESS)
    throw std::runtime_error(std::string(what) + ": " +
                             cudnnGetErrorString(status));
}
#endif

} // namespace

CudaDevice::CudaDevice(int index) : index_(index) {
  int count = 0;
  cudaError_t found = cudaGetDeviceCount(&count);
  // Without a driver (a machine with no GPU) CUDA says its runtime is too
  // new for the driver; say what it means.
  if (found == cudaErrorInsufficientDriver || found == cudaErrorNoDevice)
    throw std::runtime_error(
        std::string("no CUDA device: no usable NVIDIA driver or GPU on this "
                    "machine (") +
        cudaGetErrorName(found) + ": " + cudaGetErrorString(found) + ")");
  check(found, "cudaGetDeviceCount");
  if (index < 0 || index >= count)
    throw std::runtime_error("no CUDA device " + std::to_string(index) + " (" +
                             std::to_string(count) + " present)");
  context_.device = this;
  try {
    makeCurrent();
    cudaStream_t stream = nullptr;
    check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking),
          "cudaStreamCreate");
    context_.cudaStream = stream;

    cublasHandle_t blas = nullptr;
    check(cublasCreate(&blas), "cublasCreate");
    context_.cublas = blas;
    check(cublasSetStream(blas, stream), "cublasSetStream");

    cublasLtHandle_t lt = nullptr;
    check(cublasLtCreate(&lt), "cublasLtCreate");
    context_.cublasLt = lt;

#ifdef CLEAVE_HAVE_CUDNN
    cudnnHandle_t dnn = nullptr;
    check(cudnnCreate(&dnn), "cudnnCreate");
    context_.cudnn = dnn;
    check(cudnnSetStream(dnn, stream), "cudnnSetStream");
#endif

    void *word = nullptr;
    check(cudaMalloc(&word, sizeof(DeviceErrorWord)), "cudaMalloc");
    errorWord_ = static_cast<DeviceErrorWord *>(word);
    check(cudaMemsetAsync(errorWord_, 0, sizeof(DeviceErrorWord), stream),
          "cudaMemset");
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  } catch (...) {
    destroy();
    throw;
  }
}

CudaDevice::~CudaDevice() { destroy(); }

void CudaDevice::destroy() noexcept {
  cudaSetDevice(index_);
  if (context_.cudaStream)
    cudaStreamSynchronize(static_cast<cudaStream_t>(context_.cudaStream));
  if (context_.scratch)
    cudaFree(context_.scratch);
  context_.scratch = nullptr;
  context_.scratchBytes = 0;
  if (errorWord_)
    cudaFree(errorWord_);
  errorWord_ = nullptr;
#ifdef CLEAVE_HAVE_CUDNN
  if (context_.cudnn)
    cudnnDestroy(static_cast<cudnnHandle_t>(context_.cudnn));
#endif
  context_.cudnn = nullptr;
  if (context_.cublasLt)
    cublasLtDestroy(static_cast<cublasLtHandle_t>(context_.cublasLt));
  context_.cublasLt = nullptr;
  if (context_.cublas)
    cublasDestroy(static_cast<cublasHandle_t>(context_.cublas));
  context_.cublas = nullptr;
  if (context_.cudaStream)
    cudaStreamDestroy(static_cast<cudaStream_t>(context_.cudaStream));
  context_.cudaStream = nullptr;
}

void CudaDevice::makeCurrent() const {
  check(cudaSetDevice(index_), "cudaSetDevice");
}

std::string CudaDevice::name() const {
  return "cuda:" + std::to_string(index_);
}

void *CudaDevice::allocate(std::size_t bytes) {
  makeCurrent();
  // cudaMalloc aligns to at least 256 bytes; a zero-byte request still gets
  // a distinct pointer.
  void *pointer = nullptr;
  cudaError_t status = cudaMalloc(&pointer, bytes ? bytes : 64);
  if (status != cudaSuccess)
    throw std::runtime_error(name() + ": cannot allocate " +
                             std::to_string(bytes) +
                             " bytes: " + cudaGetErrorString(status));
  return pointer;
}

void CudaDevice::release(void *pointer) {
  if (!pointer)
    return;
  makeCurrent();
  // cudaFree waits for the work that may still use the memory.
  check(cudaFree(pointer), "cudaFree");
}

void CudaDevice::copyToDevice(void *dst, const void *src, std::size_t bytes) {
  if (!bytes)
    return;
  makeCurrent();
  auto stream = static_cast<cudaStream_t>(context_.cudaStream);
  check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream),
        "cudaMemcpyAsync (to device)");
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
}

void CudaDevice::copyToHost(void *dst, const void *src, std::size_t bytes) {
  if (!bytes)
    return;
  makeCurrent();
  auto stream = static_cast<cudaStream_t>(context_.cudaStream);
  check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream),
        "cudaMemcpyAsync (to host)");
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
}

void CudaDevice::synchronize() {
  makeCurrent();
  auto stream = static_cast<cudaStream_t>(context_.cudaStream);
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  DeviceErrorWord word;
  check(cudaMemcpyAsync(&word, errorWord_, sizeof(word), cudaMemcpyDeviceToHost,
                        stream),
        "cudaMemcpyAsync (error word)");
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  if (word.code == kNoDeviceError)
    return;
  check(cudaMemsetAsync(errorWord_, 0, sizeof(DeviceErrorWord), stream),
        "cudaMemset");
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  throw std::runtime_error(name() + ": " + describeDeviceError(word));
}

DeviceErrorWord *cleave::cuda::deviceErrorWord(CleaveContext *ctx) {
  auto *device = dynamic_cast<CudaDevice *>(ctx->device);
  return device ? device->errorWord() : nullptr;
}

extern "C" cleave::rt::Device *
cleave_rt_create_cuda_device(int index, char *error, int errorBytes) {
  auto report = [&](const char *message) {
    if (error && errorBytes > 0) {
      std::strncpy(error, message, errorBytes - 1);
      error[errorBytes - 1] = '\0';
    }
  };
  try {
    return new CudaDevice(index);
  } catch (const std::exception &e) {
    report(e.what());
  } catch (...) {
    report("unknown error creating the CUDA device");
  }
  return nullptr;
}
