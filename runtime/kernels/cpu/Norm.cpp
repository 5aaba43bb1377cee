//===- Norm.cpp - batch, instance, layer and group normalisation ----------===//
//
// Inference-mode batch normalisation folds its four parameters into one
// scale and shift per channel. The others normalise contiguous runs of
// elements by their own mean and (biased) variance, accumulated in double
// over two passes so that large runs with a large mean stay accurate.
//
//===----------------------------------------------------------------------===//

#include "KernelSupport.h"

#include <cmath>
#include <vector>

using namespace cleave::cpu;

namespace {

/// Mean and 1 / sqrt(variance + epsilon) of `x[0..length)`.
void moments(const float *x, int64_t length, double epsilon, float &mean,
             float &invStd) {
  double sum = 0.0;
  for (int64_t i = 0; i < length; ++i)
    sum += x[i];
  double m = length > 0 ? sum / static_cast<double>(length) : 0.0;
  double squares = 0.0;
  for (int64_t i = 0; i < length; ++i) {
    double d = x[i] - m;
    squares += d * d;
  }
  double variance = length > 0 ? squares / static_cast<double>(length) : 0.0;
  mean = static_cast<float>(m);
  invStd = static_cast<float>(1.0 / std::sqrt(variance + epsilon));
}

int32_t checkAllF32(CleaveContext *ctx, const char *kernel,
                    const CleaveTensor *in, int32_t numIn, CleaveTensor *out) {
  static const char *names[] = {"input 0", "input 1", "input 2", "input 3",
                                "input 4"};
  for (int32_t i = 0; i < numIn && i < 5; ++i)
    if (in[i].data && checkF32(ctx, kernel, in[i], names[i]))
      return 1;
  return checkF32(ctx, kernel, out[0], "Y");
}

int32_t checkChannelParams(CleaveContext *ctx, const char *kernel,
                           const CleaveTensor *in, int32_t first, int32_t last,
                           int64_t channels) {
  for (int32_t i = first; i < last; ++i)
    if (numElements(in[i]) != channels)
      return fail(ctx, kernel, "input %d has %lld elements, expected %lld", i,
                  (long long)numElements(in[i]), (long long)channels);
  return 0;
}

/// Expands a parameter of layer_norm (unidirectionally broadcast to the
/// normalised shape `dims[0..rank)`) to one value per normalised element.
std::vector<float> broadcastTo(const CleaveTensor &param, const int64_t *dims,
                               int32_t rank) {
  int64_t total = product(dims, 0, rank);
  std::vector<float> result(total);
  const float *src = static_cast<const float *>(param.data);
  int64_t paramStrides[CLEAVE_MAX_RANK] = {0};
  int64_t stride = 1;
  for (int32_t i = param.rank - 1; i >= 0; --i) {
    int32_t target = rank - (param.rank - i);
    if (target >= 0)
      paramStrides[target] = param.shape[i] == 1 ? 0 : stride;
    stride *= param.shape[i];
  }
  for (int64_t flat = 0; flat < total; ++flat) {
    int64_t rest = flat, offset = 0;
    for (int32_t d = rank - 1; d >= 0; --d) {
      offset += (rest % dims[d]) * paramStrides[d];
      rest /= dims[d];
    }
    result[flat] = src[offset];
  }
  return result;
}

bool broadcastsTo(const CleaveTensor &param, const int64_t *dims,
                  int32_t rank) {
  if (param.rank > rank)
    return false;
  for (int32_t i = 0; i < param.rank; ++i) {
    int64_t own = param.shape[param.rank - 1 - i];
    if (own != 1 && own != dims[rank - 1 - i])
      return false;
  }
  return true;
}

} // namespace

