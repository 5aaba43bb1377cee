//===- Comm.cu - the communication calls of CUDA programs
//------------------===//
//
// cleave_cuda_<name> for every CommList.def entry: the host's calls
// (runtime/src/CommCalls.h), with the blocks cut and joined on the GPU by
// pitched copies on the context's stream. The communicator (NCCL, or the
// in-process one) moves device memory on that stream too, so nothing here
// waits for the GPU.
//
// Also here: the CUDA side of the in-process transport (LocalTransport.h)
// and the GPU count the runtime asks for.
//
//===----------------------------------------------------------------------===//

#include "CommCalls.h"
#include "CommDevice.h"
#include "CudaCommon.h"
#include "CudaDevice.h"

#include "cleave/rt/LocalTransport.h"

#include <cstring>
#include <string>

using namespace cleave::cuda;
using namespace cleave::rt;
using namespace cleave::rt::comm;

namespace {

void check(cudaError_t status, const char *what) {
  if (status != cudaSuccess)
    throw Error(std::string(what) + ": " + cudaGetErrorString(status));
}

/// Pitched row copies in device memory, on the context's stream.
struct DeviceRows {
  static void copy(CleaveContext *ctx, uint8_t *dst, std::size_t dstPitch,
                   const uint8_t *src, std::size_t srcPitch, std::size_t width,
                   std::size_t rows) {
    if (!width || !rows)
      return;
    // One run of bytes needs no pitch (cudaMemcpy2DAsync refuses pitches
    // above the device's limit, about 2 GiB, whatever the row count).
    if (rows == 1 || (dstPitch == width && srcPitch == width)) {
      check(cudaMemcpyAsync(dst, src, width * rows, cudaMemcpyDeviceToDevice,
                            streamOf(ctx)),
            "cudaMemcpyAsync");
      return;
    }
    check(cudaMemcpy2DAsync(dst, dstPitch, src, srcPitch, width, rows,
                            cudaMemcpyDeviceToDevice, streamOf(ctx)),
          "cudaMemcpy2DAsync");
  }
};

//===----------------------------------------------------------------------===//
// Reductions over blocks
//===----------------------------------------------------------------------===//

/// out[i] = the reduction of blocks[b * count + i] over b, accumulated in
/// Acc (float for float16 and bfloat16), then divided for an average.
template <typename T, typename Acc>
__global__ void reduceBlocksKernel(T *out, const T *blocks, int numBlocks,
                                   int64_t count, int reduction, bool boolean) {
  CLEAVE_GRID_LOOP(i, count) {
    Acc acc = static_cast<Acc>(blocks[i]);
    for (int b = 1; b < numBlocks; ++b)
      acc = combine(static_cast<Reduction>(reduction), acc,
                    static_cast<Acc>(blocks[b * count + i]), boolean);
    if (static_cast<Reduction>(reduction) == Reduction::Average)
      acc = static_cast<Acc>(acc / static_cast<Acc>(numBlocks));
    out[i] = static_cast<T>(acc);
  }
}

template <typename T>
__global__ void divideKernel(T *data, int64_t count, int divisor) {
  CLEAVE_GRID_LOOP(i, count) {
    data[i] = static_cast<T>(static_cast<float>(data[i]) / divisor);
  }
}

template <typename T>
__global__ void divideExactKernel(T *data, int64_t count, int divisor) {
  CLEAVE_GRID_LOOP(i, count) { data[i] = static_cast<T>(data[i] / divisor); }
}

/// Calls `f(T(), Acc())` for the storage and accumulation types of `dtype`.
template <typename F> void withTypes(CleaveDType dtype, F &&f) {
  switch (dtype) {
  case CLEAVE_F32:
    return f(float(), float());
  case CLEAVE_F16:
    return f(__half(), float());
  case CLEAVE_BF16:
    return f(__nv_bfloat16(), float());
  case CLEAVE_F64:
    return f(double(), double());
  case CLEAVE_I64:
    return f(int64_t(), int64_t());
  case CLEAVE_I32:
    return f(int32_t(), int32_t());
  case CLEAVE_I16:
    return f(int16_t(), int16_t());
  case CLEAVE_I8:
    return f(int8_t(), int8_t());
  case CLEAVE_U8:
  case CLEAVE_BOOL:
    return f(uint8_t(), uint8_t());
  case CLEAVE_U16:
    return f(uint16_t(), uint16_t());
  case CLEAVE_U32:
    return f(uint32_t(), uint32_t());
  case CLEAVE_U64:
    return f(uint64_t(), uint64_t());
  default:
    throw Error(std::string("cannot reduce ") + dtypeName(dtype));
  }
}

} // namespace

void cleave::cuda::reduceBlocksOnDevice(void *out, const void *blocks,
                                        int numBlocks, std::size_t count,
                                        CleaveDType dtype, Reduction reduction,
                                        cudaStream_t stream) {
  if (!count)
    return;
  if (dtype == CLEAVE_BOOL && reduction == Reduction::Average)
    throw Error("cannot average bool");
  withTypes(dtype, [&](auto t, auto acc) {
    using T = decltype(t);
    using Acc = decltype(acc);
    reduceBlocksKernel<T, Acc><<<blocksFor(count), kThreads, 0, stream>>>(
        static_cast<T *>(out), static_cast<const T *>(blocks), numBlocks,
        static_cast<int64_t>(count), static_cast<int>(reduction),
        dtype == CLEAVE_BOOL);
  });
  check(cudaGetLastError(), "reduction kernel launch");
}

