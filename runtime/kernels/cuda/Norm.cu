//===- Norm.cu - normalisations and softmax -------------------------------===//
//
// Row kernels: one block normalises one contiguous row (layer_norm's
// trailing dimensions, an instance's or a group's elements, a softmax over
// the last axis), with two passes (mean, then the centred sum of squares)
// in fp32 for accuracy; rms_norm's rows need only the sum of squares. A softmax
// over an inner axis uses one thread per column instead, which keeps its reads
// coalesced. A softmax with nan_to_zero writes 0 for each NaN (a line of -inf
// gives zeros).
//
//===----------------------------------------------------------------------===//

#include "CudaCommon.h"

using namespace cleave::cuda;

namespace {

/// Where an element of the normalised shape finds its scale or bias:
/// broadcast strides (0 for a broadcast dimension) over `dims`.
struct Broadcast {
  bool full = true;    // same shape: index directly
  bool scalar = false; // one element
  Dims map;
};

__device__ __forceinline__ int64_t broadcastIndex(const Broadcast &b,
                                                  int64_t i) {
  if (b.full)
    return i;
  if (b.scalar)
    return 0;
  int64_t at = 0;
  for (int d = b.map.rank - 1; d >= 0; --d) {
    at += (i % b.map.size[d]) * b.map.stride[d];
    i /= b.map.size[d];
  }
  return at;
}

/// How `t` broadcasts (numpy, right-aligned) to the dimensions
/// [axis, x.rank) of `x`.
bool broadcastOf(const CleaveTensor &t, const CleaveTensor &x, int axis,
                 Broadcast &b) {
  int rank = x.rank - axis;
  int64_t n = numElements(t);
  int64_t want = product(x.shape, axis, x.rank);
  if (n == want) {
    b.full = true;
    return true;
  }
  b.full = false;
  if (n == 1) {
    b.scalar = true;
    return true;
  }
  if (t.rank > rank)
    return false;
  Dims td = dimsOf(t);
  b.map.rank = rank;
  for (int d = 0; d < rank; ++d) {
    b.map.size[d] = x.shape[axis + d];
    int td0 = d - (rank - t.rank);
    if (td0 < 0 || t.shape[td0] == 1)
      b.map.stride[d] = 0;
    else if (t.shape[td0] == x.shape[axis + d])
      b.map.stride[d] = td.stride[td0];
    else
      return false;
  }
  return true;
}

/// Normalises rows of `length`: y = (x - mean) / sqrt(var + eps) * scale +
/// bias. For layer_norm the parameters index by position in the row; for
/// instance and group norm by channel: ((row % rowsPerSample) * length + j)
/// / spatial.
template <typename T, typename P>
__global__ void rowNormKernel(const T *x, T *y, const P *scale, const P *bias,
                              int64_t length, float epsilon, bool perChannel,
                              int64_t rowsPerSample, int64_t spatial,
                              Broadcast scaleMap, Broadcast biasMap) {
  __shared__ float shared[32];
  int64_t row = blockIdx.x;
  const T *xr = x + row * length;
  T *yr = y + row * length;
  float sum = 0.f;
  for (int64_t j = threadIdx.x; j < length; j += blockDim.x)
    sum += toFloat(xr[j]);
  float mean = blockSum(sum, shared) / static_cast<float>(length);
  float sq = 0.f;
  for (int64_t j = threadIdx.x; j < length; j += blockDim.x) {
    float d = toFloat(xr[j]) - mean;
    sq += d * d;
  }
  float var = blockSum(sq, shared) / static_cast<float>(length);
  float inv = rsqrtf(var + epsilon);
  int64_t channelBase = (row % rowsPerSample) * length;
  for (int64_t j = threadIdx.x; j < length; j += blockDim.x) {
    float s, b;
    if (perChannel) {
      int64_t c = (channelBase + j) / spatial;
      s = toFloat(scale[c]);
      b = bias ? toFloat(bias[c]) : 0.f;
    } else {
      s = toFloat(scale[broadcastIndex(scaleMap, j)]);
      b = bias ? toFloat(bias[broadcastIndex(biasMap, j)]) : 0.f;
    }
    yr[j] = fromFloat<T>((toFloat(xr[j]) - mean) * inv * s + b);
  }
}

template <typename T>
int32_t launchRowNorm(CleaveContext *ctx, const char *kernel,
                      const CleaveTensor &x, const CleaveTensor &y,
                      const CleaveTensor &scale, const CleaveTensor *bias,
                      int64_t rows, int64_t length, float epsilon,
                      bool perChannel, int64_t rowsPerSample, int64_t spatial,
                      const Broadcast &scaleMap, const Broadcast &biasMap) {
  if (rows == 0 || length == 0)
    return 0;
  if (rows > INT32_MAX)
    return fail(ctx, kernel, "too many rows");
  if (scale.dtype != x.dtype || (bias && bias->dtype != x.dtype))
    return fail(ctx, kernel, "scale and bias must have the input's type");
  int threads = length >= 1024 ? 512 : (length >= 256 ? 256 : 128);
  rowNormKernel<T, T><<<unsigned(rows), threads, 0, streamOf(ctx)>>>(
      static_cast<const T *>(x.data), static_cast<T *>(y.data),
      static_cast<const T *>(scale.data),
      bias ? static_cast<const T *>(bias->data) : nullptr, length, epsilon,
      perChannel, rowsPerSample, spatial, scaleMap, biasMap);
  return checkLaunch(ctx, kernel);
}

/// Normalises rows of `length` by their root mean square: y = x /
/// sqrt(mean(x^2) + eps) * scale, the scale indexed by position in the row.
template <typename T>
__global__ void rmsRowKernel(const T *x, T *y, const T *scale, int64_t length,
                             float epsilon, Broadcast scaleMap) {
  __shared__ float shared[32];
  int64_t row = blockIdx.x;
  const T *xr = x + row * length;
  T *yr = y + row * length;
  float sq = 0.f;
  for (int64_t j = threadIdx.x; j < length; j += blockDim.x) {
    float v = toFloat(xr[j]);
    sq += v * v;
  }
  float inv =
      rsqrtf(blockSum(sq, shared) / static_cast<float>(length) + epsilon);
  for (int64_t j = threadIdx.x; j < length; j += blockDim.x)
    yr[j] = fromFloat<T>(toFloat(xr[j]) * inv *
                         toFloat(scale[broadcastIndex(scaleMap, j)]));
}

/// Channel-wise groups (instance norm: one channel per group).
/// Instance or group normalisation of x with one scale and bias per
/// channel.
int32_t groupNorm(CleaveContext *ctx, const char *kernel, const CleaveTensor &x,
                  const CleaveTensor &scale, const CleaveTensor &bias,
                  const CleaveTensor &y, int64_t groups, double epsilon) {
  if (x.rank < 2 || x.dtype != y.dtype)
    return fail(ctx, kernel, "input must be N x C x ...");
  int64_t channels = x.shape[1];
  if (groups < 1 || channels % groups)
    return fail(ctx, kernel, "%lld groups do not divide %lld channels",
                (long long)groups, (long long)channels);
  int64_t spatial = product(x.shape, 2, x.rank);
  int64_t length = channels / groups * spatial;
  int64_t rows = x.shape[0] * groups;
  const CleaveTensor *presentBias = bias.data ? &bias : nullptr;
  int32_t status = dispatchFloat(x.dtype, [&](auto t) {
    using T = decltype(t);
    return launchRowNorm<T>(ctx, kernel, x, y, scale, presentBias, rows, length,
                            static_cast<float>(epsilon), true, groups, spatial,
                            Broadcast(), Broadcast());
  });
  if (status < 0)
    return fail(ctx, kernel, "unsupported element type %d", x.dtype);
  return status;
}

template <typename T>
__global__ void batchNormKernel(const T *x, T *y, const T *scale, const T *bias,
                                const T *mean, const T *var, int64_t channels,
                                int64_t spatial, int64_t total, float epsilon) {
  CLEAVE_GRID_LOOP(i, total) {
    int64_t c = (i / spatial) % channels;
    float inv = rsqrtf(toFloat(var[c]) + epsilon);
    y[i] = fromFloat<T>((toFloat(x[i]) - toFloat(mean[c])) * inv *
                            toFloat(scale[c]) +
                        toFloat(bias[c]));
  }
}

/// A softmax result, 0 in place of NaN when `nanToZero`.
__device__ __forceinline__ float softmaxResult(float value, bool nanToZero) {
  return nanToZero && isnan(value) ? 0.f : value;
}

/// Softmax over a contiguous last axis: one block per row.
template <typename T, bool Log>
__global__ void softmaxRowKernel(const T *x, T *y, int64_t length,
                                 bool nanToZero) {
  __shared__ float shared[32];
  const T *xr = x + blockIdx.x * length;
  T *yr = y + blockIdx.x * length;
  float m = -INFINITY;
  for (int64_t j = threadIdx.x; j < length; j += blockDim.x)
    m = fmaxf(m, toFloat(xr[j]));
  m = blockMax(m, shared);
  float sum = 0.f;
  for (int64_t j = threadIdx.x; j < length; j += blockDim.x)
    sum += expf(toFloat(xr[j]) - m);
  sum = blockSum(sum, shared);
  float logSum = logf(sum);
  for (int64_t j = threadIdx.x; j < length; j += blockDim.x) {
    float v = toFloat(xr[j]) - m;
    yr[j] = fromFloat<T>(
        softmaxResult(Log ? v - logSum : expf(v) / sum, nanToZero));
  }
}

/// Softmax over an inner axis: one thread per (outer, inner) column.
template <typename T, bool Log>
__global__ void softmaxColumnKernel(const T *x, T *y, int64_t outer,
                                    int64_t length, int64_t inner,
                                    bool nanToZero) {
  CLEAVE_GRID_LOOP(i, outer * inner) {
    int64_t o = i / inner, q = i % inner;
    const T *xc = x + o * length * inner + q;
    T *yc = y + o * length * inner + q;
    float m = -INFINITY;
    for (int64_t j = 0; j < length; ++j)
      m = fmaxf(m, toFloat(xc[j * inner]));
    float sum = 0.f;
    for (int64_t j = 0; j < length; ++j)
      sum += expf(toFloat(xc[j * inner]) - m);
    float logSum = logf(sum);
    for (int64_t j = 0; j < length; ++j) {
      float v = toFloat(xc[j * inner]) - m;
      yc[j * inner] = fromFloat<T>(
          softmaxResult(Log ? v - logSum : expf(v) / sum, nanToZero));
    }
  }
}

template <bool Log>
int32_t softmax(CleaveContext *ctx, const char *kernel, const CleaveTensor &x,
                const CleaveTensor &y, int64_t axisIndex, bool nanToZero) {
  if (axisIndex < 0 || axisIndex >= x.rank)
    return fail(ctx, kernel, "axis %lld out of range", (long long)axisIndex);
  int axis = static_cast<int>(axisIndex);
  if (x.dtype != y.dtype)
    return fail(ctx, kernel, "input and output element types differ");
  int64_t outer = product(x.shape, 0, axis);
  int64_t length = x.shape[axis];
  int64_t inner = product(x.shape, axis + 1, x.rank);
  if (outer * length * inner == 0)
    return 0;
  cudaStream_t stream = streamOf(ctx);
  int32_t status = dispatchFloat(x.dtype, [&](auto t) {
    using T = decltype(t);
    auto *xs = static_cast<const T *>(x.data);
    auto *ys = static_cast<T *>(y.data);
    if (inner == 1 && outer <= INT32_MAX) {
      int threads = length >= 1024 ? 512 : (length >= 256 ? 256 : 128);
      softmaxRowKernel<T, Log>
          <<<unsigned(outer), threads, 0, stream>>>(xs, ys, length, nanToZero);
    } else {
      softmaxColumnKernel<T, Log>
          <<<blocksFor(outer * inner), kThreads, 0, stream>>>(
              xs, ys, outer, length, inner, nanToZero);
    }
    return 0;
  });
  if (status)
    return fail(ctx, kernel, "unsupported element type %d", x.dtype);
  return checkLaunch(ctx, kernel);
}

} // namespace

