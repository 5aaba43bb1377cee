//===- Resize.cpp - nearest, linear and cubic resize ----------------------===//
//
// ONNX's three interpolation modes are separable: an N-D resize is one 1-D
// resize per dimension whose size or scale changes, each output position
// reading one (nearest), two (linear) or four (cubic) weighted input
// positions of its dimension. The dimensions are resized one after the
// other through scratch buffers, the last one into Y.
//
// Coordinates follow onnxruntime where it and the ONNX reference differ
// (align_corners divides by the integer output size; pytorch_half_pixel
// maps a size-1 output to 0). extrapolation_value only matters for
// tf_crop_and_resize, which the contract does not list.
//
//===----------------------------------------------------------------------===//

#include "KernelSupport.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

using namespace cleave::cpu;

namespace {

struct ResizeAttributes {
  int64_t mode, coordinates, nearestMode;
  bool excludeOutside;
  float cubicA;
};

/// The input coordinate of output position `x` of one dimension.
float sourceCoordinate(int64_t coordinates, float x, float scale,
                       int64_t inLength, int64_t outLength) {
  switch (coordinates) {
  case CLEAVE_RESIZE_ASYMMETRIC:
    return x / scale;
  case CLEAVE_RESIZE_ALIGN_CORNERS:
    return outLength == 1 ? 0.0f
                          : x * static_cast<float>(inLength - 1) /
                                static_cast<float>(outLength - 1);
  case CLEAVE_RESIZE_PYTORCH_HALF_PIXEL:
    return outLength > 1 ? (x + 0.5f) / scale - 0.5f : 0.0f;
  case CLEAVE_RESIZE_HALF_PIXEL_SYMMETRIC: {
    float adjustment =
        static_cast<float>(outLength) / (scale * static_cast<float>(inLength));
    float center = static_cast<float>(inLength) / 2.0f;
    return center * (1.0f - adjustment) + (x + 0.5f) / scale - 0.5f;
  }
  default:
    return (x + 0.5f) / scale - 0.5f;
  }
}

int64_t nearestIndex(int64_t nearestMode, float x) {
  float below = std::floor(x);
  switch (nearestMode) {
  case CLEAVE_NEAREST_FLOOR:
    return static_cast<int64_t>(below);
  case CLEAVE_NEAREST_CEIL:
    return static_cast<int64_t>(std::ceil(x));
  case CLEAVE_NEAREST_ROUND_PREFER_CEIL:
    return static_cast<int64_t>(x - below == 0.5f ? below + 1.0f
                                                  : std::round(x));
  default:
    return static_cast<int64_t>(x - below == 0.5f ? below : std::round(x));
  }
}

/// ONNX's cubic convolution weights of the four neighbours floor(x) - 1 ..
/// floor(x) + 2 at fractional offset `r`.
void cubicWeights(float a, float r, float *w) {
  float s = r + 1.0f, t = 1.0f - r, u = 2.0f - r;
  w[0] = ((a * s - 5.0f * a) * s + 8.0f * a) * s - 4.0f * a;
  w[1] = ((a + 2.0f) * r - (a + 3.0f)) * r * r + 1.0f;
  w[2] = ((a + 2.0f) * t - (a + 3.0f)) * t * t + 1.0f;
  w[3] = ((a * u - 5.0f * a) * u + 8.0f * a) * u - 4.0f * a;
}

/// How one dimension is resized: `taps` input positions and weights per
/// output position.
struct AxisPlan {
  int taps = 1;
  std::vector<int64_t> index;
  std::vector<float> weight;
};

AxisPlan planAxis(const ResizeAttributes &attrs, float scale, int64_t inLength,
                  int64_t outLength) {
  AxisPlan plan;
  plan.taps = attrs.mode == CLEAVE_RESIZE_NEAREST  ? 1
              : attrs.mode == CLEAVE_RESIZE_LINEAR ? 2
                                                   : 4;
  plan.index.resize(outLength * plan.taps);
  plan.weight.resize(outLength * plan.taps);
  auto clamp = [&](int64_t i) {
    return i < 0 ? 0 : i >= inLength ? inLength - 1 : i;
  };
  for (int64_t o = 0; o < outLength; ++o) {
    float x = sourceCoordinate(attrs.coordinates, static_cast<float>(o), scale,
                               inLength, outLength);
    int64_t *index = &plan.index[o * plan.taps];
    float *weight = &plan.weight[o * plan.taps];
    if (attrs.mode == CLEAVE_RESIZE_NEAREST) {
      index[0] = clamp(nearestIndex(attrs.nearestMode, x));
      weight[0] = 1.0f;
      continue;
    }
    if (attrs.mode == CLEAVE_RESIZE_LINEAR) {
      // Clamping the coordinate repeats the edge outside the input.
      x = x < 0.0f ? 0.0f : x;
      x = x > static_cast<float>(inLength - 1)
              ? static_cast<float>(inLength - 1)
              : x;
      int64_t i0 = static_cast<int64_t>(x);
      index[0] = i0;
      index[1] = clamp(i0 + 1);
      weight[1] = x - static_cast<float>(i0);
      weight[0] = 1.0f - weight[1];
      continue;
    }
    float below = std::floor(x);
    int64_t base = static_cast<int64_t>(below) - 1;
    cubicWeights(attrs.cubicA, x - below, weight);
    float sum = 0.0f;
    for (int t = 0; t < 4; ++t) {
      int64_t i = base + t;
      if (attrs.excludeOutside && (i < 0 || i >= inLength))
        weight[t] = 0.0f;
      sum += weight[t];
      index[t] = clamp(i);
    }
    if (attrs.excludeOutside && sum != 0.0f)
      for (int t = 0; t < 4; ++t)
        weight[t] /= sum;
  }
  return plan;
}

/// Resizes the middle dimension of an outer x inLength x inner tensor.
void resizeAxis(const AxisPlan &plan, const float *src, float *dst,
                int64_t outer, int64_t inLength, int64_t outLength,
                int64_t inner, int threads) {
  const int taps = plan.taps;
  parallelFor(threads, outer * outLength * inner * taps > kParallelGrain,
              outer * outLength, [&](int64_t task) {
                const int64_t o = task / outLength, j = task % outLength;
                const float *base = src + o * inLength * inner;
                float *line = dst + task * inner;
                const int64_t *index = &plan.index[j * taps];
                const float *weight = &plan.weight[j * taps];
                if (inner == 1) {
                  float sum = 0.0f;
                  for (int t = 0; t < taps; ++t)
                    sum += weight[t] * base[index[t]];
                  line[0] = sum;
                  return;
                }
                const float *first = base + index[0] * inner;
                for (int64_t i = 0; i < inner; ++i)
                  line[i] = weight[0] * first[i];
                for (int t = 1; t < taps; ++t) {
                  const float *row = base + index[t] * inner;
                  const float w = weight[t];
                  for (int64_t i = 0; i < inner; ++i)
                    line[i] += w * row[i];
                }
              });
}

} // namespace