void cleave::cuda::divideOnDevice(void *data, std::size_t count,
                                  CleaveDType dtype, int divisor,
                                  cudaStream_t stream) {
  if (!count)
    return;
  if (dtype == CLEAVE_BOOL)
    throw Error("cannot average bool");
  withTypes(dtype, [&](auto t, auto acc) {
    using T = decltype(t);
    using Acc = decltype(acc);
    if constexpr (std::is_same_v<Acc, float> && !std::is_same_v<T, float>)
      divideKernel<T><<<blocksFor(count), kThreads, 0, stream>>>(
          static_cast<T *>(data), static_cast<int64_t>(count), divisor);
    else
      divideExactKernel<T><<<blocksFor(count), kThreads, 0, stream>>>(
          static_cast<T *>(data), static_cast<int64_t>(count), divisor);
  });
  check(cudaGetLastError(), "division kernel launch");
}

//===----------------------------------------------------------------------===//
// The in-process transport of a CUDA rank
//===----------------------------------------------------------------------===//

namespace {

class CudaTransport final : public LocalTransport {
public:
  explicit CudaTransport(CleaveContext *ctx)
      : stream(static_cast<cudaStream_t>(ctx->cudaStream)) {
    auto *device = dynamic_cast<CudaDevice *>(ctx->device);
    if (!device || !stream)
      throw Error("the context is not a CUDA device's");
    index = device->index();
  }

  void *allocate(std::size_t bytes) override {
    makeCurrent();
    void *pointer = nullptr;
    check(cudaMalloc(&pointer, bytes ? bytes : 64), "cudaMalloc");
    return pointer;
  }
  void release(void *pointer) override {
    if (!pointer)
      return;
    makeCurrent();
    // cudaFree waits for the work that may still use the memory.
    check(cudaFree(pointer), "cudaFree");
  }
  void copy(void *dst, const void *src, std::size_t bytes) override {
    if (!bytes || dst == src)
      return;
    // Unified addressing tells the devices apart: a copy between two GPUs
    // goes peer to peer.
    check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, queue()),
          "cudaMemcpyAsync");
  }
  void reduceBlocks(void *out, const void *blocks, int numBlocks,
                    std::size_t count, CleaveDType dtype,
                    Reduction reduction) override {
    reduceBlocksOnDevice(out, blocks, numBlocks, count, dtype, reduction,
                         queue());
  }
  QueueMark mark() override {
    cudaStream_t on = queue();
    cudaEvent_t event = nullptr;
    check(cudaEventCreateWithFlags(&event, cudaEventDisableTiming),
          "cudaEventCreate");
    QueueMark mark(
        event, [](void *e) { cudaEventDestroy(static_cast<cudaEvent_t>(e)); });
    check(cudaEventRecord(event, on), "cudaEventRecord");
    return mark;
  }
  void waitFor(const QueueMark &mark) override {
    if (!mark)
      return;
    check(cudaStreamWaitEvent(queue(), static_cast<cudaEvent_t>(mark.get()), 0),
          "cudaStreamWaitEvent");
  }
  bool reached(const QueueMark &mark) override {
    if (!mark)
      return true;
    cudaError_t status = cudaEventQuery(static_cast<cudaEvent_t>(mark.get()));
    if (status == cudaErrorNotReady)
      return false;
    check(status, "cudaEventQuery");
    return true;
  }
  void synchronize() override {
    if (!stream)
      return;
    makeCurrent();
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  }
  void detach() noexcept override {
    if (stream && cudaSetDevice(index) == cudaSuccess)
      cudaStreamSynchronize(stream);
    stream = nullptr;
  }

private:
  void makeCurrent() const { check(cudaSetDevice(index), "cudaSetDevice"); }
  /// The stream, on its device; throws once the device has closed.
  cudaStream_t queue() const {
    if (!stream)
      throw Error("cuda:" + std::to_string(index) +
                  " has closed: its session ended");
    makeCurrent();
    return stream;
  }

  cudaStream_t stream;
  int index = 0;
};

} // namespace

extern "C" LocalTransport *cleave_rt_create_cuda_transport(CleaveContext *ctx,
                                                           char *error,
                                                           int errorBytes) {
  try {
    return new CudaTransport(ctx);
  } catch (const std::exception &e) {
    if (error && errorBytes > 0) {
      std::strncpy(error, e.what(), errorBytes - 1);
      error[errorBytes - 1] = '\0';
    }
  }
  return nullptr;
}

extern "C" int cleave_rt_cuda_device_count() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess ? count : 0;
}

//===----------------------------------------------------------------------===//
// The calls
//===----------------------------------------------------------------------===//

extern "C" {

#define CLEAVE_COMM(name, signature)                                           \
  int32_t cleave_cuda_##name(CleaveContext *ctx, const CleaveTensor *in,       \
                             int32_t numIn, CleaveTensor *out, int32_t numOut, \
                             const int64_t *ints, const double *floats) {      \
    return cleave::rt::args::runKernel<cleave::rt::args::signature>(           \
        &CommCalls<DeviceRows>::name, #name, ctx, in, numIn, out, numOut,      \
        ints, floats);                                                         \
  }
#include "cleave/rt/CommList.def"

} // extern "C"