extern "C" int32_t cleave_cpu_batch_norm(CleaveContext *ctx,
                                         const CleaveTensor *in, int32_t numIn,
                                         CleaveTensor *out, int32_t numOut,
                                         const int64_t *,
                                         const double *floats) {
  const char *kernel = "batch_norm";
  if (int32_t status = checkArity(ctx, kernel, numIn, 5, numOut, 1))
    return status;
  if (checkAllF32(ctx, kernel, in, 5, out))
    return 1;
  const CleaveTensor &x = in[0];
  if (x.rank < 2)
    return fail(ctx, kernel, "X must be at least 2-D");
  const int64_t channels = x.shape[1];
  if (checkChannelParams(ctx, kernel, in, 1, 5, channels))
    return 1;
  const int64_t planes = x.shape[0] * channels;
  const int64_t size = product(x.shape, 2, x.rank);
  const float *scale = static_cast<const float *>(in[1].data);
  const float *bias = static_cast<const float *>(in[2].data);
  const float *mean = static_cast<const float *>(in[3].data);
  const float *var = static_cast<const float *>(in[4].data);
  std::vector<float> factor(channels), shift(channels);
  for (int64_t c = 0; c < channels; ++c) {
    factor[c] =
        static_cast<float>(scale[c] / std::sqrt((double)var[c] + floats[0]));
    shift[c] = bias[c] - mean[c] * factor[c];
  }
  const float *src = static_cast<const float *>(x.data);
  float *dst = static_cast<float *>(out[0].data);
  const int threads = numThreads(ctx);
#pragma omp parallel for num_threads(threads) if (planes * size >              \
                                                  kParallelGrain)
  for (int64_t p = 0; p < planes; ++p) {
    const float f = factor[p % channels], s = shift[p % channels];
    const float *a = src + p * size;
    float *b = dst + p * size;
    for (int64_t i = 0; i < size; ++i)
      b[i] = a[i] * f + s;
  }
  return 0;
}

extern "C" int32_t cleave_cpu_instance_norm(CleaveContext *ctx,
                                            const CleaveTensor *in,
                                            int32_t numIn, CleaveTensor *out,
                                            int32_t numOut, const int64_t *,
                                            const double *floats) {
  const char *kernel = "instance_norm";
  if (int32_t status = checkArity(ctx, kernel, numIn, 3, numOut, 1))
    return status;
  if (checkAllF32(ctx, kernel, in, 3, out))
    return 1;
  const CleaveTensor &x = in[0];
  if (x.rank < 2)
    return fail(ctx, kernel, "X must be at least 2-D");
  const int64_t channels = x.shape[1];
  if (checkChannelParams(ctx, kernel, in, 1, 3, channels))
    return 1;
  const int64_t planes = x.shape[0] * channels;
  const int64_t size = product(x.shape, 2, x.rank);
  const float *scale = static_cast<const float *>(in[1].data);
  const float *bias = static_cast<const float *>(in[2].data);
  const float *src = static_cast<const float *>(x.data);
  float *dst = static_cast<float *>(out[0].data);
  const double epsilon = floats[0];
  const int threads = numThreads(ctx);
#pragma omp parallel for num_threads(threads) if (planes * size >              \
                                                  kParallelGrain)
  for (int64_t p = 0; p < planes; ++p) {
    const float *a = src + p * size;
    float *b = dst + p * size;
    float mean, invStd;
    moments(a, size, epsilon, mean, invStd);
    const float f = invStd * scale[p % channels];
    const float s = bias[p % channels] - mean * f;
    for (int64_t i = 0; i < size; ++i)
      b[i] = a[i] * f + s;
  }
  return 0;
}

