//===- Resize.cu - nearest, linear and cubic resize -----------------------===//
//
// ONNX Resize, N-dimensional: each output coordinate maps back to an input
// coordinate per dimension (the coordinate transformation mode), which
// gives up to four (index, weight) taps per dimension; the output is the
// weighted sum over the product of the taps. Taps of weight zero are
// dropped, so dimensions that are not resized cost nothing. Coordinates are
// computed in fp32, as onnxruntime does.
//
//===----------------------------------------------------------------------===//

#include "CudaCommon.h"

using namespace cleave::cuda;

namespace {

struct ResizeParams {
  int rank = 0;
  int64_t in[CLEAVE_MAX_RANK] = {}, out[CLEAVE_MAX_RANK] = {};
  float scale[CLEAVE_MAX_RANK] = {};
  int mode = 0, transform = 0, nearestMode = 0;
  bool excludeOutside = false;
  float cubicA = -0.75f;
};

__device__ __forceinline__ float inputCoordinate(const ResizeParams &p, int d,
                                                 int64_t o) {
  float s = p.scale[d];
  float li = static_cast<float>(p.in[d]), lo = static_cast<float>(p.out[d]);
  float x = static_cast<float>(o);
  switch (p.transform) {
  case CLEAVE_RESIZE_ASYMMETRIC:
    return x / s;
  case CLEAVE_RESIZE_ALIGN_CORNERS:
    return p.out[d] == 1 ? 0.f : x * (li - 1.f) / (lo - 1.f);
  case CLEAVE_RESIZE_PYTORCH_HALF_PIXEL:
    return p.out[d] > 1 ? (x + 0.5f) / s - 0.5f : 0.f;
  case CLEAVE_RESIZE_HALF_PIXEL_SYMMETRIC: {
    float adjustment = lo / (s * li);
    float offset = li / 2.f * (1.f - adjustment);
    return offset + (x + 0.5f) / s - 0.5f;
  }
  default: // half_pixel
    return (x + 0.5f) / s - 0.5f;
  }
}

__device__ __forceinline__ int64_t nearestIndex(const ResizeParams &p, float x,
                                                int64_t size) {
  float f = floorf(x);
  float r;
  switch (p.nearestMode) {
  case CLEAVE_NEAREST_ROUND_PREFER_CEIL:
    r = (x == f + 0.5f) ? ceilf(x) : roundf(x);
    break;
  case CLEAVE_NEAREST_FLOOR:
    r = f;
    break;
  case CLEAVE_NEAREST_CEIL:
    r = ceilf(x);
    break;
  default: // round_prefer_floor
    r = (x == f + 0.5f) ? f : roundf(x);
    break;
  }
  int64_t i = static_cast<int64_t>(r);
  return i < 0 ? 0 : (i >= size ? size - 1 : i);
}

__device__ __forceinline__ int64_t clampIndex(int64_t i, int64_t size) {
  return i < 0 ? 0 : (i >= size ? size - 1 : i);
}

/// The taps of dimension `d` for output coordinate `o`; returns their
/// number.
__device__ int taps(const ResizeParams &p, int d, int64_t o, int64_t *index,
                    float *weight) {
  int64_t size = p.in[d];
  float x = inputCoordinate(p, d, o);
  if (p.mode == CLEAVE_RESIZE_NEAREST) {
    index[0] = nearestIndex(p, x, size);
    weight[0] = 1.f;
    return 1;
  }
  float f = floorf(x);
  float r = x - f;
  int64_t i0 = static_cast<int64_t>(f);
  if (r == 0.f) {
    index[0] = clampIndex(i0, size);
    weight[0] = 1.f;
    return 1;
  }
  if (p.mode == CLEAVE_RESIZE_LINEAR) {
    index[0] = clampIndex(i0, size);
    index[1] = clampIndex(i0 + 1, size);
    weight[0] = 1.f - r;
    weight[1] = r;
    return 2;
  }
  float a = p.cubicA;
  float c[4];
  float t = r + 1.f;
  c[0] = ((a * t - 5.f * a) * t + 8.f * a) * t - 4.f * a;
  c[1] = ((a + 2.f) * r - (a + 3.f)) * r * r + 1.f;
  t = 1.f - r;
  c[2] = ((a + 2.f) * t - (a + 3.f)) * t * t + 1.f;
  t = 2.f - r;
  c[3] = ((a * t - 5.f * a) * t + 8.f * a) * t - 4.f * a;
  float total = 0.f;
  for (int k = 0; k < 4; ++k) {
    int64_t i = i0 - 1 + k;
    if (p.excludeOutside && (i < 0 || i >= size))
      c[k] = 0.f;
    index[k] = clampIndex(i, size);
    total += c[k];
  }
  for (int k = 0; k < 4; ++k)
    weight[k] = p.excludeOutside && total != 0.f ? c[k] / total : c[k];
  return 4;
}

template <typename T>
__global__ void resizeKernel(const T *x, T *y, int64_t n, ResizeParams p) {
  CLEAVE_GRID_LOOP(i, n) {
    int64_t index[CLEAVE_MAX_RANK][4];
    float weight[CLEAVE_MAX_RANK][4];
    int count[CLEAVE_MAX_RANK], at[CLEAVE_MAX_RANK];
    int64_t stride[CLEAVE_MAX_RANK];
    int64_t rest = i, s = 1;
    for (int d = p.rank - 1; d >= 0; --d) {
      count[d] = taps(p, d, rest % p.out[d], index[d], weight[d]);
      rest /= p.out[d];
      at[d] = 0;
      stride[d] = s;
      s *= p.in[d];
    }
    float sum = 0.f;
    while (true) {
      int64_t src = 0;
      float w = 1.f;
      for (int d = 0; d < p.rank; ++d) {
        src += index[d][at[d]] * stride[d];
        w *= weight[d][at[d]];
      }
      sum += w * toFloat(x[src]);
      int d = p.rank - 1;
      while (d >= 0 && ++at[d] == count[d])
        at[d--] = 0;
      if (d < 0)
        break;
    }
    y[i] = fromFloat<T>(sum);
  }
}

} // namespace

