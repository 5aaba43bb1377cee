//===- Conv.cpp - convolution and transposed convolution ------------------===//
//
// A convolution over constant weights runs on oneDNN (Dnnl.cpp), but
// for the shapes where a kernel here is faster, and one over writable
// weights on the kernels here (see conv() for why): a depthwise one (one input
// channel per group) on a large plane or on a map smaller than its window runs
// a direct loop, and a very small dense one an sgemm of the weights by the
// im2col matrix of the input (the constants below say why). A transposed
// convolution is the adjoint of the im2col one: an sgemm into the column
// matrix, then col2im scatters it into the output.
//
//===----------------------------------------------------------------------===//

#include "ConvGeometry.h"
#include "Dnnl.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <new>
#include <vector>

#include <omp.h>

using namespace cleave::cpu;

namespace {

/// The geometry of conv (`outputPadding` null) or conv_transpose.
template <typename Args>
int32_t readConv(CleaveContext *ctx, const char *kernel, const Args &args,
                 const int64_t *outputPadding, ConvShape &shape) {
  const CleaveTensor &x = args.x(), &w = args.w(), &y = args.y();
  const bool transposed = outputPadding != nullptr;
  int64_t n = args.n();
  if (n < 1 || n > kMaxSpatial)
    return fail(ctx, kernel, "%lld spatial dimensions; 1 to 3 are supported",
                (long long)n);
  if (x.rank != n + 2 || w.rank != n + 2 || y.rank != n + 2)
    return fail(ctx, kernel, "X, W and Y must have rank %lld",
                (long long)n + 2);
  const int64_t *strides = args.strides().data(), *pads = args.pads().data(),
                *dilations = args.dilations().data();
  WindowGeometry &g = shape.window;
  shape.spatial = static_cast<int>(n);
  shape.group = args.group();
  shape.outChannels = y.shape[1];
  g.batch = x.shape[0];
  g.channels = x.shape[1];
  readSpatial(x.shape + 2, n, 1, g.in);
  readSpatial(y.shape + 2, n, 1, g.out);
  readSpatial(w.shape + 2, n, 1, g.kernel);
  readSpatial(strides, n, 1, g.stride);
  readSpatial(pads, n, 0, g.padBegin);
  readSpatial(pads + n, n, 0, g.padEnd);
  readSpatial(dilations, n, 1, g.dilation);

  int64_t group = shape.group, c = g.channels, m = shape.outChannels;
  if (group < 1 || c % group != 0 || m % group != 0)
    return fail(ctx, kernel,
                "group %lld does not divide %lld channels in and "
                "%lld out",
                (long long)group, (long long)c, (long long)m);
  int64_t wIn = transposed ? w.shape[0] : w.shape[1] * group;
  int64_t wOut = transposed ? w.shape[1] * group : w.shape[0];
  if (wIn != c || wOut != m || y.shape[0] != g.batch)
    return fail(ctx, kernel, "weight and output shapes do not match the input");
  for (int i = 0; i < kMaxSpatial; ++i) {
    if (g.stride[i] < 1 || g.dilation[i] < 1 || g.padBegin[i] < 0 ||
        g.padEnd[i] < 0)
      return fail(ctx, kernel,
                  "strides and dilations must be positive and "
                  "pads non-negative");
    int64_t span = (g.kernel[i] - 1) * g.dilation[i] + 1;
    int64_t expected;
    if (transposed) {
      int64_t own = i - (kMaxSpatial - n);
      int64_t extra = own >= 0 ? outputPadding[own] : 0;
      expected = g.stride[i] * (g.in[i] - 1) + extra + span - g.padBegin[i] -
                 g.padEnd[i];
    } else {
      expected =
          (g.in[i] + g.padBegin[i] + g.padEnd[i] - span) / g.stride[i] + 1;
    }
    if (g.out[i] != expected)
      return fail(ctx, kernel,
                  "spatial dimension %d of Y is %lld, expected "
                  "%lld",
                  i - (kMaxSpatial - (int)n), (long long)g.out[i],
                  (long long)expected);
  }
  return 0;
}

/// Where window tap `tap` (row-major over the kernel) reads, per spatial
/// dimension, relative to an output position times the stride: its
/// position times the dilation, less the leading padding.
std::array<int64_t, kMaxSpatial> tapOffsets(const WindowGeometry &g,
                                            int64_t tap) {
  const int64_t kw = tap % g.kernel[2], kh = tap / g.kernel[2] % g.kernel[1],
                kd = tap / (g.kernel[2] * g.kernel[1]);
  return {kd * g.dilation[0] - g.padBegin[0],
          kh * g.dilation[1] - g.padBegin[1],
          kw * g.dilation[2] - g.padBegin[2]};
}

/// Fills the im2col matrix of one group: `channels * kernelSize` rows of
/// `outSize` columns, `rowStride` floats apart (`outSize` where 0).
void im2col(const WindowGeometry &g, int64_t channels, const float *x,
            float *col, int threads, int64_t rowStride = 0) {
  const int64_t kernelSize = g.kernelSize(), outSize = g.outSize();
  const int64_t rows = channels * kernelSize;
  parallelFor(threads, rows * outSize > kParallelGrain, rows, [&](int64_t row) {
    int64_t c = row / kernelSize;
    auto [offD, offH, offW] = tapOffsets(g, row % kernelSize);
    int64_t loD, hiD, loH, hiH, loW, hiW;
    validRange(offD, g.stride[0], g.in[0], g.out[0], loD, hiD);
    validRange(offH, g.stride[1], g.in[1], g.out[1], loH, hiH);
    validRange(offW, g.stride[2], g.in[2], g.out[2], loW, hiW);
    const float *plane = x + c * g.inSize();
    float *dst = col + row * (rowStride ? rowStride : outSize);
    if (loD > 0 || hiD < g.out[0] || loH > 0 || hiH < g.out[1] || loW > 0 ||
        hiW < g.out[2])
      std::memset(dst, 0, sizeof(float) * outSize);
    for (int64_t od = loD; od < hiD; ++od) {
      int64_t id = od * g.stride[0] + offD;
      for (int64_t oh = loH; oh < hiH; ++oh) {
        int64_t ih = oh * g.stride[1] + offH;
        const float *src = plane + (id * g.in[1] + ih) * g.in[2];
        float *line = dst + (od * g.out[1] + oh) * g.out[2];
        if (g.stride[2] == 1) {
          std::memcpy(line + loW, src + loW + offW,
                      sizeof(float) * (hiW - loW));
        } else {
          for (int64_t ow = loW; ow < hiW; ++ow)
            line[ow] = src[ow * g.stride[2] + offW];
        }
      }
    }
  });
}

/// Scatters (adds) the column matrix of one group of a transposed
/// convolution into its `channels` output planes, which start zeroed.
void col2im(const WindowGeometry &g, int64_t channels, const float *col,
            float *y, int threads) {
  const int64_t kernelSize = g.kernelSize(), inSize = g.inSize();
  // Taps of one channel write the same plane: threads split channels.
  parallelFor(threads, channels * kernelSize * inSize > kParallelGrain,
              channels, [&](int64_t c) {
                float *plane = y + c * g.outSize();
                for (int64_t tap = 0; tap < kernelSize; ++tap) {
                  auto [offD, offH, offW] = tapOffsets(g, tap);
                  // Input position i lands on output position i * stride +
                  // offset.
                  int64_t loD, hiD, loH, hiH, loW, hiW;
                  validRange(offD, g.stride[0], g.out[0], g.in[0], loD, hiD);
                  validRange(offH, g.stride[1], g.out[1], g.in[1], loH, hiH);
                  validRange(offW, g.stride[2], g.out[2], g.in[2], loW, hiW);
                  const float *src = col + (c * kernelSize + tap) * inSize;
                  for (int64_t id = loD; id < hiD; ++id) {
                    int64_t od = id * g.stride[0] + offD;
                    for (int64_t ih = loH; ih < hiH; ++ih) {
                      int64_t oh = ih * g.stride[1] + offH;
                      const float *line = src + (id * g.in[1] + ih) * g.in[2];
                      float *dst = plane + (od * g.out[1] + oh) * g.out[2];
                      for (int64_t iw = loW; iw < hiW; ++iw)
                        dst[iw * g.stride[2] + offW] += line[iw];
                    }
                  }
                }
              });
}

/// to[i] = from[i * step] for i in [0, n), with the common steps as
/// constants so that the copy vectorises.
void copyStrided(const float *__restrict from, float *__restrict to, int64_t n,
                 int64_t step) {
  if (step == 1) {
    std::copy(from, from + n, to);
  } else if (step == 2) {
    for (int64_t i = 0; i < n; ++i)
      to[i] = from[2 * i];
  } else {
    for (int64_t i = 0; i < n; ++i)
      to[i] = from[i * step];
  }
}

/// The input plane of a depthwise convolution, padded and split by phase:
/// along every spatial dimension, padded position j * stride + phase is
/// element j of that phase, so that a tap reads consecutive elements for
/// consecutive outputs at any stride. The phases of the three dimensions
/// are blocks of `block` floats; inside a block an element (jd, jh, jw) is
/// at (jd * len[1] + jh) * len[2] + jw. Output (od, oh, ow) at the same
/// index reads tap t at that index plus `offsets[t]`, whatever the
/// padding, stride and dilation, with no bounds to check.
struct PhasedPlane {
  int64_t len[kMaxSpatial];
  int64_t block = 1;
  int64_t phases = 1;
  std::vector<int64_t> offsets;
  /// Per dimension and phase: the elements [lo, hi) that come from the
  /// input (the rest are padding).
  std::vector<int64_t> lo[kMaxSpatial], hi[kMaxSpatial];

