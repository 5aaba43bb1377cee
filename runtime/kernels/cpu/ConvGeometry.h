//===- ConvGeometry.h - windows over spatial dimensions -----------*- C++
//-*-===//
//
// Convolutions and pools read their attributes into one geometry with three
// spatial dimensions: 1-D and 2-D windows get leading dimensions of size 1,
// so every loop nest is written once.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_KERNELS_CPU_CONVGEOMETRY_H
#define CLEAVE_KERNELS_CPU_CONVGEOMETRY_H

#include "KernelSupport.h"
#include "cleave/rt/VectorMath.h"

#include <algorithm>

namespace cleave::cpu {

constexpr int kMaxSpatial = 3;

struct WindowGeometry {
  int64_t batch = 1, channels = 1;
  int64_t in[kMaxSpatial], out[kMaxSpatial], kernel[kMaxSpatial];
  int64_t stride[kMaxSpatial], padBegin[kMaxSpatial], padEnd[kMaxSpatial];
  int64_t dilation[kMaxSpatial];

  int64_t inSize() const { return in[0] * in[1] * in[2]; }
  int64_t outSize() const { return out[0] * out[1] * out[2]; }
  int64_t kernelSize() const { return kernel[0] * kernel[1] * kernel[2]; }
};

/// A convolution (or transposed one): its window, `spatial` of whose
/// dimensions (the last) are the tensors' own, and its channel groups.
struct ConvShape {
  WindowGeometry window;
  int spatial = 1;
  int64_t group = 1;
  int64_t outChannels = 1;

  /// Multiply-adds of the forward convolution.
  int64_t multiplyAdds() const {
    return window.batch * outChannels * window.outSize() *
           (window.channels / group) * window.kernelSize();
  }
};

/// The layouts of a convolution's X and Y: 0 for the program's NCHW, or
/// the channels per block of nChw8c / nChw16c (conv's xBlock and yBlock).
struct ConvLayouts {
  int64_t x = 0, y = 0;

  bool plain() const { return x == 0 && y == 0; }
};

/// What a convolution applies to its outputs after the bias
/// (CleaveEpilogue): nothing, ReLU, or a clamp to [min, max]; before that,
/// with a `residual` (Y's shape and layout, possibly Y itself), it adds it.
struct ConvEpilogue {
  int64_t kind = CLEAVE_EPILOGUE_NONE;
  float min = 0, max = 0;
  const float *residual = nullptr;

  /// y[i] = epilogue(y[i] + bias) over y[0..n), as a program's own loops
  /// compute it (rt/Scalar.h's relu, min(max(y, min), max) with a NaN
  /// kept, and y * sigmoid(y) in the vector forms of VectorMath.h);
  /// without a bias where !WithBias (no + 0, which would turn -0 into +0).
  template <bool WithBias>
  void applyRun(float *y, int64_t n, float bias) const {
    if (kind == CLEAVE_EPILOGUE_RELU) {
      for (int64_t i = 0; i < n; ++i) {
        const float v = WithBias ? y[i] + bias : y[i];
        y[i] = v > 0.0f ? v : 0.0f;
      }
    } else if (kind == CLEAVE_EPILOGUE_CLIP) {
      const float lo = min, hi = max;
      for (int64_t i = 0; i < n; ++i) {
        float v = WithBias ? y[i] + bias : y[i];
        v = v != v ? v : (lo > v ? lo : v);
        y[i] = v != v ? v : (hi < v ? hi : v);
      }
    } else if (kind == CLEAVE_EPILOGUE_SILU) {
      for (int64_t i = 0; i < n; ++i) {
        const float v = WithBias ? y[i] + bias : y[i];
        y[i] = v * (1.0f / (1.0f + expf(-v)));
      }
    } else if (WithBias) {
      for (int64_t i = 0; i < n; ++i)
        y[i] += bias;
    }
  }

  /// Applies it to y[0..n), on up to `threads` threads where y is large:
  /// y[i] = epilogue(y[i] + residual[i]) with a residual (which the caller
  /// passes here, any layout: y and it share one), else epilogue(y[i]).
  void apply(float *y, int64_t n, int threads,
             const float *added = nullptr) const {
    if (kind == CLEAVE_EPILOGUE_NONE && !added)
      return;
    constexpr int64_t kRun = 16384;
    parallelFor(threads, n >= 131072, (n + kRun - 1) / kRun, [&](int64_t r) {
      float *run = y + r * kRun;
      const int64_t length = std::min(kRun, n - r * kRun);
      if (added)
        for (int64_t i = 0; i < length; ++i)
          run[i] += added[r * kRun + i];
      applyRun<false>(run, length, 0.0f);
    });
  }
};

/// Reads `n` spatial values of `values` into `target`, right-aligned in
/// kMaxSpatial slots; the leading slots get `fill`.
inline void readSpatial(const int64_t *values, int64_t n, int64_t fill,
                        int64_t *target) {
  for (int i = 0; i < kMaxSpatial; ++i) {
    int64_t own = i - (kMaxSpatial - n);
    target[i] = own >= 0 ? values[own] : fill;
  }
}

/// The range [lo, hi) of output positions `o` in [0, outSize) for which
/// `o * stride + offset` lies in [0, inSize).
inline void validRange(int64_t offset, int64_t stride, int64_t inSize,
                       int64_t outSize, int64_t &lo, int64_t &hi) {
  lo = offset >= 0 ? 0 : (-offset + stride - 1) / stride;
  int64_t limit = inSize - offset;
  hi = limit > 0 ? (limit + stride - 1) / stride : 0;
  if (hi > outSize)
    hi = outSize;
  if (lo > hi)
    lo = hi;
}

} // namespace cleave::cpu

#endif // CLEAVE_KERNELS_CPU_CONVGEOMETRY_H