int32_t cleave::cuda::kernels::resize(CleaveContext *ctx,
                                      const args::Resize &args) {
  const CleaveTensor &x = args.x(), &y = args.y();
  if (x.rank != y.rank || x.dtype != y.dtype || x.rank < 1)
    return fail(ctx, "resize", "input and output differ in rank or type");
  ResizeParams p;
  p.rank = x.rank;
  p.mode = static_cast<int>(args.mode());
  p.transform = static_cast<int>(args.coordinates());
  p.nearestMode = static_cast<int>(args.nearest());
  p.excludeOutside = args.excludeOutside() != 0;
  if (p.mode < 0 || p.mode > 2)
    return fail(ctx, "resize", "unknown mode %d", p.mode);
  if (p.transform < 0 || p.transform > 4)
    return fail(ctx, "resize", "unknown coordinate transformation mode %d",
                p.transform);
  if (p.nearestMode < 0 || p.nearestMode > 3)
    return fail(ctx, "resize", "unknown nearest mode %d", p.nearestMode);
  for (int d = 0; d < x.rank; ++d) {
    p.in[d] = x.shape[d];
    p.out[d] = y.shape[d];
    p.scale[d] = static_cast<float>(args.scales()[d]);
    if (!(p.scale[d] > 0.f))
      return fail(ctx, "resize", "scale %d is not positive", d);
  }
  p.cubicA = static_cast<float>(args.cubicCoeffA());
  int64_t n = numElements(y);
  if (n == 0)
    return 0;
  if (numElements(x) == 0)
    return fail(ctx, "resize", "cannot resize an empty tensor");
  cudaStream_t stream = streamOf(ctx);
  int32_t status = dispatchFloat(x.dtype, [&](auto t) {
    using T = decltype(t);
    resizeKernel<T><<<blocksFor(n), kThreads, 0, stream>>>(
        static_cast<const T *>(x.data), static_cast<T *>(y.data), n, p);
    return 0;
  });
  if (status)
    return fail(ctx, "resize", "unsupported element type %d", x.dtype);
  return checkLaunch(ctx, "resize");
}
