//===- Pool.cu - max, average and global pooling --------------------------===//
//
// Own kernels rather than cuDNN: pooling is memory-bound, ONNX's ceil_mode
// and count_include_pad rules are easier to state than to map onto cuDNN's
// descriptors, and any number of spatial dimensions works. One thread per
// output; the window is walked with the dimensions' sizes from the
// contract.
//
//===----------------------------------------------------------------------===//

#include "CudaCommon.h"

#include <type_traits>

using namespace cleave::cuda;

namespace {

constexpr int kMaxSpatial = CLEAVE_MAX_RANK - 2;

struct PoolGeometry {
  int n = 0;
  int64_t in[kMaxSpatial] = {}, out[kMaxSpatial] = {}, kernel[kMaxSpatial] = {};
  int64_t stride[kMaxSpatial] = {}, padBegin[kMaxSpatial] = {},
          padEnd[kMaxSpatial] = {}, dilation[kMaxSpatial] = {};
  int64_t inSize = 1, outSize = 1, kernelSize = 1;
  bool countIncludePad = false;
};

/// Reads the window of max_pool or average_pool.
template <typename Args>
bool readGeometry(const Args &args, const CleaveTensor &x,
                  const CleaveTensor &y, PoolGeometry &g) {
  g.n = static_cast<int>(args.n());
  if (g.n < 1 || g.n > kMaxSpatial || x.rank != g.n + 2 || y.rank != g.n + 2)
    return false;
  const int64_t *kernel = args.kernelShape().data(),
                *strides = args.strides().data(), *pads = args.pads().data(),
                *dilations = args.dilations().data();
  for (int d = 0; d < g.n; ++d) {
    g.in[d] = x.shape[d + 2];
    g.out[d] = y.shape[d + 2];
    g.kernel[d] = kernel[d];
    g.stride[d] = strides[d];
    g.padBegin[d] = pads[d];
    g.padEnd[d] = pads[g.n + d];
    g.dilation[d] = dilations[d];
    if (g.kernel[d] < 1 || g.stride[d] < 1 || g.dilation[d] < 1)
      return false;
    g.inSize *= g.in[d];
    g.outSize *= g.out[d];
    g.kernelSize *= g.kernel[d];
  }
  return true;
}

template <typename T, bool IsMax>
__global__ void poolKernel(const T *x, T *y, int64_t planes, PoolGeometry g) {
  CLEAVE_GRID_LOOP(i, planes * g.outSize) {
    int64_t plane = i / g.outSize;
    int64_t start[kMaxSpatial];
    int64_t rest = i % g.outSize;
    for (int d = g.n - 1; d >= 0; --d) {
      start[d] = (rest % g.out[d]) * g.stride[d] - g.padBegin[d];
      rest /= g.out[d];
    }
    const T *base = x + plane * g.inSize;
    float acc = IsMax ? -INFINITY : 0.f;
    int64_t valid = 0, padded = 0;
    for (int64_t k = 0; k < g.kernelSize; ++k) {
      int64_t at = 0, scale = 1, kr = k;
      bool inside = true, inPadding = true;
      for (int d = g.n - 1; d >= 0; --d) {
        int64_t c = start[d] + (kr % g.kernel[d]) * g.dilation[d];
        kr /= g.kernel[d];
        inside &= c >= 0 && c < g.in[d];
        inPadding &= c >= -g.padBegin[d] && c < g.in[d] + g.padEnd[d];
        at += c * scale;
        scale *= g.in[d];
      }
      padded += inPadding;
      if (!inside)
        continue;
      ++valid;
      float v = toFloat(base[at]);
      if (IsMax)
        acc = (isnan(acc) || isnan(v)) ? NAN : fmaxf(acc, v);
      else
        acc += v;
    }
    if (!IsMax) {
      int64_t divisor = g.countIncludePad ? padded : valid;
      acc = divisor ? acc / static_cast<float>(divisor) : 0.f;
    }
    y[i] = fromFloat<T>(acc);
  }
}

/// max_pool (args::MaxPool) or average_pool (args::AveragePool).
template <typename Args>
int32_t pool(CleaveContext *ctx, const char *kernel, const Args &args) {
  constexpr bool IsMax = std::is_same_v<Args, args::MaxPool>;
  const CleaveTensor &x = args.x(), &y = args.y();
  // GPU programs keep NCHW.
  if (args.block() != 0)
    return fail(ctx, kernel, "block %lld: only NCHW (0) on the GPU",
                (long long)args.block());
  PoolGeometry g;
  if (!readGeometry(args, x, y, g))
    return fail(ctx, kernel, "bad geometry for %lld spatial dimensions",
                (long long)args.n());
  // ceil_mode is not read: the output shape already says it.
  if constexpr (!IsMax)
    g.countIncludePad = args.countIncludePad() != 0;
  if (x.dtype != y.dtype)
    return fail(ctx, kernel, "input and output element types differ");
  int64_t planes = x.shape[0] * x.shape[1];
  int64_t total = planes * g.outSize;
  if (total == 0)
    return 0;
  cudaStream_t stream = streamOf(ctx);
  int32_t status = dispatchFloat(x.dtype, [&](auto t) {
    using T = decltype(t);
    poolKernel<T, IsMax><<<blocksFor(total), kThreads, 0, stream>>>(
        static_cast<const T *>(x.data), static_cast<T *>(y.data), planes, g);
    return 0;
  });
  if (status)
    return fail(ctx, kernel, "unsupported element type %d", x.dtype);
  return checkLaunch(ctx, kernel);
}

int32_t globalPool(CleaveContext *ctx, const char *kernel,
                   const args::GlobalPool &args, ReduceOp op) {
  const CleaveTensor &x = args.x();
  if (x.rank < 2)
    return fail(ctx, kernel, "input must be N x C x ...");
  // GPU programs keep NCHW.
  if (args.xBlock() != 0)
    return fail(ctx, kernel, "xBlock %lld: only NCHW (0) on the GPU",
                (long long)args.xBlock());
  uint32_t axes = 0;
  for (int d = 2; d < x.rank; ++d)
    axes |= 1u << d;
  return reduceOver(ctx, kernel, x, args.y(), axes, op);
}

} // namespace

int32_t cleave::cuda::kernels::max_pool(CleaveContext *ctx,
                                        const args::MaxPool &args) {
  return pool(ctx, "max_pool", args);
}

int32_t cleave::cuda::kernels::average_pool(CleaveContext *ctx,
                                            const args::AveragePool &args) {
  return pool(ctx, "average_pool", args);
}

int32_t
cleave::cuda::kernels::global_average_pool(CleaveContext *ctx,
                                           const args::GlobalPool &args) {
  return globalPool(ctx, "global_average_pool", args, ReduceOp::Mean);
}

int32_t cleave::cuda::kernels::global_max_pool(CleaveContext *ctx,
                                               const args::GlobalPool &args) {
  return globalPool(ctx, "global_max_pool", args, ReduceOp::Max);
}
