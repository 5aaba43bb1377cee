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

#include "Epilogue.h"
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
