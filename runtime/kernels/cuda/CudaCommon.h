//===- CudaCommon.h - helpers shared by the CUDA kernels ---------*- C++
//-*-===//
//
// Included by the .cu files of libcleave_rt_cuda only: the typed kernel
// functions the C symbols call (KernelTable.cu), launch helpers, the
// element-type dispatch, index arithmetic over shapes, and the device error
// word through which kernels that cannot synchronise report bad data.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_RT_CUDA_CUDACOMMON_H
#define CLEAVE_RT_CUDA_CUDACOMMON_H

#include "DeviceError.h"
#include "cleave/rt/Context.h"
#include "cleave/rt/KernelArgs.h"
#include "cleave/rt/Kernels.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdarg>
#include <cstdint>
#include <cstdio>

namespace cleave::cuda {

namespace args = cleave::rt::args;

/// One function per KernelList.def entry, over the view of its signature;
/// `cleave_cuda_<name>` binds the view and calls it. Each is defined with
/// its qualified name, so that a definition of another signature does not
/// compile.
namespace kernels {
#define CLEAVE_KERNEL(name, signature)                                         \
  int32_t name(CleaveContext *ctx, const args::signature &args);
#include "cleave/rt/KernelList.def"
} // namespace kernels

//===----------------------------------------------------------------------===//
// Failing
//===----------------------------------------------------------------------===//

/// cleave_rt_fail with a printf-style message.
inline int32_t fail(CleaveContext *ctx, const char *kernel, const char *format,
                    ...) {
  char message[512];
  va_list args;
  va_start(args, format);
  vsnprintf(message, sizeof(message), format, args);
  va_end(args);
  return cleave_rt_fail(ctx, kernel, message);
}

/// Reports a failed launch (bad configuration, no kernel image for this GPU)
/// as the kernel's failure; errors of the kernel's execution surface at the
/// next synchronisation.
inline int32_t checkLaunch(CleaveContext *ctx, const char *kernel) {
  cudaError_t status = cudaGetLastError();
  if (status == cudaSuccess)
    return 0;
  return fail(ctx, kernel, "launch failed: %s", cudaGetErrorString(status));
}

inline cudaStream_t streamOf(CleaveContext *ctx) {
  return static_cast<cudaStream_t>(cleave_rt_cuda_stream(ctx));
}

//===----------------------------------------------------------------------===//
// Shapes
//===----------------------------------------------------------------------===//

inline size_t dtypeSize(int32_t dtype) { return cleave_dtype_size(dtype); }

inline int64_t numElements(const CleaveTensor &t) {
  int64_t n = 1;
  for (int i = 0; i < t.rank; ++i)
    n *= t.shape[i];
  return n;
}

inline int64_t product(const int64_t *dims, int begin, int end) {
  int64_t n = 1;
  for (int i = begin; i < end; ++i)
    n *= dims[i];
  return n;
}

/// Dimensions and strides passed by value to index-mapping kernels.
struct Dims {
  int rank = 0;
  int64_t size[CLEAVE_MAX_RANK] = {};
  int64_t stride[CLEAVE_MAX_RANK] = {};
};

/// Row-major strides of `t`.
inline Dims dimsOf(const CleaveTensor &t) {
  Dims d;
  d.rank = t.rank;
  int64_t s = 1;
  for (int i = t.rank - 1; i >= 0; --i) {
    d.size[i] = t.shape[i];
    d.stride[i] = s;
    s *= t.shape[i];
  }
  return d;
}

//===----------------------------------------------------------------------===//
// Launching
//===----------------------------------------------------------------------===//

constexpr int kThreads = 256;

/// Blocks for a grid-stride loop over `n` items.
inline unsigned blocksFor(int64_t n, int threads = kThreads) {
  int64_t blocks = (n + threads - 1) / threads;
  if (blocks < 1)
    blocks = 1;
  return blocks > 65535 * 8 ? 65535 * 8 : static_cast<unsigned>(blocks);
}

#define CLEAVE_GRID_LOOP(i, n)                                                 \
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < (n);    \
       i += (int64_t)gridDim.x * blockDim.x)

//===----------------------------------------------------------------------===//
// Element types
//===----------------------------------------------------------------------===//

__device__ __forceinline__ float toFloat(float x) { return x; }
__device__ __forceinline__ float toFloat(__half x) { return __half2float(x); }
__device__ __forceinline__ float toFloat(__nv_bfloat16 x) {
  return __bfloat162float(x);
}
template <typename T> __device__ __forceinline__ T fromFloat(float x);
template <> __device__ __forceinline__ float fromFloat<float>(float x) {
  return x;
}
template <> __device__ __forceinline__ __half fromFloat<__half>(float x) {
  return __float2half_rn(x);
}
template <>
__device__ __forceinline__ __nv_bfloat16 fromFloat<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}

/// Calls `f(T())` with T the C++ type of a floating dtype (f32, f16, bf16);
/// returns -1 for another dtype.
template <typename F> int32_t dispatchFloat(int32_t dtype, F &&f) {
  switch (dtype) {
  case CLEAVE_F32:
    return f(float());
  case CLEAVE_F16:
    return f(__half());
  case CLEAVE_BF16:
    return f(__nv_bfloat16());
  default:
    return -1;
  }
}

