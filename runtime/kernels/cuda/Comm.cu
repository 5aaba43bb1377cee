//===- Comm.cu - the communication calls of CUDA programs
//------------------===//
//
// cleave_cuda_<name> for every CommList.def entry: the checks and the
// cutting of tensors into their group's blocks mirror the host's
// (runtime/src/CommKernels.cpp), with the blocks cut and joined on the GPU
// by pitched copies on the context's stream. The communicator (NCCL, or the
// in-process one) moves device memory on that stream too, so nothing here
// waits for the GPU.
//
// Also here: the CUDA side of the in-process transport (LocalTransport.h)
// and the GPU count the runtime asks for.
//
//===----------------------------------------------------------------------===//

#include "CommCall.h"
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

/// Copies `rows` rows of `width` bytes between pitched layouts on the
/// context's stream.
void copyRows(CleaveContext *ctx, uint8_t *dst, std::size_t dstPitch,
              const uint8_t *src, std::size_t srcPitch, std::size_t width,
              std::size_t rows) {
  if (!width || !rows)
    return;
  check(cudaMemcpy2DAsync(dst, dstPitch, src, srcPitch, width, rows,
                          cudaMemcpyDeviceToDevice, streamOf(ctx)),
        "cudaMemcpy2DAsync");
}

/// Cuts `src` ([outer, groups * n, inner]) into `groups` contiguous blocks
/// ([outer, n, inner] each), in order.
void packBlocks(CleaveContext *ctx, const uint8_t *src, const Split &split,
                int groups, uint8_t *dst) {
  std::size_t row = split.dim / groups * split.innerBytes;
  for (int j = 0; j < groups; ++j)
    copyRows(ctx, dst + j * split.outer * row, row, src + j * row, groups * row,
             row, split.outer);
}

/// Joins `groups` contiguous blocks ([outer, n, inner] each, `block` their
/// split) along the dimension: [outer, groups * n, inner].
void unpackBlocks(CleaveContext *ctx, const uint8_t *src, const Split &block,
                  int groups, uint8_t *dst) {
  std::size_t row = block.dim * block.innerBytes;
  for (int j = 0; j < groups; ++j)
    copyRows(ctx, dst + j * row, groups * row, src + j * block.outer * row, row,
             row, block.outer);
}

/// Device scratch of `bytes`, or throws (the context recorded why).
uint8_t *scratch(CleaveContext *ctx, std::size_t bytes) {
  void *pointer = cleave_rt_scratch(ctx, bytes ? bytes : 1);
  if (!pointer)
    throw Error(ctx->error);
  return static_cast<uint8_t *>(pointer);
}

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
    for (int b = 1; b < numBlocks; ++b) {
      Acc x = static_cast<Acc>(blocks[b * count + i]);
      switch (static_cast<Reduction>(reduction)) {
      case Reduction::Sum:
      case Reduction::Average:
        acc = boolean ? Acc(acc || x) : Acc(acc + x);
        break;
      case Reduction::Product:
        acc = boolean ? Acc(acc && x) : Acc(acc * x);
        break;
      case Reduction::Max:
        acc = x > acc ? x : acc;
        break;
      case Reduction::Min:
        acc = x < acc ? x : acc;
        break;
      }
    }
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