  explicit PhasedPlane(const WindowGeometry &g) {
    for (int i = 0; i < kMaxSpatial; ++i) {
      len[i] = g.out[i] + (g.kernel[i] - 1) * g.dilation[i] / g.stride[i];
      block *= len[i];
      phases *= g.stride[i];
      lo[i].resize(g.stride[i]);
      hi[i].resize(g.stride[i]);
      for (int64_t p = 0; p < g.stride[i]; ++p)
        validRange(p - g.padBegin[i], g.stride[i], g.in[i], len[i], lo[i][p],
                   hi[i][p]);
    }
    for (int64_t kd = 0; kd < g.kernel[0]; ++kd)
      for (int64_t kh = 0; kh < g.kernel[1]; ++kh)
        for (int64_t kw = 0; kw < g.kernel[2]; ++kw) {
          const int64_t k[kMaxSpatial] = {kd, kh, kw};
          int64_t phase = 0, within = 0;
          for (int i = 0; i < kMaxSpatial; ++i) {
            const int64_t at = k[i] * g.dilation[i];
            phase = phase * g.stride[i] + at % g.stride[i];
            within = within * len[i] + at / g.stride[i];
          }
          offsets.push_back(phase * block + within);
        }
  }

  int64_t size() const { return phases * block; }

  /// Fills `plane` (size() floats) from the input plane `src`, one input
  /// row at a time: its phases along the row are written together, while
  /// the row is in the L1 cache.
  void fill(const WindowGeometry &g, const float *src, float *plane) const {
    for (int64_t pd = 0; pd < g.stride[0]; ++pd)
      for (int64_t jd = 0; jd < len[0]; ++jd)
        for (int64_t ph = 0; ph < g.stride[1]; ++ph)
          for (int64_t jh = 0; jh < len[1]; ++jh) {
            const bool padding = jd < lo[0][pd] || jd >= hi[0][pd] ||
                                 jh < lo[1][ph] || jh >= hi[1][ph];
            const int64_t id = jd * g.stride[0] + pd - g.padBegin[0];
            const int64_t ih = jh * g.stride[1] + ph - g.padBegin[1];
            const float *line =
                padding ? nullptr : src + (id * g.in[1] + ih) * g.in[2];
            for (int64_t pw = 0; pw < g.stride[2]; ++pw) {
              float *row =
                  plane + ((pd * g.stride[1] + ph) * g.stride[2] + pw) * block +
                  (jd * len[1] + jh) * len[2];
              const int64_t loW = padding ? len[2] : lo[2][pw];
              const int64_t hiW = padding ? len[2] : hi[2][pw];
              for (int64_t jw = 0; jw < loW; ++jw)
                row[jw] = 0.0f;
              if (loW < hiW)
                copyStrided(line + loW * g.stride[2] + pw - g.padBegin[2],
                            row + loW, hiW - loW, g.stride[2]);
              for (int64_t jw = hiW; jw < len[2]; ++jw)
                row[jw] = 0.0f;
            }
          }
  }
};

/// out[i] = start + sum over taps t of w[t] * src[i + offsets[t]], for i
/// in [0, n), vectorised along i. `Taps` is the tap count as a constant
/// for the common kernels: the taps unroll inside the vector loop, their
/// weights stay in registers and each output is stored once. Any other
/// count (0: `taps`) runs the taps outside, over blocks of outputs that
/// stay in the L1 cache.
template <int Taps>
void depthwiseSpan(const float *__restrict src, const float *__restrict w,
                   const int64_t *__restrict offsets, int64_t taps, float start,
                   float *__restrict out, int64_t n) {
  if constexpr (Taps > 0) {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) {
      float sum = start;
#pragma GCC unroll 64
      for (int64_t t = 0; t < Taps; ++t)
        sum += w[t] * src[i + offsets[t]];
      out[i] = sum;
    }
  } else {
    constexpr int64_t kBlock = 256;
    for (int64_t begin = 0; begin < n; begin += kBlock) {
      const int64_t length = std::min(kBlock, n - begin);
      float *block = out + begin;
      std::fill(block, block + length, start);
      for (int64_t t = 0; t < taps; ++t) {
        const float weight = w[t];
        const float *tap = src + begin + offsets[t];
#pragma omp simd
        for (int64_t i = 0; i < length; ++i)
          block[i] += weight * tap[i];
      }
    }
  }
}

