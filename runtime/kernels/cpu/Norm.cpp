//===- Norm.cpp - batch, instance, layer, RMS and group normalisation ----===//
//
// Inference-mode batch normalisation folds its four parameters into one
// scale and shift per channel. The others normalise contiguous runs of
// elements by their own mean and (biased) variance, accumulated in double
// over two passes so that large runs with a large mean stay accurate (in
// 16 partial sums each, which vectorise); RMS normalisation needs only the
// mean of squares, also in double.
//
//===----------------------------------------------------------------------===//

#include "KernelSupport.h"

#include <cmath>
#include <initializer_list>
#include <vector>

using namespace cleave::cpu;

namespace {

/// The sum of `term(x[i])` over `x[0..length)` in double, in kSumLanes
/// partial sums that the compiler keeps in vector registers (one double
/// chain is a dependent add per element, 2.5 ns each on a layer's rows).
constexpr int64_t kSumLanes = 16;
template <typename Term>
double sumInLanes(const float *x, int64_t length, Term term) {
  double lanes[kSumLanes] = {};
  const int64_t whole = length / kSumLanes * kSumLanes;
  for (int64_t i = 0; i < whole; i += kSumLanes)
    for (int64_t j = 0; j < kSumLanes; ++j)
      lanes[j] += term(static_cast<double>(x[i + j]));
  double sum = 0.0;
  for (double lane : lanes)
    sum += lane;
  for (int64_t i = whole; i < length; ++i)
    sum += term(static_cast<double>(x[i]));
  return sum;
}

/// Mean and 1 / sqrt(variance + epsilon) of `x[0..length)`.
void moments(const float *x, int64_t length, double epsilon, float &mean,
             float &invStd) {
  double sum = sumInLanes(x, length, [](double v) { return v; });
  double m = length > 0 ? sum / static_cast<double>(length) : 0.0;
  double squares = sumInLanes(x, length, [m](double v) {
    double d = v - m;
    return d * d;
  });
  double variance = length > 0 ? squares / static_cast<double>(length) : 0.0;
  mean = static_cast<float>(m);
  invStd = static_cast<float>(1.0 / std::sqrt(variance + epsilon));
}

/// Fails unless X (input 0), the parameters present (inputs 1, 2, ...; null
/// when absent) and Y hold float32.
int32_t checkAllF32(CleaveContext *ctx, const char *kernel,
                    const CleaveTensor &x,
                    std::initializer_list<const CleaveTensor *> params,
                    const CleaveTensor &y) {
  static const char *names[] = {"input 1", "input 2", "input 3", "input 4"};
  if (checkF32(ctx, kernel, x, "input 0"))
    return 1;
  int32_t i = 0;
  for (const CleaveTensor *param : params) {
    if (param && checkF32(ctx, kernel, *param, names[i]))
      return 1;
    ++i;
  }
  return checkF32(ctx, kernel, y, "Y");
}

/// Fails unless each parameter (inputs 1, 2, ...) has one element per
/// channel.
int32_t checkChannelParams(CleaveContext *ctx, const char *kernel,
                           std::initializer_list<const CleaveTensor *> params,
                           int64_t channels) {
  int32_t i = 1;
  for (const CleaveTensor *param : params) {
    if (numElements(*param) != channels)
      return fail(ctx, kernel, "input %d has %lld elements, expected %lld", i,
                  (long long)numElements(*param), (long long)channels);
    ++i;
  }
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

int32_t cleave::cpu::kernels::batch_norm(CleaveContext *ctx,
                                         const args::BatchNorm &args) {
  const char *kernel = "batch_norm";
  const CleaveTensor &x = args.x();
  std::initializer_list<const CleaveTensor *> params = {
      &args.scale(), &args.bias(), &args.mean(), &args.variance()};
  if (checkAllF32(ctx, kernel, x, params, args.y()))
    return 1;
  if (x.rank < 2)
    return fail(ctx, kernel, "X must be at least 2-D");
  const int64_t channels = x.shape[1];
  if (checkChannelParams(ctx, kernel, params, channels))
    return 1;
  const int64_t planes = x.shape[0] * channels;
  const int64_t size = product(x.shape, 2, x.rank);
  const float *scale = static_cast<const float *>(args.scale().data);
  const float *bias = static_cast<const float *>(args.bias().data);
  const float *mean = static_cast<const float *>(args.mean().data);
  const float *var = static_cast<const float *>(args.variance().data);
  std::vector<float> factor(channels), shift(channels);
  for (int64_t c = 0; c < channels; ++c) {
    factor[c] = static_cast<float>(scale[c] /
                                   std::sqrt((double)var[c] + args.epsilon()));
    shift[c] = bias[c] - mean[c] * factor[c];
  }
  const float *src = static_cast<const float *>(x.data);
  float *dst = static_cast<float *>(args.y().data);
  const int threads = numThreads(ctx);
  parallelFor(threads, planes * size > kParallelGrain, planes, [&](int64_t p) {
    const float f = factor[p % channels], s = shift[p % channels];
    const float *a = src + p * size;
    float *b = dst + p * size;
    for (int64_t i = 0; i < size; ++i)
      b[i] = a[i] * f + s;
  });
  return 0;
}

int32_t cleave::cpu::kernels::instance_norm(CleaveContext *ctx,
                                            const args::InstanceNorm &args) {
  const char *kernel = "instance_norm";
  const CleaveTensor &x = args.x();
  std::initializer_list<const CleaveTensor *> params = {&args.scale(),
                                                        &args.bias()};
  if (checkAllF32(ctx, kernel, x, params, args.y()))
    return 1;
  if (x.rank < 2)
    return fail(ctx, kernel, "X must be at least 2-D");
  const int64_t channels = x.shape[1];
  if (checkChannelParams(ctx, kernel, params, channels))
    return 1;
  const int64_t planes = x.shape[0] * channels;
  const int64_t size = product(x.shape, 2, x.rank);
  const float *scale = static_cast<const float *>(args.scale().data);
  const float *bias = static_cast<const float *>(args.bias().data);
  const float *src = static_cast<const float *>(x.data);
  float *dst = static_cast<float *>(args.y().data);
  const double epsilon = args.epsilon();
  const int threads = numThreads(ctx);
  parallelFor(threads, planes * size > kParallelGrain, planes, [&](int64_t p) {
    const float *a = src + p * size;
    float *b = dst + p * size;
    float mean, invStd;
    moments(a, size, epsilon, mean, invStd);
    const float f = invStd * scale[p % channels];
    const float s = bias[p % channels] - mean * f;
    for (int64_t i = 0; i < size; ++i)
      b[i] = a[i] * f + s;
  });
  return 0;
}

int32_t cleave::cpu::kernels::layer_norm(CleaveContext *ctx,
                                         const args::LayerNorm &args) {
  const char *kernel = "layer_norm";
  const CleaveTensor &x = args.x(), &scaleParam = args.scale();
  const CleaveTensor *biasParam = args.bias();
  if (checkAllF32(ctx, kernel, x, {&scaleParam, biasParam}, args.y()))
    return 1;
  const int64_t axis = args.axis();
  if (axis < 0 || axis >= x.rank)
    return fail(ctx, kernel, "axis %lld is out of range for rank %d",
                (long long)axis, x.rank);
  const int32_t normRank = x.rank - static_cast<int32_t>(axis);
  const int64_t *normDims = x.shape + axis;
  const int64_t rows = product(x.shape, 0, axis);
  const int64_t cols = product(normDims, 0, normRank);
  if (!broadcastsTo(scaleParam, normDims, normRank) ||
      (biasParam && !broadcastsTo(*biasParam, normDims, normRank)))
    return fail(ctx, kernel,
                "scale and bias must broadcast to the normalised shape");

  // Parameters of the normalised shape are used in place; smaller ones are
  // expanded once.
  std::vector<float> scaleStorage, biasStorage;
  const float *scale = static_cast<const float *>(scaleParam.data);
  if (numElements(scaleParam) != cols) {
    scaleStorage = broadcastTo(scaleParam, normDims, normRank);
    scale = scaleStorage.data();
  }
  const float *bias = nullptr;
  if (biasParam) {
    bias = static_cast<const float *>(biasParam->data);
    if (numElements(*biasParam) != cols) {
      biasStorage = broadcastTo(*biasParam, normDims, normRank);
      bias = biasStorage.data();
    }
  }
  const float *src = static_cast<const float *>(x.data);
  float *dst = static_cast<float *>(args.y().data);
  const double epsilon = args.epsilon();
  const int threads = numThreads(ctx);
  parallelFor(threads, rows * cols > kParallelGrain, rows, [&](int64_t r) {
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
  });
  return 0;
}

int32_t cleave::cpu::kernels::rms_norm(CleaveContext *ctx,
                                       const args::RmsNorm &args) {
  const char *kernel = "rms_norm";
  const CleaveTensor &x = args.x(), &scaleParam = args.scale();
  if (checkAllF32(ctx, kernel, x, {&scaleParam}, args.y()))
    return 1;
  const int64_t axis = args.axis();
  if (axis < 0 || axis >= x.rank)
    return fail(ctx, kernel, "axis %lld is out of range for rank %d",
                (long long)axis, x.rank);
  const int32_t normRank = x.rank - static_cast<int32_t>(axis);
  const int64_t *normDims = x.shape + axis;
  const int64_t rows = product(x.shape, 0, axis);
  const int64_t cols = product(normDims, 0, normRank);
  if (!broadcastsTo(scaleParam, normDims, normRank))
    return fail(ctx, kernel, "scale must broadcast to the normalised shape");
  std::vector<float> scaleStorage;
  const float *scale = static_cast<const float *>(scaleParam.data);
  if (numElements(scaleParam) != cols) {
    scaleStorage = broadcastTo(scaleParam, normDims, normRank);
    scale = scaleStorage.data();
  }
  const float *src = static_cast<const float *>(x.data);
  float *dst = static_cast<float *>(args.y().data);
  const double epsilon = args.epsilon();
  const int threads = numThreads(ctx);
  parallelFor(threads, rows * cols > kParallelGrain, rows, [&](int64_t r) {
    const float *a = src + r * cols;
    float *b = dst + r * cols;
    double squares = sumInLanes(a, cols, [](double v) { return v * v; });
    double meanSquare = cols > 0 ? squares / static_cast<double>(cols) : 0.0;
    const float invRms =
        static_cast<float>(1.0 / std::sqrt(meanSquare + epsilon));
    for (int64_t i = 0; i < cols; ++i)
      b[i] = a[i] * invRms * scale[i];
  });
  return 0;
}

int32_t cleave::cpu::kernels::group_norm(CleaveContext *ctx,
                                         const args::GroupNorm &args) {
  const char *kernel = "group_norm";
  const CleaveTensor &x = args.x();
  std::initializer_list<const CleaveTensor *> params = {&args.scale(),
                                                        &args.bias()};
  if (checkAllF32(ctx, kernel, x, params, args.y()))
    return 1;
  if (x.rank < 2)
    return fail(ctx, kernel, "X must be at least 2-D");
  const int64_t channels = x.shape[1], groups = args.numGroups();
  if (groups < 1 || channels % groups != 0)
    return fail(ctx, kernel, "num_groups %lld does not divide %lld channels",
                (long long)groups, (long long)channels);
  if (checkChannelParams(ctx, kernel, params, channels))
    return 1;
  const int64_t size = product(x.shape, 2, x.rank);
  const int64_t perGroup = channels / groups;
  const int64_t units = x.shape[0] * groups;
  const float *scale = static_cast<const float *>(args.scale().data);
  const float *bias = static_cast<const float *>(args.bias().data);
  const float *src = static_cast<const float *>(x.data);
  float *dst = static_cast<float *>(args.y().data);
  const double epsilon = args.epsilon();
  const int threads = numThreads(ctx);
  parallelFor(threads, units * perGroup * size > kParallelGrain, units,
              [&](int64_t u) {
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
              });
  return 0;
}
