//===- Pool.cpp - max, average and global pooling -------------------------===//
//
// Windowed pools visit each output position's window once, skipping taps in
// the padding: a max ignores them, an average counts them only with
// count_include_pad (and then only those inside the declared pads, which
// ceil_mode's last window may overrun).
//
//===----------------------------------------------------------------------===//

#include "ConvGeometry.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

using namespace cleave::cpu;

namespace {

enum class PoolKind { Max, Average };

/// The window of max_pool or average_pool.
template <typename Args>
int32_t readPool(CleaveContext *ctx, const char *kernel, const Args &args,
                 WindowGeometry &g) {
  const CleaveTensor &x = args.x(), &y = args.y();
  if (checkF32(ctx, kernel, x, "X") || checkF32(ctx, kernel, y, "Y"))
    return 1;
  int64_t n = args.n();
  if (n < 1 || n > kMaxSpatial)
    return fail(ctx, kernel, "%lld spatial dimensions; 1 to 3 are supported",
                (long long)n);
  if (x.rank != n + 2 || y.rank != n + 2 || x.shape[0] != y.shape[0] ||
      x.shape[1] != y.shape[1])
    return fail(ctx, kernel, "X and Y must be N x C x %lld spatial dimensions",
                (long long)n);
  const int64_t *kernelShape = args.kernelShape().data(),
                *strides = args.strides().data(), *pads = args.pads().data(),
                *dilations = args.dilations().data();
  bool ceilMode = args.ceilMode() != 0;
  g.batch = x.shape[0];
  g.channels = x.shape[1];
  readSpatial(x.shape + 2, n, 1, g.in);
  readSpatial(y.shape + 2, n, 1, g.out);
  readSpatial(kernelShape, n, 1, g.kernel);
  readSpatial(strides, n, 1, g.stride);
  readSpatial(pads, n, 0, g.padBegin);
  readSpatial(pads + n, n, 0, g.padEnd);
  readSpatial(dilations, n, 1, g.dilation);
  for (int i = 0; i < kMaxSpatial; ++i) {
    if (g.kernel[i] < 1 || g.stride[i] < 1 || g.dilation[i] < 1 ||
        g.padBegin[i] < 0 || g.padEnd[i] < 0)
      return fail(ctx, kernel,
                  "kernel, strides and dilations must be "
                  "positive and pads non-negative");
    int64_t span = (g.kernel[i] - 1) * g.dilation[i] + 1;
    int64_t room = g.in[i] + g.padBegin[i] + g.padEnd[i] - span;
    int64_t expected = (ceilMode ? (room + g.stride[i] - 1) / g.stride[i]
                                 : room / g.stride[i]) +
                       1;
    // A last window starting in the end padding is dropped.
    if (ceilMode && (expected - 1) * g.stride[i] >= g.in[i] + g.padBegin[i])
      --expected;
    if (g.out[i] != expected)
      return fail(ctx, kernel,
                  "spatial dimension %d of Y is %lld, expected "
                  "%lld",
                  i - (kMaxSpatial - (int)n), (long long)g.out[i],
                  (long long)expected);
  }
  return 0;
}

/// The taps of one window along one dimension: its first input position,
/// the first in-range tap, the end, and (for count_include_pad) how many
/// taps fall inside the pads.
struct WindowTaps {
  int64_t start, first, last, counted;
};

WindowTaps windowTaps(const WindowGeometry &g, int dim, int64_t o) {
  int64_t start = o * g.stride[dim] - g.padBegin[dim];
  int64_t d = g.dilation[dim];
  WindowTaps taps{start, 0, 0, 0};
  // Taps k with 0 <= start + k * d < in.
  taps.first = start >= 0 ? 0 : (-start + d - 1) / d;
  taps.last = std::min(g.kernel[dim], start < g.in[dim]
                                          ? (g.in[dim] - start + d - 1) / d
                                          : int64_t(0));
  if (taps.last < taps.first)
    taps.last = taps.first;
  int64_t padEnd = g.in[dim] + g.padEnd[dim] - start;
  taps.counted =
      std::min(g.kernel[dim], padEnd > 0 ? (padEnd + d - 1) / d : int64_t(0));
  return taps;
}

/// The max of m and v where a NaN wins and then stays, as in onnxruntime.
inline float maxKeepingNaN(float m, float v) { return v > m || v != v ? v : m; }

/// Pools one plane, one output row at a time in two passes: the input rows
/// of the window's (depth, row) taps are first reduced into one row (`rows`,
/// the input's width: contiguous loads the compiler vectorises), then each
/// output combines its horizontal taps of that row. A k x k window costs k
/// contiguous and k strided loads per output instead of k * k strided ones.
template <PoolKind kind>
void poolPlane(const WindowGeometry &g, const std::vector<WindowTaps> *taps,
               const int64_t *tapLo, const int64_t *tapHi,
               const float *divisors, const float *src, float *dst,
               float *rows) {
  const int64_t sw = g.stride[2], dilW = g.dilation[2];
  const int64_t inW = g.in[2], outW = g.out[2];
  const float init =
      kind == PoolKind::Max ? -std::numeric_limits<float>::infinity() : 0;
  for (int64_t od = 0; od < g.out[0]; ++od) {
    const WindowTaps &td = taps[0][od];
    for (int64_t oh = 0; oh < g.out[1]; ++oh) {
      const WindowTaps &th = taps[1][oh];
      for (int64_t iw = 0; iw < inW; ++iw)
        rows[iw] = init;
      for (int64_t kd = td.first; kd < td.last; ++kd) {
        const float *plane =
            src + (td.start + kd * g.dilation[0]) * g.in[1] * inW;
        for (int64_t kh = th.first; kh < th.last; ++kh) {
          const float *row = plane + (th.start + kh * g.dilation[1]) * inW;
          for (int64_t iw = 0; iw < inW; ++iw)
            rows[iw] = kind == PoolKind::Max ? maxKeepingNaN(rows[iw], row[iw])
                                             : rows[iw] + row[iw];
        }
      }
      float *line = dst + (od * g.out[1] + oh) * outW;
      for (int64_t ow = 0; ow < outW; ++ow)
        line[ow] = init;
      for (int64_t kw = 0; kw < g.kernel[2]; ++kw) {
        const float *tap = rows + kw * dilW - g.padBegin[2];
        for (int64_t ow = tapLo[kw]; ow < tapHi[kw]; ++ow)
          line[ow] = kind == PoolKind::Max
                         ? maxKeepingNaN(line[ow], tap[ow * sw])
                         : line[ow] + tap[ow * sw];
      }
      if (kind == PoolKind::Average) {
        const float divisor = divisors[od * g.out[1] + oh];
        for (int64_t ow = 0; ow < outW; ++ow)
          line[ow] =
              divisors[g.out[0] * g.out[1] + ow] * divisor > 0
                  ? line[ow] / (divisors[g.out[0] * g.out[1] + ow] * divisor)
                  : 0.0f;
      }
    }
  }
}

void pool(const WindowGeometry &g, PoolKind kind, bool countIncludePad,
          const float *x, float *y, int threads) {
  // What depends only on the output position is computed once, not per
  // plane: the taps of each window per dimension, the output range each
  // horizontal tap reaches, and the divisors of an average.
  std::vector<WindowTaps> taps[kMaxSpatial];
  for (int d = 0; d < kMaxSpatial; ++d)
    for (int64_t o = 0; o < g.out[d]; ++o)
      taps[d].push_back(windowTaps(g, d, o));
  std::vector<int64_t> tapLo(g.kernel[2]), tapHi(g.kernel[2]);
  for (int64_t kw = 0; kw < g.kernel[2]; ++kw)
    validRange(kw * g.dilation[2] - g.padBegin[2], g.stride[2], g.in[2],
               g.out[2], tapLo[kw], tapHi[kw]);
  // Divisors: one per (depth, row) output, then one factor per column.
  auto counted = [&](const WindowTaps &t) {
    return countIncludePad ? t.counted : t.last - t.first;
  };
  std::vector<float> divisors;
  for (int64_t od = 0; od < g.out[0]; ++od)
    for (int64_t oh = 0; oh < g.out[1]; ++oh)
      divisors.push_back(
          static_cast<float>(counted(taps[0][od]) * counted(taps[1][oh])));
  for (int64_t ow = 0; ow < g.out[2]; ++ow)
    divisors.push_back(static_cast<float>(counted(taps[2][ow])));

  const int64_t planes = g.batch * g.channels;
  parallelFor(
      threads, planes * g.outSize() * g.kernelSize() > kParallelGrain, planes,
      [&](int64_t p) {
        // One row of the input's width per thread, kept between
        // calls.
        thread_local std::vector<float> rows;
        if (rows.size() < static_cast<size_t>(g.in[2]))
          rows.resize(g.in[2]);
        const float *src = x + p * g.inSize();
        float *dst = y + p * g.outSize();
        if (kind == PoolKind::Max)
          poolPlane<PoolKind::Max>(g, taps, tapLo.data(), tapHi.data(),
                                   divisors.data(), src, dst, rows.data());
        else
          poolPlane<PoolKind::Average>(g, taps, tapLo.data(), tapHi.data(),
                                       divisors.data(), src, dst, rows.data());
      });
}

/// Folds values into kLanes partial results, which the compiler keeps in
/// vector registers (one float chain would be a dependent add per element).
/// A NaN, once met, stays in a max: a number is never above it.
template <PoolKind kind> struct PlaneFold {
  static constexpr int64_t kLanes = 16;
  static float identity() {
    return kind == PoolKind::Max ? -std::numeric_limits<float>::infinity()
                                 : 0.0f;
  }
  static float fold(float acc, float v) {
    if constexpr (kind == PoolKind::Max)
      return v > acc || v != v ? v : acc;
    else
      return acc + v;
  }
  static float finish(float acc, int64_t size) {
    if constexpr (kind == PoolKind::Max)
      return acc;
    else
      return size > 0 ? acc / static_cast<float>(size) : 0.0f;
  }
};

/// Pools NCHW planes of `size` elements: each plane in kLanes lanes, then
/// the lanes and the tail into one.
template <PoolKind kind>
void poolPlanes(const float *src, float *dst, int64_t planes, int64_t size,
                int threads) {
  using F = PlaneFold<kind>;
  constexpr int64_t kLanes = F::kLanes;
  parallelFor(threads, planes * size > kParallelGrain, planes, [&](int64_t p) {
    const float *plane = src + p * size;
    const int64_t whole = size / kLanes * kLanes;
    float lanes[kLanes];
    std::fill(lanes, lanes + kLanes, F::identity());
    for (int64_t i = 0; i < whole; i += kLanes)
      for (int64_t j = 0; j < kLanes; ++j)
        lanes[j] = F::fold(lanes[j], plane[i + j]);
    float acc = F::identity();
    for (float lane : lanes)
      acc = F::fold(acc, lane);
    for (int64_t i = whole; i < size; ++i)
      acc = F::fold(acc, plane[i]);
    dst[p] = F::finish(acc, size);
  });
}

/// Pools nChw<block>c planes: the `block` channels of a group lie side by
/// side at each position, so each channel is one lane, and a group's
/// results are `block` consecutive outputs (N x C in either layout).
template <PoolKind kind, int64_t block>
void poolBlockedPlanes(const float *src, float *dst, int64_t groups,
                       int64_t size, int threads) {
  using F = PlaneFold<kind>;
  parallelFor(threads, groups * size * block > kParallelGrain, groups,
              [&](int64_t g) {
                const float *group = src + g * size * block;
                float lanes[block];
                std::fill(lanes, lanes + block, F::identity());
                for (int64_t i = 0; i < size; ++i)
                  for (int64_t j = 0; j < block; ++j)
                    lanes[j] = F::fold(lanes[j], group[i * block + j]);
                for (int64_t j = 0; j < block; ++j)
                  dst[g * block + j] = F::finish(lanes[j], size);
              });
}

template <PoolKind kind>
int32_t globalPool(CleaveContext *ctx, const char *kernel,
                   const args::GlobalPool &args) {
  const CleaveTensor &x = args.x(), &y = args.y();
  if (checkF32(ctx, kernel, x, "X") || checkF32(ctx, kernel, y, "Y"))
    return 1;
  if (x.rank < 2)
    return fail(ctx, kernel, "X must be at least 2-D");
  const int64_t planes = x.shape[0] * x.shape[1];
  const int64_t size = product(x.shape, 2, x.rank);
  if (numElements(y) != planes)
    return fail(ctx, kernel, "Y must have N x C elements");
  const int64_t block = args.xBlock();
  if (block != 0 && block != 8 && block != 16)
    return fail(ctx, kernel, "xBlock %lld: the layouts are 0 (NCHW), 8 and 16",
                static_cast<long long>(block));
  if (block != 0 && (x.rank != 4 || x.shape[1] % block != 0))
    return fail(ctx, kernel,
                "xBlock %lld needs X of rank 4 whose channels it divides",
                static_cast<long long>(block));
  const float *src = static_cast<const float *>(x.data);
  float *dst = static_cast<float *>(y.data);
  const int threads = numThreads(ctx);
  if (block == 16)
    poolBlockedPlanes<kind, 16>(src, dst, planes / 16, size, threads);
  else if (block == 8)
    poolBlockedPlanes<kind, 8>(src, dst, planes / 8, size, threads);
  else
    poolPlanes<kind>(src, dst, planes, size, threads);
  return 0;
}

} // namespace

int32_t cleave::cpu::kernels::max_pool(CleaveContext *ctx,
                                       const args::MaxPool &args) {
  WindowGeometry g;
  if (int32_t status = readPool(ctx, "max_pool", args, g))
    return status;
  pool(g, PoolKind::Max, false, static_cast<const float *>(args.x().data),
       static_cast<float *>(args.y().data), numThreads(ctx));
  return 0;
}

int32_t cleave::cpu::kernels::average_pool(CleaveContext *ctx,
                                           const args::AveragePool &args) {
  WindowGeometry g;
  if (int32_t status = readPool(ctx, "average_pool", args, g))
    return status;
  pool(g, PoolKind::Average, args.countIncludePad() != 0,
       static_cast<const float *>(args.x().data),
       static_cast<float *>(args.y().data), numThreads(ctx));
  return 0;
}

int32_t
cleave::cpu::kernels::global_average_pool(CleaveContext *ctx,
                                          const args::GlobalPool &args) {
  return globalPool<PoolKind::Average>(ctx, "global_average_pool", args);
}

int32_t cleave::cpu::kernels::global_max_pool(CleaveContext *ctx,
                                              const args::GlobalPool &args) {
  return globalPool<PoolKind::Max>(ctx, "global_max_pool", args);
}