extern "C" int32_t cleave_cpu_layer_norm(CleaveContext *ctx,
                                         const CleaveTensor *in, int32_t numIn,
                                         CleaveTensor *out, int32_t numOut,
                                         const int64_t *ints,
                                         const double *floats) {
  const char *kernel = "layer_norm";
  if (int32_t status = checkArity(ctx, kernel, numIn, 2, numOut, 1))
    return status;
  if (checkAllF32(ctx, kernel, in, numIn < 3 ? numIn : 3, out))
    return 1;
  const CleaveTensor &x = in[0];
  const int64_t axis = ints[0];
  if (axis < 0 || axis >= x.rank)
    return fail(ctx, kernel, "axis %lld is out of range for rank %d",
                (long long)axis, x.rank);
  const int32_t normRank = x.rank - static_cast<int32_t>(axis);
  const int64_t *normDims = x.shape + axis;
  const int64_t rows = product(x.shape, 0, axis);
  const int64_t cols = product(normDims, 0, normRank);
  const bool hasBias = isPresent(in, numIn, 2);
  if (!broadcastsTo(in[1], normDims, normRank) ||
      (hasBias && !broadcastsTo(in[2], normDims, normRank)))
    return fail(ctx, kernel,
                "scale and bias must broadcast to the normalised shape");

  // Parameters of the normalised shape are used in place; smaller ones are
  // expanded once.
  std::vector<float> scaleStorage, biasStorage;
  const float *scale = static_cast<const float *>(in[1].data);
  if (numElements(in[1]) != cols) {
    scaleStorage = broadcastTo(in[1], normDims, normRank);
    scale = scaleStorage.data();
  }
  const float *bias = nullptr;
  if (hasBias) {
    bias = static_cast<const float *>(in[2].data);
    if (numElements(in[2]) != cols) {
      biasStorage = broadcastTo(in[2], normDims, normRank);
      bias = biasStorage.data();
    }
  }
  const float *src = static_cast<const float *>(x.data);
  float *dst = static_cast<float *>(out[0].data);
  const double epsilon = floats[0];
  const int threads = numThreads(ctx);
#pragma omp parallel for num_threads(threads) if (rows * cols > kParallelGrain)
  for (int64_t r = 0; r < rows; ++r) {
    const float *a = src + r * cols;
    float *b = dst + r * cols;
    float mean, invStd;
    moments(a, cols, epsilon, mean, invStd);
    if (bias) {
      for (int64_t i = 0; i < cols; ++i)
        b[i] = (a[i] - mean) * invStd * scale[i] + bias[i];
    } else {
      for (int64_t i = 0; i < cols; ++i)
        b[i] = (a[i] - mean) * invStd * scale[i];
    }
  }
  return 0;
}

extern "C" int32_t cleave_cpu_group_norm(CleaveContext *ctx,
                                         const CleaveTensor *in, int32_t numIn,
                                         CleaveTensor *out, int32_t numOut,
                                         const int64_t *ints,
                                         const double *floats) {
  const char *kernel = "group_norm";
  if (int32_t status = checkArity(ctx, kernel, numIn, 3, numOut, 1))
    return status;
  if (checkAllF32(ctx, kernel, in, 3, out))
    return 1;
  const CleaveTensor &x = in[0];
  if (x.rank < 2)
    return fail(ctx, kernel, "X must be at least 2-D");
  const int64_t channels = x.shape[1], groups = ints[0];
  if (groups < 1 || channels % groups != 0)
    return fail(ctx, kernel, "num_groups %lld does not divide %lld channels",
                (long long)groups, (long long)channels);
  if (checkChannelParams(ctx, kernel, in, 1, 3, channels))
    return 1;
  const int64_t size = product(x.shape, 2, x.rank);
  const int64_t perGroup = channels / groups;
  const int64_t units = x.shape[0] * groups;
  const float *scale = static_cast<const float *>(in[1].data);
  const float *bias = static_cast<const float *>(in[2].data);
  const float *src = static_cast<const float *>(x.data);
  float *dst = static_cast<float *>(out[0].data);
  const double epsilon = floats[0];
  const int threads = numThreads(ctx);
#pragma omp parallel for num_threads(threads) if (units * perGroup * size >    \
                                                  kParallelGrain)
  for (int64_t u = 0; u < units; ++u) {
    // The channels of a group are contiguous planes.
    const float *a = src + u * perGroup * size;
    float *b = dst + u * perGroup * size;
    float mean, invStd;
    moments(a, perGroup * size, epsilon, mean, invStd);
    for (int64_t c = 0; c < perGroup; ++c) {
      int64_t channel = (u % groups) * perGroup + c;
      const float f = invStd * scale[channel];
      const float s = bias[channel] - mean * f;
      for (int64_t i = 0; i < size; ++i)
        b[c * size + i] = a[c * size + i] * f + s;
    }
  }
  return 0;
}
