//===- Reduce.cu - reductions over any set of axes ------------------------===//
//
// One kernel serves every reduction: a group of G threads computes one
// output, G chosen from the number of reduced elements (1 for a handful,
// a warp, or a whole block for long reductions). The kept and the reduced
// dimensions each have their own input strides, so no transpose is needed.
//
//===----------------------------------------------------------------------===//

#include "CudaCommon.h"

using namespace cleave::cuda;

namespace {

__device__ __forceinline__ float identity(ReduceOp op) {
  switch (op) {
  case ReduceOp::Max:
    return -INFINITY;
  case ReduceOp::Min:
    return INFINITY;
  case ReduceOp::Prod:
    return 1.f;
  default:
    return 0.f;
  }
}

/// Combines two partial results; max and min propagate NaN.
__device__ __forceinline__ float combine(ReduceOp op, float a, float b) {
  switch (op) {
  case ReduceOp::Max:
    return (isnan(a) || isnan(b)) ? NAN : fmaxf(a, b);
  case ReduceOp::Min:
    return (isnan(a) || isnan(b)) ? NAN : fminf(a, b);
  case ReduceOp::Prod:
    return a * b;
  default:
    return a + b;
  }
}

__device__ __forceinline__ float prepare(ReduceOp op, float x) {
  return (op == ReduceOp::L2 || op == ReduceOp::SumSquare) ? x * x : x;
}

__device__ __forceinline__ float finish(ReduceOp op, float acc, int64_t count) {
  switch (op) {
  case ReduceOp::Mean:
    return acc / static_cast<float>(count);
  case ReduceOp::L2:
    return sqrtf(acc);
  default:
    return acc;
  }
}

/// `kept` enumerates outputs, `reduced` the elements of one output; both
/// carry input strides.
template <typename T, int G>
__global__ void reduceKernel(const T *x, T *y, Dims kept, Dims reduced,
                             int64_t numOutputs, int64_t count, ReduceOp op) {
  __shared__ float partial[kThreads / 32];
  constexpr int perBlock = kThreads / G;
  int lane = threadIdx.x % G;
  int64_t first = static_cast<int64_t>(blockIdx.x) * perBlock;
  for (int64_t o = first + threadIdx.x / G; o - threadIdx.x / G < numOutputs;
       o += static_cast<int64_t>(gridDim.x) * perBlock) {
    bool active = o < numOutputs;
    float acc = identity(op);
    if (active) {
      int64_t base = 0, rest = o;
      for (int d = kept.rank - 1; d >= 0; --d) {
        base += (rest % kept.size[d]) * kept.stride[d];
        rest /= kept.size[d];
      }
      for (int64_t r = lane; r < count; r += G) {
        int64_t at = base;
        rest = r;
        for (int d = reduced.rank - 1; d >= 0; --d) {
          at += (rest % reduced.size[d]) * reduced.stride[d];
          rest /= reduced.size[d];
        }
        acc = combine(op, acc, prepare(op, toFloat(x[at])));
      }
    }
    if (G >= 32) {
      for (int s = 16; s > 0; s >>= 1)
        acc = combine(op, acc, __shfl_xor_sync(0xffffffffu, acc, s));
    }
    if (G > 32) {
      // The block is one group: combine the warps' partial results.
      __syncthreads();
      if ((threadIdx.x & 31) == 0)
        partial[threadIdx.x >> 5] = acc;
      __syncthreads();
      acc = partial[0];
      for (int w = 1; w < G / 32; ++w)
        acc = combine(op, acc, partial[w]);
    }
    if (active && lane == 0)
      y[o] = fromFloat<T>(finish(op, acc, count));
  }
}

template <typename T, int G>
void launchReduce(const CleaveTensor &x, const CleaveTensor &y,
                  const Dims &kept, const Dims &reduced, int64_t numOutputs,
                  int64_t count, ReduceOp op, cudaStream_t stream) {
  int64_t groups = (numOutputs + kThreads / G - 1) / (kThreads / G);
  unsigned blocks = groups > 65535 * 8 ? 65535 * 8 : unsigned(groups);
  reduceKernel<T, G><<<blocks, kThreads, 0, stream>>>(
      static_cast<const T *>(x.data), static_cast<T *>(y.data), kept, reduced,
      numOutputs, count, op);
}

int32_t reduceKernelEntry(CleaveContext *ctx, const char *kernel,
                          const args::Reduce &args, ReduceOp op) {
  const CleaveTensor &x = args.x(), &y = args.y();
  int64_t naxes = args.numAxes();
  uint32_t axes = 0;
  for (int64_t axis : args.axes()) {
    if (axis < 0 || axis >= x.rank)
      return fail(ctx, kernel, "axis %lld out of range", (long long)axis);
    axes |= 1u << axis;
  }
  // Reducing no axis folds one element per output: the input itself, but
  // for the reductions that square their elements first.
  if (naxes == 0 && op != ReduceOp::L2 && op != ReduceOp::SumSquare) {
    size_t bytes = numElements(x) * dtypeSize(x.dtype);
    if (bytes && x.data != y.data &&
        cudaMemcpyAsync(y.data, x.data, bytes, cudaMemcpyDeviceToDevice,
                        streamOf(ctx)) != cudaSuccess)
      return fail(ctx, kernel, "cudaMemcpyAsync failed");
    return 0;
  }
  return reduceOver(ctx, kernel, x, y, axes, op);
}

} // namespace