using DepthwiseSpanFn = void (*)(const float *, const float *, const int64_t *,
                                 int64_t, float, float *, int64_t);

DepthwiseSpanFn selectDepthwiseSpan(int64_t taps) {
  switch (taps) {
  case 9:
    return depthwiseSpan<9>;
  case 25:
    return depthwiseSpan<25>;
  case 49:
    return depthwiseSpan<49>;
  }
  return depthwiseSpan<0>;
}

/// Output rows at least this wide are computed one row at a time, straight
/// into the output; narrower planes are computed whole, as one span over
/// the phased plane's rows (the columns past the output's width are
/// computed and dropped), so that short rows still fill the vectors.
constexpr int64_t kDepthwiseRowWidth = 32;
/// Spans are computed in multiples of this many outputs (the widest vector,
/// 16 floats), so that no output falls to a scalar remainder loop: the
/// outputs past a span's end are computed into scratch and dropped, from
/// as many zeros past the end of the phased plane.
constexpr int64_t kDepthwiseSpanStep = 16;

int64_t roundUp(int64_t n, int64_t step) {
  return (n + step - 1) / step * step;
}

/// Convolution with one input channel per group (and `outChannels /
/// group` outputs per channel). Each input plane is copied once into a
/// padded plane split by stride phase (PhasedPlane), per thread; every
/// output is then computed in one pass, from the bias, with all of the
/// kernel's taps, as consecutive loads along the output row
/// (depthwiseSpan). No division and no bounds check is left in the loop.
int32_t depthwiseConv(CleaveContext *ctx, const ConvShape &shape,
                      const float *x, const float *w, const float *bias,
                      float *y, int threads) {
  const WindowGeometry &g = shape.window;
  const int64_t perGroup = shape.outChannels / shape.group;
  const int64_t taps = g.kernelSize(), outSize = g.outSize();
  const PhasedPlane phased(g);
  const int64_t width = g.out[2], pitch = phased.len[2];
  const bool byRow = width >= kDepthwiseRowWidth;
  // By row: the whole steps of a row go straight to the output, the rest
  // through scratch. Else the span of a whole depth slice: every row but
  // the last at the phased plane's row length.
  const int64_t direct =
      byRow ? width / kDepthwiseSpanStep * kDepthwiseSpanStep : 0;
  const int64_t span =
      roundUp(byRow ? width - direct : (g.out[1] - 1) * pitch + width,
              kDepthwiseSpanStep);
  const int64_t planeSize = phased.size() + kDepthwiseSpanStep;
  const int64_t perThread = planeSize + span;
  const int64_t planes = g.batch * g.channels;
  const bool parallel =
      forkTeam(threads, planes * outSize * taps > kParallelGrain);
  const int team = parallel ? threads : 1;
  float *scratch = static_cast<float *>(
      cleave_rt_scratch(ctx, sizeof(float) * team * perThread));
  if (!scratch)
    return 1;
  const DepthwiseSpanFn convolve = selectDepthwiseSpan(taps);
  const int64_t *offsets = phased.offsets.data();
  // Each thread's share, with its own plane and rows in the scratch memory;
  // the loop over planes is split among the team that calls it.
  auto share = [&] {
    float *plane = scratch + perThread * omp_get_thread_num();
    float *rows = plane + planeSize;
    std::fill(plane + phased.size(), plane + planeSize, 0.0f);
#pragma omp for schedule(static)
    for (int64_t p = 0; p < planes; ++p) {
      phased.fill(g, x + p * g.inSize(), plane);
      const int64_t n = p / g.channels, c = p % g.channels;
      for (int64_t j = 0; j < perGroup; ++j) {
        const int64_t m = c * perGroup + j;
        const float *weights = w + m * taps;
        const float start = bias ? bias[m] : 0.0f;
        float *dst = y + (n * shape.outChannels + m) * outSize;
        for (int64_t od = 0; od < g.out[0]; ++od) {
          const float *src = plane + od * phased.len[1] * pitch;
          float *out = dst + od * g.out[1] * width;
          if (byRow) {
            for (int64_t oh = 0; oh < g.out[1]; ++oh) {
              const float *line = src + oh * pitch;
              float *row = out + oh * width;
              convolve(line, weights, offsets, taps, start, row, direct);
              if (direct == width)
                continue;
              convolve(line + direct, weights, offsets, taps, start, rows,
                       span);
              std::copy(rows, rows + width - direct, row + direct);
            }
            continue;
          }
          convolve(src, weights, offsets, taps, start, rows, span);
          for (int64_t oh = 0; oh < g.out[1]; ++oh)
            std::copy(rows + oh * pitch, rows + oh * pitch + width,
                      out + oh * width);
        }
      }
    }
  };
  parallelRegion(team, parallel, share);
  return 0;
}