int32_t cleave::cuda::kernels::batch_norm(CleaveContext *ctx,
                                          const args::BatchNorm &args) {
  const CleaveTensor &x = args.x(), &y = args.y();
  if (x.rank < 2 || x.dtype != y.dtype)
    return fail(ctx, "batch_norm", "input must be N x C x ...");
  const CleaveTensor *params[] = {&args.scale(), &args.bias(), &args.mean(),
                                  &args.variance()};
  for (int i = 0; i < 4; ++i)
    if (params[i]->dtype != x.dtype || numElements(*params[i]) != x.shape[1])
      return fail(ctx, "batch_norm",
                  "parameter %d must have C elements of the input's type",
                  i + 1);
  int64_t total = numElements(x);
  if (total == 0)
    return 0;
  int64_t spatial = product(x.shape, 2, x.rank);
  float epsilon = static_cast<float>(args.epsilon());
  cudaStream_t stream = streamOf(ctx);
  int32_t status = dispatchFloat(x.dtype, [&](auto t) {
    using T = decltype(t);
    batchNormKernel<T><<<blocksFor(total), kThreads, 0, stream>>>(
        static_cast<const T *>(x.data), static_cast<T *>(y.data),
        static_cast<const T *>(args.scale().data),
        static_cast<const T *>(args.bias().data),
        static_cast<const T *>(args.mean().data),
        static_cast<const T *>(args.variance().data), x.shape[1], spatial,
        total, epsilon);
    return 0;
  });
  if (status)
    return fail(ctx, "batch_norm", "unsupported element type %d", x.dtype);
  return checkLaunch(ctx, "batch_norm");
}