int32_t cleave::cpu::kernels::resize(CleaveContext *ctx,
                                     const args::Resize &args) {
  const char *kernel = "resize";
  const CleaveTensor &x = args.x();
  CleaveTensor &y = args.y();
  const args::FloatList scales = args.scales();
  if (checkF32(ctx, kernel, x, "X") || checkF32(ctx, kernel, y, "Y"))
    return 1;
  const int32_t rank = x.rank;
  if (y.rank != rank)
    return fail(ctx, kernel, "X and Y must have the same rank");
  ResizeAttributes attrs;
  attrs.mode = args.mode();
  attrs.coordinates = args.coordinates();
  attrs.nearestMode = args.nearest();
  attrs.excludeOutside = args.excludeOutside() != 0;
  attrs.cubicA = static_cast<float>(args.cubicCoeffA());
  if (attrs.mode < CLEAVE_RESIZE_NEAREST || attrs.mode > CLEAVE_RESIZE_CUBIC)
    return fail(ctx, kernel, "unknown mode %lld", (long long)attrs.mode);
  if (attrs.coordinates < CLEAVE_RESIZE_HALF_PIXEL ||
      attrs.coordinates > CLEAVE_RESIZE_HALF_PIXEL_SYMMETRIC)
    return fail(ctx, kernel, "unknown coordinate_transformation_mode %lld",
                (long long)attrs.coordinates);
  if (attrs.nearestMode < CLEAVE_NEAREST_ROUND_PREFER_FLOOR ||
      attrs.nearestMode > CLEAVE_NEAREST_CEIL)
    return fail(ctx, kernel, "unknown nearest_mode %lld",
                (long long)attrs.nearestMode);

  // The dimensions to resize, and the largest intermediate tensor.
  std::vector<int32_t> axes;
  for (int32_t d = 0; d < rank; ++d) {
    if (scales[d] <= 0.0)
      return fail(ctx, kernel, "scale %d is not positive", d);
    if (x.shape[d] == 0 && y.shape[d] != 0)
      return fail(ctx, kernel, "dimension %d is empty in X but not in Y", d);
    if (x.shape[d] != y.shape[d] || scales[d] != 1.0)
      axes.push_back(d);
  }
  const float *src = static_cast<const float *>(x.data);
  float *dst = static_cast<float *>(y.data);
  if (numElements(y) == 0)
    return 0;
  if (axes.empty()) {
    std::memcpy(dst, src, sizeof(float) * numElements(x));
    return 0;
  }
  int64_t shape[CLEAVE_MAX_RANK];
  std::memcpy(shape, x.shape, sizeof(shape));
  int64_t largest = 0;
  for (size_t a = 0; a + 1 < axes.size(); ++a) {
    shape[axes[a]] = y.shape[axes[a]];
    largest = std::max(largest, product(shape, 0, rank));
  }
  float *buffers[2] = {nullptr, nullptr};
  if (largest > 0) {
    float *scratch = static_cast<float *>(
        cleave_rt_scratch(ctx, sizeof(float) * 2 * largest));
    if (!scratch)
      return 1;
    buffers[0] = scratch;
    buffers[1] = scratch + largest;
  }
  std::memcpy(shape, x.shape, sizeof(shape));
  const int threads = numThreads(ctx);
  const float *current = src;
  for (size_t a = 0; a < axes.size(); ++a) {
    const int32_t d = axes[a];
    const int64_t inLength = shape[d], outLength = y.shape[d];
    AxisPlan plan =
        planAxis(attrs, static_cast<float>(scales[d]), inLength, outLength);
    float *target = a + 1 == axes.size() ? dst : buffers[a % 2];
    resizeAxis(plan, current, target, product(shape, 0, d), inLength, outLength,
               product(shape, d + 1, rank), threads);
    shape[d] = outLength;
    current = target;
  }
  return 0;
}