/// Output planes at least this large run a depthwise convolution in plain
/// layouts on depthwiseConv(), smaller ones on oneDNN. oneDNN's depthwise
/// kernel is faster per output, but the program's plain layout costs it a
/// reorder in and out, which the large planes do not win back; where the
/// program keeps X or Y blocked, oneDNN runs every plane (the direct loop
/// would reorder too). Measured with
/// bench/ops_vs_onnxruntime.py, 1 thread, AVX2 (docs/PERFORMANCE.md),
/// oneDNN / depthwiseConv() in ms: 3x3 stride 1 on 32 x 112 x 112 1.69 /
/// 1.14, on 144 x 56 x 56 1.87 / 1.68, on 384 x 14 x 14 0.21 / 0.31; 3x3
/// stride 2 on 96 x 112 x 112 (56 x 56 out) 3.61 / 3.52; 5x5 on 240 x 28
/// x 28 0.85 / 1.10, on 1152 x 7 x 7 0.22 / 0.78.
constexpr int64_t kDirectDepthwisePlane = 56 * 56;

/// One input channel per group. A depthwise convolution runs on
/// depthwiseConv() where its output plane is large and its layouts plain
/// (kDirectDepthwisePlane), unless oneDNN runs with AVX-512 and its
/// 16-channel blocks divide the channels (then oneDNN's blocked kernel and
/// two reorders beat the direct loop on large maps too: 0.44 against 1.83
/// ms for 7x7 on 96 x 56 x 56, 0.25 against 0.47 for 3x3 on 144 x 56 x 56,
/// 0.24 against 0.26 for 3x3 on 32 x 112 x 112; on channels-last data,
/// which it takes otherwise, 0.75 and 0.58), or where oneDNN has no
/// depthwise kernel for it (its jit kernel declines maps smaller than the
/// window's reach: oneDNN's generic implementation took 0.10 ms on 144
/// channels at 1x1, the direct loop 0.035 ms; dnnlConv cuts a window to
/// the taps that read inside the map first, which makes MobileNetV3's 5x5
/// on a 1x1 map a 1x1 window the jit kernel takes). A dense or grouped
/// convolution runs on oneDNN, whose blocked kernels with weights packed once
/// beat im2col + OpenBLAS on every such shape measured (3x3 64 -> 64 at 56 x
/// 56: 6.9 against 14.6 ms; pointwise 320 -> 1280 at 7 x 7: 1.21 against 3.37
/// ms), but the smallest ones (kSmallConvMacs).
bool isDepthwise(const ConvShape &shape) {
  return shape.group > 1 && shape.window.channels == shape.group;
}