int32_t cleave::cuda::kernels::instance_norm(CleaveContext *ctx,
                                             const args::InstanceNorm &args) {
  if (args.x().rank < 2)
    return fail(ctx, "instance_norm", "input must be N x C x ...");
  return groupNorm(ctx, "instance_norm", args.x(), args.scale(), args.bias(),
                   args.y(), args.x().shape[1], args.epsilon());
}

int32_t cleave::cuda::kernels::group_norm(CleaveContext *ctx,
                                          const args::GroupNorm &args) {
  return groupNorm(ctx, "group_norm", args.x(), args.scale(), args.bias(),
                   args.y(), args.numGroups(), args.epsilon());
}

int32_t cleave::cuda::kernels::layer_norm(CleaveContext *ctx,
                                          const args::LayerNorm &args) {
  const CleaveTensor &x = args.x(), &y = args.y();
  int axis = static_cast<int>(args.axis());
  if (axis < 0 || axis >= x.rank || x.dtype != y.dtype)
    return fail(ctx, "layer_norm", "axis %d out of range", axis);
  const CleaveTensor *bias = args.bias();
  Broadcast scaleMap, biasMap;
  if (!broadcastOf(args.scale(), x, axis, scaleMap) ||
      (bias && !broadcastOf(*bias, x, axis, biasMap)))
    return fail(ctx, "layer_norm",
                "scale or bias does not broadcast to the normalised shape");
  int64_t rows = product(x.shape, 0, axis);
  int64_t length = product(x.shape, axis, x.rank);
  int32_t status = dispatchFloat(x.dtype, [&](auto t) {
    using T = decltype(t);
    return launchRowNorm<T>(ctx, "layer_norm", x, y, args.scale(), bias, rows,
                            length, static_cast<float>(args.epsilon()), false,
                            1, 1, scaleMap, biasMap);
  });
  if (status < 0)
    return fail(ctx, "layer_norm", "unsupported element type %d", x.dtype);
  return status;
}

