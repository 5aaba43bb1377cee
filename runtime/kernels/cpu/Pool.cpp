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
#include <cstring>
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
  const int64_t block = args.block();
  if (block != 0 && block != 8 && block != 16)
    return fail(ctx, kernel, "block %lld: the layouts are 0 (NCHW), 8 and 16",
                (long long)block);
  if (block != 0 && (n != 2 || g.channels % block != 0))
    return fail(ctx, kernel,
                "block %lld needs 2 spatial dimensions and channels it "
                "divides",
                (long long)block);
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

/// The taps of `t` an average divides by: those inside the input, or with
/// count_include_pad those inside the declared pads too.
inline int64_t countedTaps(const WindowTaps &t, bool countIncludePad) {
  return countIncludePad ? t.counted : t.last - t.first;
}

/// The max of m and v where a NaN wins and then stays, as in onnxruntime.
inline float maxKeepingNaN(float m, float v) { return v > m || v != v ? v : m; }

/// A pool's fold of one value at a time: its starting value, the fold, and
/// the result of `size` folded values. A NaN, once met, stays in a max: a
/// number is never above it. kLanes is how many partial results a plane is
/// folded into (BlockFold), one float chain being a dependent add per
/// element.
template <PoolKind kind> struct PlaneFold {
  static constexpr int64_t kLanes = 16;
  static float identity() {
    return kind == PoolKind::Max ? -std::numeric_limits<float>::infinity()
                                 : 0.0f;
  }
  static float fold(float acc, float v) {
    if constexpr (kind == PoolKind::Max)
      return maxKeepingNaN(acc, v);
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

/// The floats of the widest vector the kernels are built for (per
/// instruction-set variant).
#if defined(__AVX512F__)
constexpr int kVectorLanes = 16;
#elif defined(__AVX__)
constexpr int kVectorLanes = 8;
#else
constexpr int kVectorLanes = 4;
#endif

/// A vector of W floats (GCC's vector extension, which a dependent
/// vector_size does not reach in a template).
template <int W> struct FloatVector;
template <> struct FloatVector<4> {
  typedef float type __attribute__((vector_size(16)));
};
template <> struct FloatVector<8> {
  typedef float type __attribute__((vector_size(32)));
};
template <> struct FloatVector<16> {
  typedef float type __attribute__((vector_size(64)));
};

/// B partial results of PlaneFold in vector registers, folded B values at
/// a time. Written with vector types: over an array of B floats the
/// compiler unrolled a max into B compares and branches, which random data
/// mispredicts (a blocked 3x3 pool ran 200 times slower).
template <PoolKind kind, int B> struct BlockFold {
  static constexpr int kWidth = B < kVectorLanes ? B : kVectorLanes;
  using Vector = typename FloatVector<kWidth>::type;
  Vector acc[B / kWidth];

  BlockFold() {
    for (Vector &a : acc)
      for (int j = 0; j < kWidth; ++j)
        a[j] = PlaneFold<kind>::identity();
  }
  void fold(const float *values) {
    for (int c = 0; c < B / kWidth; ++c) {
      Vector v;
      std::memcpy(&v, values + c * kWidth, sizeof v);
      if constexpr (kind == PoolKind::Max)
        acc[c] = (v > acc[c]) | (v != v) ? v : acc[c];
      else
        acc[c] += v;
    }
  }
  /// Stores the B results, an average's divided by `count` (0 for none).
  void store(float *out, float count) const {
    for (int c = 0; c < B / kWidth; ++c) {
      Vector v = acc[c];
      if constexpr (kind == PoolKind::Average)
        v = count > 0 ? v / count : Vector{};
      std::memcpy(out + c * kWidth, &v, sizeof v);
    }
  }
};

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

/// Pools 2-D planes in nChw<B>c: each output position folds its window's
/// taps B channels at a time, one vector per tap (the NCHW rows above are
/// short on a CNN's small maps; here every load is a whole block).
template <PoolKind kind, int B>
void poolBlocked(const WindowGeometry &g, const std::vector<WindowTaps> *taps,
                 bool countIncludePad, const float *x, float *y, int threads) {
  const int64_t groups = g.batch * g.channels / B;
  const int64_t inH = g.in[1], inW = g.in[2], outH = g.out[1], outW = g.out[2];
  const int64_t dilH = g.dilation[1], dilW = g.dilation[2];
  parallelFor(threads,
              groups * outH * outW * g.kernelSize() * B > kParallelGrain,
              groups * outH, [&](int64_t job) {
                const int64_t group = job / outH, oh = job % outH;
                const float *src = x + group * inH * inW * B;
                float *line = y + (group * outH + oh) * outW * B;
                const WindowTaps &th = taps[1][oh];
                for (int64_t ow = 0; ow < outW; ++ow) {
                  const WindowTaps &tw = taps[2][ow];
                  BlockFold<kind, B> acc;
                  for (int64_t kh = th.first; kh < th.last; ++kh) {
                    const float *row = src + (th.start + kh * dilH) * inW * B;
                    for (int64_t kw = tw.first; kw < tw.last; ++kw)
                      acc.fold(row + (tw.start + kw * dilW) * B);
                  }
                  acc.store(
                      line + ow * B,
                      static_cast<float>(countedTaps(th, countIncludePad) *
                                         countedTaps(tw, countIncludePad)));
                }
              });
}

void pool(const WindowGeometry &g, PoolKind kind, bool countIncludePad,
          int64_t block, const float *x, float *y, int threads) {
  // What depends only on the output position is computed once, not per
  // plane: the taps of each window per dimension, the output range each
  // horizontal tap reaches, and the divisors of an average.
  std::vector<WindowTaps> taps[kMaxSpatial];
  for (int d = 0; d < kMaxSpatial; ++d)
    for (int64_t o = 0; o < g.out[d]; ++o)
      taps[d].push_back(windowTaps(g, d, o));
  if (block == 16 || block == 8) {
    auto run = [&](auto fn) { fn(g, taps, countIncludePad, x, y, threads); };
    if (kind == PoolKind::Max)
      block == 16 ? run(poolBlocked<PoolKind::Max, 16>)
                  : run(poolBlocked<PoolKind::Max, 8>);
    else
      block == 16 ? run(poolBlocked<PoolKind::Average, 16>)
                  : run(poolBlocked<PoolKind::Average, 8>);
    return;
  }
  std::vector<int64_t> tapLo(g.kernel[2]), tapHi(g.kernel[2]);
  for (int64_t kw = 0; kw < g.kernel[2]; ++kw)
    validRange(kw * g.dilation[2] - g.padBegin[2], g.stride[2], g.in[2],
               g.out[2], tapLo[kw], tapHi[kw]);
  // Divisors: one per (depth, row) output, then one factor per column.
  std::vector<float> divisors;
  for (int64_t od = 0; od < g.out[0]; ++od)
    for (int64_t oh = 0; oh < g.out[1]; ++oh)
      divisors.push_back(
          static_cast<float>(countedTaps(taps[0][od], countIncludePad) *
                             countedTaps(taps[1][oh], countIncludePad)));
  for (int64_t ow = 0; ow < g.out[2]; ++ow)
    divisors.push_back(
        static_cast<float>(countedTaps(taps[2][ow], countIncludePad)));

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

/// Pools NCHW planes of `size` elements: each plane in kLanes lanes, then
/// the lanes and the tail into one. Planes shorter than the lanes (a CNN's
/// last map, often 1x1) are folded element by element: the lanes' set-up
/// and combination cost more than such a plane's elements.
template <PoolKind kind>
void poolPlanes(const float *src, float *dst, int64_t planes, int64_t size,
                int threads) {
  using F = PlaneFold<kind>;
  constexpr int64_t kLanes = F::kLanes;
  if (size == 1) {
    // The mean or the max of one element is that element.
    std::copy(src, src + planes, dst);
    return;
  }
  if (size < kLanes) {
    for (int64_t p = 0; p < planes; ++p) {
      float acc = F::identity();
      for (int64_t i = 0; i < size; ++i)
        acc = F::fold(acc, src[p * size + i]);
      dst[p] = F::finish(acc, size);
    }
    return;
  }
  parallelFor(threads, planes * size > kParallelGrain, planes, [&](int64_t p) {
    const float *plane = src + p * size;
    const int64_t whole = size / kLanes * kLanes;
    BlockFold<kind, kLanes> folded;
    for (int64_t i = 0; i < whole; i += kLanes)
      folded.fold(plane + i);
    float lanes[kLanes];
    folded.store(lanes, 1.0f);
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
  parallelFor(threads, groups * size * block > kParallelGrain, groups,
              [&](int64_t g) {
                const float *group = src + g * size * block;
                BlockFold<kind, block> lanes;
                for (int64_t i = 0; i < size; ++i)
                  lanes.fold(group + i * block);
                lanes.store(dst + g * block, static_cast<float>(size));
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
  pool(g, PoolKind::Max, false, args.block(),
       static_cast<const float *>(args.x().data),
       static_cast<float *>(args.y().data), numThreads(ctx));
  return 0;
}

int32_t cleave::cpu::kernels::average_pool(CleaveContext *ctx,
                                           const args::AveragePool &args) {
  WindowGeometry g;
  if (int32_t status = readPool(ctx, "average_pool", args, g))
    return status;
  pool(g, PoolKind::Average, args.countIncludePad() != 0, args.block(),
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