/// Planes smaller than this take finishPlanes' pass over whole images: one
/// call of the epilogue per plane of 4 values (MobileNetV2 at width 0.25
/// on 32 x 32, batch 8) took a quarter of the model's time.
constexpr int64_t kSmallPlane = 64;

/// Adds the bias (where there is one) and applies the epilogue to the
/// batch x channels planes of y, in one pass over each plane, or over each
/// image where planes are small (kSmallPlane).
void finishPlanes(const float *bias, const Epilogue &epilogue, float *y,
                  int64_t batch, int64_t channels, int64_t planeSize,
                  int threads) {
  if (!bias && epilogue.kind == CLEAVE_EPILOGUE_NONE)
    return;
  if (planeSize < kSmallPlane) {
    if (!bias) {
      applyEpilogue(epilogue, y, batch * channels * planeSize, threads);
      return;
    }
    // The bias of every value of an image, channel by channel.
    std::vector<float> spread;
    try {
      spread.resize(channels * planeSize);
    } catch (const std::bad_alloc &) {
      // A plane at a time needs none.
      spread.clear();
    }
    if (!spread.empty()) {
      for (int64_t c = 0; c < channels; ++c)
        std::fill_n(spread.data() + c * planeSize, planeSize, bias[c]);
      applyEpilogueRows(epilogue, y, batch, channels * planeSize, spread.data(),
                        /*added=*/nullptr, threads);
      return;
    }
  }
  parallelFor(threads, batch * channels * planeSize > kParallelGrain,
              batch * channels, [&](int64_t p) {
                float *plane = y + p * planeSize;
                applyEpilogueRun(epilogue, plane, planeSize,
                                 bias ? bias + p % channels : nullptr);
              });
}

/// Below this many multiply-adds a dense or grouped convolution runs as
/// im2col + sgemm here: oneDNN's calls (a reorder in, the convolution, a
/// reorder out, a few microseconds each) cost more than such a small
/// convolution. MobileNetV3-Small (width 0.25, 32 x 32), 1 thread, median
/// ms: all on oneDNN 0.507, below 2^16 here 0.371, below 2^18 here 0.362
/// (im2col + sgemm throughout: 0.391).
constexpr int64_t kSmallConvMacs = CLEAVE_CONV_BLOCKED_MACS;

/// Below this many output positions per image, gemmConv multiplies the
/// columns of every image of the batch at once: one sgemm of a few columns
/// per image costs more in the call than in the arithmetic. MobileNetV2
/// (width 0.25, 32 x 32) at batch 8, 1 thread: a 16 -> 96 pointwise
/// convolution on 2 x 2 maps took 27 us as 8 products of 4 columns.
constexpr int64_t kBatchedColumns = 256;

/// Most bytes of the column and result matrices of gemmConv's batched
/// form (a larger problem runs image by image).
constexpr size_t kBatchedScratchBytes = size_t(8) << 20;

/// Copies `runs` runs of `length` floats, `fromStride` and `toStride`
/// apart. The runs of gemmConv's batched form are short (4 floats for a
/// 2 x 2 map), where a call of memcpy per run cost more than the
/// convolution: GCC would make the loop such a call.
__attribute__((optimize("no-tree-loop-distribute-patterns"))) void
copyRuns(const float *__restrict from, int64_t fromStride, float *__restrict to,
         int64_t toStride, int64_t runs, int64_t length) {
  // Runs of 2 and 4 floats go as one 8- or 16-byte move each.
  if (length == 4) {
    for (int64_t r = 0; r < runs; ++r)
      std::memcpy(to + r * toStride, from + r * fromStride, 16);
    return;
  }
  if (length == 2) {
    for (int64_t r = 0; r < runs; ++r)
      std::memcpy(to + r * toStride, from + r * fromStride, 8);
    return;
  }
  for (int64_t r = 0; r < runs; ++r)
    for (int64_t i = 0; i < length; ++i)
      to[r * toStride + i] = from[r * fromStride + i];
}