/// Y = block `index` of X cut into `blocks` along `dim`: a copy on the
/// device.
int32_t sliceBlock(CleaveContext *ctx, CommCall &call, const CleaveTensor &x,
                   CleaveTensor &y, int64_t blocks, int64_t dim,
                   int64_t index) {
  if (!call.dimension(x, dim) || !call.scaled(x, y, dim, 1, blocks))
    return 1;
  Split whole = splitAt(x, dim);
  std::size_t row = whole.dim / blocks * whole.innerBytes;
  return call.run([&] {
    copyRows(ctx, static_cast<uint8_t *>(y.data), row,
             static_cast<const uint8_t *>(x.data) + index * row, blocks * row,
             row, whole.outer);
  });
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
    makeCurrent();
    // Unified addressing tells the devices apart: a copy between two GPUs
    // goes peer to peer.
    check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream),
          "cudaMemcpyAsync");
  }
  void reduceBlocks(void *out, const void *blocks, int numBlocks,
                    std::size_t count, CleaveDType dtype,
                    Reduction reduction) override {
    makeCurrent();
    reduceBlocksOnDevice(out, blocks, numBlocks, count, dtype, reduction,
                         stream);
  }
  QueueMark mark() override {
    makeCurrent();
    cudaEvent_t event = nullptr;
    check(cudaEventCreateWithFlags(&event, cudaEventDisableTiming),
          "cudaEventCreate");
    QueueMark mark(
        event, [](void *e) { cudaEventDestroy(static_cast<cudaEvent_t>(e)); });
    check(cudaEventRecord(event, stream), "cudaEventRecord");
    return mark;
  }
  void waitFor(const QueueMark &mark) override {
    if (!mark)
      return;
    makeCurrent();
    check(cudaStreamWaitEvent(stream, static_cast<cudaEvent_t>(mark.get()), 0),
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
    makeCurrent();
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  }

private:
  void makeCurrent() const { check(cudaSetDevice(index), "cudaSetDevice"); }

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

int32_t cleave_cuda_send(CleaveContext *ctx, const CleaveTensor *in,
                         int32_t numIn, CleaveTensor *, int32_t numOut,
                         const int64_t *ints, const double *) {
  CommCall call(ctx, "send");
  Communicator *comm = call.communicator();
  if (!comm || !call.counts(numIn, numOut, 1, 0))
    return 1;
  std::size_t bytes = elements(in[0]) * cleave_dtype_size(in[0].dtype);
  return call.run([&] {
    comm->send(in[0].data, bytes, static_cast<int>(ints[0]),
               static_cast<int>(ints[1]));
  });
}

int32_t cleave_cuda_recv(CleaveContext *ctx, const CleaveTensor *,
                         int32_t numIn, CleaveTensor *out, int32_t numOut,
                         const int64_t *ints, const double *) {
  CommCall call(ctx, "recv");
  Communicator *comm = call.communicator();
  if (!comm || !call.counts(numIn, numOut, 0, 1))
    return 1;
  std::size_t bytes = elements(out[0]) * cleave_dtype_size(out[0].dtype);
  return call.run([&] {
    comm->recv(out[0].data, bytes, static_cast<int>(ints[0]),
               static_cast<int>(ints[1]));
  });
}

int32_t cleave_cuda_all_reduce(CleaveContext *ctx, const CleaveTensor *in,
                               int32_t numIn, CleaveTensor *out, int32_t numOut,
                               const int64_t *ints, const double *) {
  CommCall call(ctx, "all_reduce");
  Communicator *comm = call.communicator();
  if (!comm || !call.counts(numIn, numOut, 1, 1) ||
      !call.group(ints[0], comm->groupSize()) ||
      !call.scaled(in[0], out[0], -1, 1, 1) ||
      !call.reduction(ints[1], static_cast<CleaveDType>(in[0].dtype)))
    return 1;
  return call.run([&] {
    comm->allReduce(in[0].data, out[0].data, elements(in[0]),
                    static_cast<CleaveDType>(in[0].dtype),
                    static_cast<Reduction>(ints[1]));
  });
}

int32_t cleave_cuda_all_gather(CleaveContext *ctx, const CleaveTensor *in,
                               int32_t numIn, CleaveTensor *out, int32_t numOut,
                               const int64_t *ints, const double *) {
  CommCall call(ctx, "all_gather");
  Communicator *comm = call.communicator();
  if (!comm || !call.counts(numIn, numOut, 1, 1) ||
      !call.group(ints[0], comm->groupSize()) ||
      !call.dimension(in[0], ints[1]) ||
      !call.scaled(in[0], out[0], ints[1], ints[0], 1))
    return 1;
  int groups = static_cast<int>(ints[0]);
  Split block = splitAt(in[0], ints[1]);
  std::size_t bytes = block.outer * block.dim * block.innerBytes;
  return call.run([&] {
    if (block.outer == 1) {
      comm->allGather(in[0].data, out[0].data, bytes);
      return;
    }
    uint8_t *gathered = scratch(ctx, bytes * groups);
    comm->allGather(in[0].data, gathered, bytes);
    unpackBlocks(ctx, gathered, block, groups,
                 static_cast<uint8_t *>(out[0].data));
  });
}

int32_t cleave_cuda_reduce_scatter(CleaveContext *ctx, const CleaveTensor *in,
                                   int32_t numIn, CleaveTensor *out,
                                   int32_t numOut, const int64_t *ints,
                                   const double *) {
  CommCall call(ctx, "reduce_scatter");
  Communicator *comm = call.communicator();
  if (!comm || !call.counts(numIn, numOut, 1, 1) ||
      !call.group(ints[0], comm->groupSize()) ||
      !call.dimension(in[0], ints[1]) ||
      !call.scaled(in[0], out[0], ints[1], 1, ints[0]) ||
      !call.reduction(ints[2], static_cast<CleaveDType>(in[0].dtype)))
    return 1;
  int groups = static_cast<int>(ints[0]);
  Split whole = splitAt(in[0], ints[1]);
  return call.run([&] {
    const void *blocks = in[0].data;
    if (whole.outer != 1) {
      uint8_t *packed =
          scratch(ctx, whole.outer * whole.dim * whole.innerBytes);
      packBlocks(ctx, static_cast<const uint8_t *>(in[0].data), whole, groups,
                 packed);
      blocks = packed;
    }
    comm->reduceScatter(blocks, out[0].data, elements(out[0]),
                        static_cast<CleaveDType>(in[0].dtype),
                        static_cast<Reduction>(ints[2]));
  });
}

int32_t cleave_cuda_all_slice(CleaveContext *ctx, const CleaveTensor *in,
                              int32_t numIn, CleaveTensor *out, int32_t numOut,
                              const int64_t *ints, const double *) {
  // A local copy: the device's place is all it needs.
  CommCall call(ctx, "all_slice");
  if (!call.counts(numIn, numOut, 1, 1) || !call.group(ints[0], ctx->tpSize))
    return 1;
  return sliceBlock(ctx, call, in[0], out[0], ints[0], ints[1],
                    ctx->tpIndex);
}

int32_t cleave_cuda_batch_slice(CleaveContext *ctx, const CleaveTensor *in,
                                int32_t numIn, CleaveTensor *out,
                                int32_t numOut, const int64_t *ints,
                                const double *) {
  // A local copy: the block of the batch the program computes.
  CommCall call(ctx, "batch_slice");
  if (!call.counts(numIn, numOut, 1, 1) || !call.batchBlocks(ints[0]))
    return 1;
  return sliceBlock(ctx, call, in[0], out[0], ints[0], ints[1],
                    ctx->batchBlock);
}

int32_t cleave_cuda_all_to_all(CleaveContext *ctx, const CleaveTensor *in,
                               int32_t numIn, CleaveTensor *out, int32_t numOut,
                               const int64_t *ints, const double *) {
  CommCall call(ctx, "all_to_all");
  Communicator *comm = call.communicator();
  if (!comm || !call.counts(numIn, numOut, 1, 1) ||
      !call.group(ints[0], comm->groupSize()) ||
      !call.dimension(in[0], ints[1]) || !call.dimension(in[0], ints[2]))
    return 1;
  int groups = static_cast<int>(ints[0]);
  int64_t splitDim = ints[1], concatDim = ints[2];
  CleaveTensor block = in[0];
  if (block.shape[splitDim] % groups != 0)
    return call.fail("dimension " + std::to_string(splitDim) + " of " +
                     shapeString(in[0]) + " does not split into " +
                     std::to_string(groups) + " blocks");
  block.shape[splitDim] /= groups;
  if (!call.scaled(block, out[0], concatDim, groups, 1))
    return 1;
  Split whole = splitAt(in[0], splitDim);
  Split received = splitAt(block, concatDim);
  std::size_t bytes = elements(block) * cleave_dtype_size(block.dtype);
  return call.run([&] {
    // Both halves in one scratch buffer, the second 256-byte aligned.
    std::size_t half = (bytes * groups + 255) / 256 * 256;
    uint8_t *packed = scratch(ctx, 2 * half);
    uint8_t *gathered = packed + half;
    packBlocks(ctx, static_cast<const uint8_t *>(in[0].data), whole, groups,
               packed);
    comm->allToAll(packed, gathered, bytes);
    unpackBlocks(ctx, gathered, received, groups,
                 static_cast<uint8_t *>(out[0].data));
  });
}

} // extern "C"