int32_t cleave::cuda::reduceOver(CleaveContext *ctx, const char *kernel,
                                 const CleaveTensor &x, const CleaveTensor &y,
                                 uint32_t axes, ReduceOp op) {
  if (x.dtype != y.dtype)
    return fail(ctx, kernel, "input and output element types differ");
  Dims in = dimsOf(x);
  Dims kept, reduced;
  for (int d = 0; d < x.rank; ++d) {
    Dims &to = (axes >> d) & 1 ? reduced : kept;
    to.size[to.rank] = in.size[d];
    to.stride[to.rank] = in.stride[d];
    ++to.rank;
  }
  int64_t numOutputs = product(kept.size, 0, kept.rank);
  int64_t count = product(reduced.size, 0, reduced.rank);
  if (numOutputs != numElements(y))
    return fail(ctx, kernel, "output has %lld elements, expected %lld",
                (long long)numElements(y), (long long)numOutputs);
  if (numOutputs == 0)
    return 0;
  cudaStream_t stream = streamOf(ctx);
  int32_t status = dispatchFloat(x.dtype, [&](auto t) {
    using T = decltype(t);
    if (count <= 16)
      launchReduce<T, 1>(x, y, kept, reduced, numOutputs, count, op, stream);
    else if (count <= 4096)
      launchReduce<T, 32>(x, y, kept, reduced, numOutputs, count, op, stream);
    else
      launchReduce<T, kThreads>(x, y, kept, reduced, numOutputs, count, op,
                                stream);
    return 0;
  });
  if (status)
    return fail(ctx, kernel, "unsupported element type %d", x.dtype);
  return checkLaunch(ctx, kernel);
}

#define CLEAVE_REDUCE(name, op)                                                \
  int32_t cleave::cuda::kernels::name(CleaveContext *ctx,                      \
                                      const args::Reduce &args) {              \
    return reduceKernelEntry(ctx, #name, args, op);                            \
  }

CLEAVE_REDUCE(reduce_sum, ReduceOp::Sum)
CLEAVE_REDUCE(reduce_mean, ReduceOp::Mean)
CLEAVE_REDUCE(reduce_max, ReduceOp::Max)
CLEAVE_REDUCE(reduce_min, ReduceOp::Min)
CLEAVE_REDUCE(reduce_prod, ReduceOp::Prod)
CLEAVE_REDUCE(reduce_l2, ReduceOp::L2)
CLEAVE_REDUCE(reduce_sum_square, ReduceOp::SumSquare)
