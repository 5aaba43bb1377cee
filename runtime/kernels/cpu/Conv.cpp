//===- Conv.cpp - convolution and transposed convolution ------------------===//
//
// A convolution is an sgemm of the weights by the im2col matrix of the
// input (one row per input channel and kernel tap, one column per output
// position). A 1x1 stride-1 unpadded convolution multiplies the input
// directly, and a grouped convolution with one input channel per group
// (depthwise) runs a direct loop, where the im2col matrix would be as large
// as the work. A transposed convolution is the adjoint: an sgemm into the
// column matrix, then col2im scatters it into the output.
//
//===----------------------------------------------------------------------===//

#include "ConvGeometry.h"

#include <cstring>

using namespace cleave::cpu;

namespace {

struct ConvShape {
  WindowGeometry window;
  int64_t group = 1;
  int64_t outChannels = 1;
};

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

/// Fills the im2col matrix of one group: `channels * kernelSize` rows of
/// `outSize` columns.
void im2col(const WindowGeometry &g, int64_t channels, const float *x,
            float *col, int threads) {
  const int64_t kernelSize = g.kernelSize(), outSize = g.outSize();
  const int64_t rows = channels * kernelSize;
#pragma omp parallel for num_threads(threads) if (rows * outSize >             \
                                                  kParallelGrain)
  for (int64_t row = 0; row < rows; ++row) {
    int64_t c = row / kernelSize, tap = row % kernelSize;
    int64_t kw = tap % g.kernel[2], kh = tap / g.kernel[2] % g.kernel[1],
            kd = tap / (g.kernel[2] * g.kernel[1]);
    int64_t offD = kd * g.dilation[0] - g.padBegin[0];
    int64_t offH = kh * g.dilation[1] - g.padBegin[1];
    int64_t offW = kw * g.dilation[2] - g.padBegin[2];
    int64_t loD, hiD, loH, hiH, loW, hiW;
    validRange(offD, g.stride[0], g.in[0], g.out[0], loD, hiD);
    validRange(offH, g.stride[1], g.in[1], g.out[1], loH, hiH);
    validRange(offW, g.stride[2], g.in[2], g.out[2], loW, hiW);
    const float *plane = x + c * g.inSize();
    float *dst = col + row * outSize;
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
  }
}

/// Scatters (adds) the column matrix of one group of a transposed
/// convolution into its `channels` output planes, which start zeroed.
void col2im(const WindowGeometry &g, int64_t channels, const float *col,
            float *y, int threads) {
  const int64_t kernelSize = g.kernelSize(), inSize = g.inSize();
  // Taps of one channel write the same plane: threads split channels.
#pragma omp parallel for num_threads(                                          \
    threads) if (channels * kernelSize * inSize > kParallelGrain)
  for (int64_t c = 0; c < channels; ++c) {
    float *plane = y + c * g.outSize();
    for (int64_t tap = 0; tap < kernelSize; ++tap) {
      int64_t kw = tap % g.kernel[2], kh = tap / g.kernel[2] % g.kernel[1],
              kd = tap / (g.kernel[2] * g.kernel[1]);
      int64_t offD = kd * g.dilation[0] - g.padBegin[0];
      int64_t offH = kh * g.dilation[1] - g.padBegin[1];
      int64_t offW = kw * g.dilation[2] - g.padBegin[2];
      // Input position i lands on output position i * stride + offset.
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
  }
}

/// The columns of one output row of a depthwise convolution: the row's
/// width, the input line's, and the kernel's along the row, with the
/// interior [lo, hi) where every tap falls inside the input line.
struct DepthwiseRow {
  int64_t out, in, kernel, stride, dilation, pad;
  int64_t lo, hi;
};

/// Adds the taps `w[0..row.kernel)` over the input `line` to the output
/// row `out`. The interior columns, most of a row, run without bounds
/// checks and vectorise along the row; `Kernel` and `Stride` are the
/// common widths and strides as constants (0: read from `row`), so that
/// the taps unroll and each output is loaded and stored once.
template <int Kernel, int Stride>
void depthwiseRow(const float *__restrict line, const float *__restrict w,
                  float *__restrict out, const DepthwiseRow &row) {
  const int64_t kernel = Kernel ? Kernel : row.kernel;
  const int64_t stride = Stride ? Stride : row.stride;
  const int64_t dilation = row.dilation;
  auto border = [&](int64_t begin, int64_t end) {
    for (int64_t ow = begin; ow < end; ++ow) {
      float sum = out[ow];
      int64_t iw = ow * stride - row.pad;
      for (int64_t k = 0; k < kernel; ++k, iw += dilation)
        if (iw >= 0 && iw < row.in)
          sum += w[k] * line[iw];
      out[ow] = sum;
    }
  };
  border(0, row.lo);
  const float *base = line - row.pad;
  if (Kernel) {
#pragma omp simd
    for (int64_t ow = row.lo; ow < row.hi; ++ow) {
      float sum = out[ow];
      for (int64_t k = 0; k < Kernel; ++k)
        sum += w[k] * base[ow * stride + k * dilation];
      out[ow] = sum;
    }
  } else {
    for (int64_t k = 0; k < kernel; ++k) {
      const float weight = w[k];
      const float *tap = base + k * dilation;
#pragma omp simd
      for (int64_t ow = row.lo; ow < row.hi; ++ow)
        out[ow] += weight * tap[ow * stride];
    }
  }
  border(row.hi, row.out);
}