/// gemmConv's products image by image.
int32_t gemmConvByImage(CleaveContext *ctx, const ConvShape &shape,
                        const float *x, const float *w, float *y,
                        bool pointwise, int threads) {
  const WindowGeometry &g = shape.window;
  const int64_t cg = g.channels / shape.group;
  const int64_t mg = shape.outChannels / shape.group;
  const int64_t kernelSize = g.kernelSize(), outSize = g.outSize();
  float *col = nullptr;
  if (!pointwise) {
    col = static_cast<float *>(
        cleave_rt_scratch(ctx, sizeof(float) * cg * kernelSize * outSize));
    if (!col)
      return 1;
  }
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t grp = 0; grp < shape.group; ++grp) {
      const float *xg = x + (n * g.channels + grp * cg) * g.inSize();
      const float *wg = w + grp * mg * cg * kernelSize;
      float *yg = y + (n * shape.outChannels + grp * mg) * outSize;
      const float *rhs = xg;
      if (!pointwise) {
        im2col(g, cg, xg, col, threads);
        rhs = col;
      }
      sgemm(threads, false, false, mg, outSize, cg * kernelSize, 1.0f, wg,
            cg * kernelSize, rhs, outSize, 0.0f, yg, outSize);
    }
  }
  return 0;
}

/// im2col + sgemm, 1x1 stride-1 windows straight from the input. Small
/// maps of a batch go as one product per group over every image's columns
/// (kBatchedColumns), its result copied into place.
int32_t gemmConv(CleaveContext *ctx, const ConvShape &shape, const float *x,
                 const float *w, const float *bias, float *y,
                 const Epilogue &epilogue, int threads) {
  const WindowGeometry &g = shape.window;
  const int64_t cg = g.channels / shape.group;
  const int64_t mg = shape.outChannels / shape.group;
  const int64_t kernelSize = g.kernelSize(), outSize = g.outSize();
  bool pointwise = true;
  for (int i = 0; i < kMaxSpatial; ++i)
    pointwise &= g.kernel[i] == 1 && g.stride[i] == 1 && g.padBegin[i] == 0 &&
                 g.padEnd[i] == 0;
  const int64_t columns = g.batch * outSize;
  const size_t batchedBytes =
      sizeof(float) * static_cast<size_t>((cg * kernelSize + mg) * columns);
  // (Y = X W^T straight from X where maps are 1x1 would save the copies,
  // but OpenBLAS took 97-129 us for it on 1 x 320 x 1280 against 28 for
  // W x.)
  if (g.batch > 1 && outSize < kBatchedColumns &&
      batchedBytes <= kBatchedScratchBytes) {
    float *col = static_cast<float *>(cleave_rt_scratch(ctx, batchedBytes));
    if (!col)
      return 1;
    float *product = col + cg * kernelSize * columns;
    for (int64_t grp = 0; grp < shape.group; ++grp) {
      // Image n's columns are n * outSize.. of every row.
      for (int64_t n = 0; n < g.batch; ++n) {
        const float *xg = x + (n * g.channels + grp * cg) * g.inSize();
        if (pointwise) {
          copyRuns(xg, outSize, col + n * outSize, columns, cg, outSize);
        } else {
          im2col(g, cg, xg, col + n * outSize, threads, columns);
        }
      }
      sgemm(threads, false, false, mg, columns, cg * kernelSize, 1.0f,
            w + grp * mg * cg * kernelSize, cg * kernelSize, col, columns, 0.0f,
            product, columns);
      for (int64_t n = 0; n < g.batch; ++n)
        copyRuns(product + n * outSize, columns,
                 y + (n * shape.outChannels + grp * mg) * outSize, outSize, mg,
                 outSize);
    }
  } else {
    if (int32_t status =
            gemmConvByImage(ctx, shape, x, w, y, pointwise, threads))
      return status;
  }
  finishPlanes(bias, epilogue, y, g.batch, shape.outChannels, outSize, threads);
  return 0;
}

/// Reorders between NCHW and nChw<block>c (`toBlocked` says which way)
/// over `batch` x `channels` planes of `plane` elements each.
void reorderBlocked(const float *from, float *to, int64_t batch,
                    int64_t channels, int64_t plane, int64_t block,
                    bool toBlocked, int threads) {
  const int64_t groups = batch * (channels / block);
  parallelFor(threads, groups * block * plane > kParallelGrain, groups,
              [&](int64_t gi) {
                // Channels gi*block.. of one image: `block` planes in NCHW,
                // `plane` runs of `block` channels in nChw<block>c.
                const int64_t at = gi * block * plane;
                for (int64_t p = 0; p < plane; ++p)
                  for (int64_t c = 0; c < block; ++c) {
                    if (toBlocked)
                      to[at + p * block + c] = from[at + c * plane + p];
                    else
                      to[at + c * plane + p] = from[at + p * block + c];
                  }
              });
}

