//===- Softmax.cpp - softmax and log-softmax along one axis ---------------===//
//
// The input is viewed as outer x axis x inner. Each (outer, inner) line is
// shifted by its maximum before exponentiation so that large logits do not
// overflow. The last axis (inner == 1) is the common case and runs over
// contiguous lines. With nan_to_zero every NaN of the result becomes 0 (a
// line of -inf, the fully masked row of an attention, gives zeros).
//
//===----------------------------------------------------------------------===//

#include "KernelSupport.h"

#include <cmath>
#include <limits>

using namespace cleave::cpu;

void cleave::cpu::CLEAVE_CPU_LEVEL::softmaxLine(const float *line,
                                                float *result, int64_t length,
                                                bool log) {
  float max = -std::numeric_limits<float>::infinity();
#pragma omp simd reduction(max : max)
  for (int64_t i = 0; i < length; ++i)
    max = line[i] > max ? line[i] : max;
  float sum = 0.0f;
  if (log) {
#pragma omp simd reduction(+ : sum)
    for (int64_t i = 0; i < length; ++i)
      sum += std::exp(line[i] - max);
    const float shift = max + std::log(sum);
    for (int64_t i = 0; i < length; ++i)
      result[i] = line[i] - shift;
    return;
  }
  // The exponentials and their sum in one pass (a second pass over the
  // line only to sum it cost a quarter of the kernel on long lines).
#pragma omp simd reduction(+ : sum)
  for (int64_t i = 0; i < length; ++i) {
    const float e = std::exp(line[i] - max);
    result[i] = e;
    sum += e;
  }
  const float inv = 1.0f / sum;
#pragma omp simd
  for (int64_t i = 0; i < length; ++i)
    result[i] *= inv;
}

namespace {

/// Replaces each NaN of `values[i * stride]`, i < count, by 0.
void zeroNaNs(float *values, int64_t count, int64_t stride) {
  for (int64_t i = 0; i < count; ++i)
    if (std::isnan(values[i * stride]))
      values[i * stride] = 0.0f;
}

/// Softmax (or log-softmax) of `x` along `axis` into `y`.
int32_t softmax(CleaveContext *ctx, const char *kernel, const CleaveTensor &x,
                CleaveTensor &y, int64_t axis, bool log, bool nanToZero) {
  if (checkF32(ctx, kernel, x, "X") || checkF32(ctx, kernel, y, "Y"))
    return 1;
  if (axis < 0 || axis >= x.rank)
    return fail(ctx, kernel, "axis %lld is out of range for rank %d",
                (long long)axis, x.rank);
  if (numElements(y) != numElements(x))
    return fail(ctx, kernel, "Y must have the shape of X");
  const int64_t outer = product(x.shape, 0, axis);
  const int64_t length = x.shape[axis];
  const int64_t inner = product(x.shape, axis + 1, x.rank);
  const float *src = static_cast<const float *>(x.data);
  float *dst = static_cast<float *>(y.data);
  const int threads = numThreads(ctx);
  const int64_t lines = outer * inner;
  if (inner == 1) {
    parallelFor(threads, lines * length > kParallelGrain, lines,
                [&](int64_t l) {
                  softmaxLine(src + l * length, dst + l * length, length, log);
                  if (nanToZero)
                    zeroNaNs(dst + l * length, length, 1);
                });
    return 0;
  }
  // Lines along another axis are strided: a block of neighbouring lines is
  // processed together so that every pass reads contiguous runs.
  constexpr int64_t kBlock = 256;
  const int64_t blocksPerOuter = (inner + kBlock - 1) / kBlock;
  const int64_t blocks = outer * blocksPerOuter;
  parallelFor(
      threads, lines * length > kParallelGrain, blocks, [&](int64_t blk) {
        const int64_t o = blk / blocksPerOuter;
        const int64_t begin = (blk % blocksPerOuter) * kBlock;
        const int64_t width = inner - begin < kBlock ? inner - begin : kBlock;
        const float *a = src + o * length * inner + begin;
        float *b = dst + o * length * inner + begin;
        float max[kBlock], sum[kBlock];
        for (int64_t j = 0; j < width; ++j) {
          max[j] = -std::numeric_limits<float>::infinity();
          sum[j] = 0.0f;
        }
        for (int64_t i = 0; i < length; ++i)
          for (int64_t j = 0; j < width; ++j)
            max[j] = a[i * inner + j] > max[j] ? a[i * inner + j] : max[j];
        for (int64_t i = 0; i < length; ++i)
          for (int64_t j = 0; j < width; ++j) {
            float e = std::exp(a[i * inner + j] - max[j]);
            sum[j] += e;
            if (!log)
              b[i * inner + j] = e;
          }
        if (log) {
          for (int64_t j = 0; j < width; ++j)
            sum[j] = max[j] + std::log(sum[j]);
          for (int64_t i = 0; i < length; ++i)
            for (int64_t j = 0; j < width; ++j)
              b[i * inner + j] = a[i * inner + j] - sum[j];
        } else {
          for (int64_t j = 0; j < width; ++j)
            sum[j] = 1.0f / sum[j];
          for (int64_t i = 0; i < length; ++i)
            for (int64_t j = 0; j < width; ++j)
              b[i * inner + j] *= sum[j];
        }
        if (nanToZero)
          for (int64_t i = 0; i < length; ++i)
            zeroNaNs(b + i * inner, width, 1);
      });
  return 0;
}

} // namespace

int32_t cleave::cpu::kernels::softmax(CleaveContext *ctx,
                                      const args::Softmax &args) {
  return ::softmax(ctx, "softmax", args.x(), args.y(), args.axis(), false,
                   args.nanToZero() != 0);
}

int32_t cleave::cpu::kernels::log_softmax(CleaveContext *ctx,
                                          const args::LogSoftmax &args) {
  return ::softmax(ctx, "log_softmax", args.x(), args.y(), args.axis(), true,
                   false);
}