int32_t cleave::cuda::kernels::rms_norm(CleaveContext *ctx,
                                        const args::RmsNorm &args) {
  const char *kernel = "rms_norm";
  const CleaveTensor &x = args.x(), &y = args.y(), &scale = args.scale();
  int axis = static_cast<int>(args.axis());
  if (axis < 0 || axis >= x.rank || x.dtype != y.dtype)
    return fail(ctx, kernel, "axis %d out of range", axis);
  if (scale.dtype != x.dtype)
    return fail(ctx, kernel, "scale must have the input's type");
  Broadcast scaleMap;
  if (!broadcastOf(scale, x, axis, scaleMap))
    return fail(ctx, kernel,
                "scale does not broadcast to the normalised shape");
  int64_t rows = product(x.shape, 0, axis);
  int64_t length = product(x.shape, axis, x.rank);
  if (rows == 0 || length == 0)
    return 0;
  if (rows > INT32_MAX)
    return fail(ctx, kernel, "too many rows");
  int threads = length >= 1024 ? 512 : (length >= 256 ? 256 : 128);
  int32_t status = dispatchFloat(x.dtype, [&](auto t) {
    using T = decltype(t);
    rmsRowKernel<T><<<unsigned(rows), threads, 0, streamOf(ctx)>>>(
        static_cast<const T *>(x.data), static_cast<T *>(y.data),
        static_cast<const T *>(scale.data), length,
        static_cast<float>(args.epsilon()), scaleMap);
    return 0;
  });
  if (status < 0)
    return fail(ctx, kernel, "unsupported element type %d", x.dtype);
  return checkLaunch(ctx, kernel);
}

int32_t cleave::cuda::kernels::softmax(CleaveContext *ctx,
                                       const args::Softmax &args) {
  return ::softmax<false>(ctx, "softmax", args.x(), args.y(), args.axis(),
                          args.nanToZero() != 0);
}

int32_t cleave::cuda::kernels::log_softmax(CleaveContext *ctx,
                                           const args::LogSoftmax &args) {
  return ::softmax<true>(ctx, "log_softmax", args.x(), args.y(), args.axis(),
                         false);
}