/// Runs `body(x, y)`, which reads and writes NCHW, on a convolution whose
/// X or Y the program keeps blocked: X reordered into a copy first, Y
/// written to a copy and reordered into place after.
template <typename Body>
int32_t inProgramLayouts(CleaveContext *ctx, const ConvShape &shape,
                         const ConvLayouts &layouts, const float *x, float *y,
                         Body body) {
  if (layouts.plain())
    return body(x, y);
  const WindowGeometry &g = shape.window;
  const int threads = numThreads(ctx);
  std::vector<float> plainX, plainY;
  try {
    if (layouts.x)
      plainX.resize(g.batch * g.channels * g.inSize());
    if (layouts.y)
      plainY.resize(g.batch * shape.outChannels * g.outSize());
  } catch (const std::bad_alloc &) {
    return fail(ctx, "conv", "out of memory for NCHW copies of X and Y");
  }
  if (layouts.x) {
    reorderBlocked(x, plainX.data(), g.batch, g.channels, g.inSize(), layouts.x,
                   /*toBlocked=*/false, threads);
    x = plainX.data();
  }
  if (int32_t status = body(x, layouts.y ? plainY.data() : y))
    return status;
  if (layouts.y)
    reorderBlocked(plainY.data(), y, g.batch, shape.outChannels, g.outSize(),
                   layouts.y, /*toBlocked=*/true, threads);
  return 0;
}

/// Fails unless `block` is a layout conv takes for `channels` channels.
int32_t checkBlock(CleaveContext *ctx, const char *what, int64_t block,
                   const ConvShape &shape, int64_t channels) {
  if (block == 0)
    return 0;
  if (block != 8 && block != 16)
    return fail(ctx, "conv", "%s %lld: the layouts are 0 (NCHW), 8 and 16",
                what, static_cast<long long>(block));
  if (shape.spatial != 2)
    return fail(ctx, "conv",
                "%s %lld: a blocked layout needs 2 spatial dimensions, not %d",
                what, static_cast<long long>(block), shape.spatial);
  if (channels % block)
    return fail(ctx, "conv", "%s %lld does not divide %lld channels", what,
                static_cast<long long>(block),
                static_cast<long long>(channels));
  return 0;
}

template <typename Args>
int32_t checkConvOperands(CleaveContext *ctx, const char *kernel,
                          const Args &args, int64_t biasLength) {
  if (checkF32(ctx, kernel, args.x(), "X") ||
      checkF32(ctx, kernel, args.w(), "W") ||
      checkF32(ctx, kernel, args.y(), "Y"))
    return 1;
  if (const CleaveTensor *bias = args.bias()) {
    if (checkF32(ctx, kernel, *bias, "B"))
      return 1;
    if (numElements(*bias) != biasLength)
      return fail(ctx, kernel, "B has %lld elements, expected %lld",
                  (long long)numElements(*bias), (long long)biasLength);
  }
  return 0;
}

} // namespace