/// Calls `f(T())` with the C++ type of a numeric dtype; returns -1 for
/// another.
template <typename F> int32_t dispatchNumeric(int32_t dtype, F &&f) {
  switch (dtype) {
  case CLEAVE_F32:
    return f(float());
  case CLEAVE_F16:
    return f(__half());
  case CLEAVE_BF16:
    return f(__nv_bfloat16());
  case CLEAVE_F64:
    return f(double());
  case CLEAVE_I8:
    return f(int8_t());
  case CLEAVE_I16:
    return f(int16_t());
  case CLEAVE_I32:
    return f(int32_t());
  case CLEAVE_I64:
    return f(int64_t());
  case CLEAVE_U8:
    return f(uint8_t());
  case CLEAVE_U16:
    return f(uint16_t());
  case CLEAVE_U32:
    return f(uint32_t());
  case CLEAVE_U64:
    return f(uint64_t());
  default:
    return -1;
  }
}

/// Calls `f(T())` with an unsigned integer type of `bytes` bytes, for
/// kernels that only move elements; returns -1 for another size.
template <typename F> int32_t dispatchBytes(size_t bytes, F &&f) {
  switch (bytes) {
  case 1:
    return f(uint8_t());
  case 2:
    return f(uint16_t());
  case 4:
    return f(uint32_t());
  case 8:
    return f(uint64_t());
  default:
    return -1;
  }
}

//===----------------------------------------------------------------------===//
// Reductions within a block
//===----------------------------------------------------------------------===//

__device__ __forceinline__ float warpSum(float v) {
  for (int o = 16; o > 0; o >>= 1)
    v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
__device__ __forceinline__ float warpMax(float v) {
  for (int o = 16; o > 0; o >>= 1)
    v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

/// Sum over the block; every thread gets the result. `shared` holds 32
/// floats; the block is a multiple of 32 threads.
__device__ __forceinline__ float blockSum(float v, float *shared) {
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  v = warpSum(v);
  __syncthreads();
  if (lane == 0)
    shared[warp] = v;
  __syncthreads();
  int warps = blockDim.x >> 5;
  v = lane < warps ? shared[lane] : 0.f;
  return warpSum(v);
}
__device__ __forceinline__ float blockMax(float v, float *shared) {
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  v = warpMax(v);
  __syncthreads();
  if (lane == 0)
    shared[warp] = v;
  __syncthreads();
  int warps = blockDim.x >> 5;
  v = lane < warps ? shared[lane] : -INFINITY;
  return warpMax(v);
}

//===----------------------------------------------------------------------===//
// Device-side errors
//===----------------------------------------------------------------------===//

/// Records the first index out of range of any kernel since the last
/// synchronisation: `index` addresses dimension `dim` of data, of size
/// `bound`. A no-op when the site has no word (a context without a
/// CudaDevice).
__device__ __forceinline__ void recordIndexError(const DeviceErrorSite &site,
                                                 int32_t code, int64_t index,
                                                 int64_t bound, int dim) {
  DeviceErrorWord *word = site.word;
  if (!word || atomicCAS(&word->code, 0, code) != 0)
    return;
  word->step = site.step;
  word->dim = dim;
  word->index = index;
  word->bound = bound;
  word->node = site.node;
}

/// The error word of the CudaDevice behind `ctx`, or null.
DeviceErrorWord *deviceErrorWord(CleaveContext *ctx);

/// The site of a kernel `ctx` launches now: its device's word and the
/// step being run.
inline DeviceErrorSite deviceErrorSite(CleaveContext *ctx) {
  return {deviceErrorWord(ctx), ctx->step, ctx->node};
}

/// `index` counted from the end when negative, or -1 outside
/// [-size, size).
__device__ __forceinline__ int64_t resolveIndex(int64_t index, int64_t size) {
  if (index < -size || index >= size)
    return -1;
  return index < 0 ? index + size : index;
}

//===----------------------------------------------------------------------===//
// Shared pieces used by several kernel files
//===----------------------------------------------------------------------===//

/// Broadcasts `x` (numpy rules, right-aligned) into `y` of the same element
/// size. Used by expand and by gemm's C.
int32_t broadcastInto(CleaveContext *ctx, const char *kernel,
                      const CleaveTensor &x, const CleaveTensor &y);

/// The reductions of reduce_* and the global pools.
enum class ReduceOp { Sum, Mean, Max, Min, Prod, L2, SumSquare };

/// Reduces `x` over the dimensions whose bit is set in `axes` into `y`
/// (reduced dimensions kept as 1 or dropped: the layout is the same).
/// f32, f16 and bf16; accumulates in fp32.
int32_t reduceOver(CleaveContext *ctx, const char *kernel,
                   const CleaveTensor &x, const CleaveTensor &y, uint32_t axes,
                   ReduceOp op);

} // namespace cleave::cuda

#endif // CLEAVE_RT_CUDA_CUDACOMMON_H