using DepthwiseRowFn = void (*)(const float *, const float *, float *,
                                const DepthwiseRow &);

DepthwiseRowFn selectDepthwiseRow(int64_t kernel, int64_t stride) {
  if (stride == 1 || stride == 2) {
    bool unit = stride == 1;
    switch (kernel) {
    case 3:
      return unit ? depthwiseRow<3, 1> : depthwiseRow<3, 2>;
    case 5:
      return unit ? depthwiseRow<5, 1> : depthwiseRow<5, 2>;
    case 7:
      return unit ? depthwiseRow<7, 1> : depthwiseRow<7, 2>;
    }
  }
  return depthwiseRow<0, 0>;
}

/// Convolution with one input channel per group (and `outChannels /
/// group` outputs per channel). Each output row is computed in one pass,
/// starting from the bias, with the kernel's taps inside: the rows of taps
/// that fall in the padding are skipped, and along the row the interior
/// runs unchecked (depthwiseRow). Every division is per call or per plane.
void depthwiseConv(const ConvShape &shape, const float *x, const float *w,
                   const float *bias, float *y, int threads) {
  const WindowGeometry &g = shape.window;
  const int64_t channels = shape.outChannels;
  const int64_t planes = g.batch * channels;
  const int64_t perGroup = channels / shape.group;
  const int64_t kernelSize = g.kernelSize();
  DepthwiseRow row{g.out[2],      g.in[2],       g.kernel[2], g.stride[2],
                   g.dilation[2], g.padBegin[2], 0,           0};
  // Interior: ow * stride - pad + k * dilation in [0, in) for every k.
  const int64_t interior = g.in[2] - (g.kernel[2] - 1) * g.dilation[2];
  if (interior > 0)
    validRange(-row.pad, row.stride, interior, row.out, row.lo, row.hi);
  const DepthwiseRowFn convolveRow = selectDepthwiseRow(row.kernel, row.stride);
#pragma omp parallel for num_threads(                                          \
    threads) if (planes * g.outSize() * kernelSize > kParallelGrain)
  for (int64_t p = 0; p < planes; ++p) {
    const int64_t n = p / channels, m = p % channels;
    const float *src = x + (n * g.channels + m / perGroup) * g.inSize();
    const float *taps = w + m * kernelSize;
    float *dst = y + p * g.outSize();
    const float start = bias ? bias[m] : 0.0f;
    for (int64_t od = 0; od < g.out[0]; ++od) {
      for (int64_t oh = 0; oh < g.out[1]; ++oh) {
        float *out = dst + (od * g.out[1] + oh) * g.out[2];
        for (int64_t ow = 0; ow < g.out[2]; ++ow)
          out[ow] = start;
        for (int64_t kd = 0; kd < g.kernel[0]; ++kd) {
          const int64_t id =
              od * g.stride[0] - g.padBegin[0] + kd * g.dilation[0];
          if (id < 0 || id >= g.in[0])
            continue;
          for (int64_t kh = 0; kh < g.kernel[1]; ++kh) {
            const int64_t ih =
                oh * g.stride[1] - g.padBegin[1] + kh * g.dilation[1];
            if (ih < 0 || ih >= g.in[1])
              continue;
            convolveRow(src + (id * g.in[1] + ih) * g.in[2],
                        taps + (kd * g.kernel[1] + kh) * g.kernel[2], out, row);
          }
        }
      }
    }
  }
}

void addBias(const float *bias, float *y, int64_t batch, int64_t channels,
             int64_t planeSize, int threads) {
#pragma omp parallel for num_threads(                                          \
    threads) if (batch * channels * planeSize > kParallelGrain)
  for (int64_t p = 0; p < batch * channels; ++p) {
    float b = bias[p % channels];
    float *plane = y + p * planeSize;
    for (int64_t i = 0; i < planeSize; ++i)
      plane[i] += b;
  }
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
  const int threads = numThreads(ctx);
  const int64_t cg = g.channels / shape.group;
  const int64_t mg = shape.outChannels / shape.group;
  const int64_t kernelSize = g.kernelSize(), outSize = g.outSize();
  if (g.batch * shape.outChannels * outSize == 0)
    return 0;

  const CleaveTensor *bias = args.bias();
  if (cg == 1 && shape.group > 1) {
    depthwiseConv(shape, x, w,
                  bias ? static_cast<const float *>(bias->data) : nullptr, y,
                  threads);
    return 0;
  }
  bool pointwise = true;
  for (int i = 0; i < kMaxSpatial; ++i)
    pointwise &= g.kernel[i] == 1 && g.stride[i] == 1 && g.padBegin[i] == 0 &&
                 g.padEnd[i] == 0;
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
  if (bias)
    addBias(static_cast<const float *>(bias->data), y, g.batch,
            shape.outChannels, outSize, threads);
  return 0;
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
    addBias(static_cast<const float *>(bias->data), y, g.batch,
            shape.outChannels, g.outSize(), threads);
  return 0;
}