int32_t cleave::cpu::kernels::conv(CleaveContext *ctx, const args::Conv &args) {
  const char *kernel = "conv";
  ConvShape shape;
  if (int32_t status = readConv(ctx, kernel, args, nullptr, shape))
    return status;
  if (int32_t status = checkConvOperands(ctx, kernel, args, shape.outChannels))
    return status;
  const WindowGeometry &g = shape.window;
  const float *x = static_cast<const float *>(args.x().data);
  const float *w = static_cast<const float *>(args.w().data);
  float *y = static_cast<float *>(args.y().data);
  if (g.batch * shape.outChannels * g.outSize() == 0)
    return 0;
  const CleaveTensor *bias = args.bias();
  const float *b = bias ? static_cast<const float *>(bias->data) : nullptr;
  Epilogue epilogue;
  if (epilogue.read(ctx, kernel, args.epilogue(), args.epilogueMin(),
                    args.epilogueMax()))
    return 1;
  ConvLayouts layouts;
  layouts.x = args.xBlock();
  layouts.y = args.yBlock();
  if (checkBlock(ctx, "xBlock", layouts.x, shape, g.channels) ||
      checkBlock(ctx, "yBlock", layouts.y, shape, shape.outChannels))
    return 1;
  const int64_t outputs = numElements(args.y());
  if (epilogue.readResidual(ctx, kernel, args.residual(), outputs))
    return 1;
  // Y is written while X is read: the two must not share bytes (the
  // residual may be Y itself).
  if (y < x + numElements(args.x()) && x < y + outputs)
    return fail(ctx, kernel, "Y overlaps X");
  // Writable weights (training's parameters) stay on the kernels here,
  // whose float32 sums are closer to exact: on a 3x3 512 -> 512
  // convolution at 1x1, batch 4, oneDNN's outputs were 9.2e-8 from
  // float64 (rms; 7.0e-7 at most), im2col + OpenBLAS's 3.7e-8 (1.5e-7),
  // and 20 training steps amplify the difference (a chaotic model,
  // test/Transforms/Autodiff/families-train-torch.py: resnet's batch-norm
  // statistics went from 0.15 to 1.21 of their bound on oneDNN).
  const bool constant =
      cleave_rt_constant_weights(ctx, w, sizeof(float) * numElements(args.w()));
  // oneDNN reads and writes the program's layouts; the kernels here read
  // and write NCHW, through copies where the program keeps X or Y blocked.
  const bool depthwise = isDepthwise(shape);
  // On oneDNN, a SiLU goes over Y after the convolution: its swish post-op
  // took 0.9 ns a value inside a pointwise convolution of 16 channels in
  // (16 -> 96 on 112x112: 1.48 ms, against 0.40 with none), the pass here
  // about half that.
  Epilogue onDnnl = epilogue;
  if (epilogue.kind == CLEAVE_EPILOGUE_SILU)
    onDnnl.kind = CLEAVE_EPILOGUE_NONE;
  auto afterDnnl = [&](int32_t status) {
    if (status == 0 && onDnnl.kind != epilogue.kind) {
      Epilogue activation;
      activation.kind = epilogue.kind;
      applyEpilogue(activation, y, outputs, numThreads(ctx));
    }
    return status;
  };
  if (!depthwise && constant && shape.multiplyAdds() >= kSmallConvMacs)
    return afterDnnl(dnnlConv(ctx, shape, x, w, b, y, onDnnl, layouts));
  if (depthwise && constant &&
      (g.outSize() < kDirectDepthwisePlane || !layouts.plain() ||
       dnnlBlocksDepthwise(shape))) {
    int32_t status = dnnlConv(ctx, shape, x, w, b, y, onDnnl, layouts,
                              /*declineGeneric=*/true);
    if (status != kDnnlDeclined)
      return afterDnnl(status);
  }
  // The kernels here write Y whole, so a residual that is Y is kept aside
  // first; with one, they convolve without the epilogue, and the residual
  // and the epilogue are applied over Y in the program's layout after.
  std::vector<float> keptResidual;
  const float *residual = epilogue.residual;
  if (residual == y) {
    try {
      keptResidual.assign(residual, residual + outputs);
    } catch (const std::bad_alloc &) {
      return fail(ctx, kernel, "out of memory for a copy of R");
    }
    residual = keptResidual.data();
  }
  const Epilogue own = residual ? Epilogue() : epilogue;
  int32_t status =
      !depthwise
          ? inProgramLayouts(ctx, shape, layouts, x, y,
                             [&](auto *x, float *y) {
                               return gemmConv(ctx, shape, x, w, b, y, own,
                                               numThreads(ctx));
                             })
          // The direct depthwise loop applies the epilogue over Y once it
          // is written, while it is in the caches (im2col + sgemm applies
          // it with the bias).
          : inProgramLayouts(ctx, shape, layouts, x, y, [&](auto *x, float *y) {
              int32_t status =
                  depthwiseConv(ctx, shape, x, w, b, y, numThreads(ctx));
              if (status == 0)
                applyEpilogue(own, y, outputs, numThreads(ctx));
              return status;
            });
  if (status == 0 && residual)
    applyEpilogue(epilogue, y, outputs, numThreads(ctx), residual);
  return status;
}

int32_t cleave::cpu::kernels::conv_transpose(CleaveContext *ctx,
                                             const args::ConvTranspose &args) {
  const char *kernel = "conv_transpose";
  ConvShape shape;
  if (int32_t status =
          readConv(ctx, kernel, args, args.outputPadding().data(), shape))
    return status;
  if (int32_t status = checkConvOperands(ctx, kernel, args, shape.outChannels))
    return status;
  const WindowGeometry &g = shape.window;
  const float *x = static_cast<const float *>(args.x().data);
  const float *w = static_cast<const float *>(args.w().data);
  float *y = static_cast<float *>(args.y().data);
  const int threads = numThreads(ctx);
  const int64_t cg = g.channels / shape.group;
  const int64_t mg = shape.outChannels / shape.group;
  const int64_t kernelSize = g.kernelSize(), inSize = g.inSize();
  const int64_t outTotal = g.batch * shape.outChannels * g.outSize();
  if (outTotal == 0)
    return 0;
  std::memset(y, 0, sizeof(float) * outTotal);
  if (inSize > 0 && cg > 0) {
    float *col = static_cast<float *>(
        cleave_rt_scratch(ctx, sizeof(float) * mg * kernelSize * inSize));
    if (!col)
      return 1;
    for (int64_t n = 0; n < g.batch; ++n) {
      for (int64_t grp = 0; grp < shape.group; ++grp) {
        const float *xg = x + (n * g.channels + grp * cg) * inSize;
        // W is C x M/group x k...: the rows of a group are its input
        // channels, so the column matrix is the transposed product.
        const float *wg = w + grp * cg * mg * kernelSize;
        float *yg = y + (n * shape.outChannels + grp * mg) * g.outSize();
        sgemm(threads, true, false, mg * kernelSize, inSize, cg, 1.0f, wg,
              mg * kernelSize, xg, inSize, 0.0f, col, inSize);
        col2im(g, mg, col, yg, threads);
      }
    }
  }
  if (const CleaveTensor *bias = args.bias())
    finishPlanes(static_cast<const float *>(bias->data), Epilogue(), y, g.batch,
                 shape.outChannels, g.outSize(), threads);
  return 0;
}
