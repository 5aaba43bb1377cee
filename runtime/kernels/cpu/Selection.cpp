//===- Selection.cpp - top-k, arg max/min and cumulative sums -------------===//
//
// Kernels that walk the lines of one axis: a tensor is `outer x size x
// inner` around the axis, and each of the `outer * inner` lines is strided
// by `inner`. Lines run in parallel over OpenMP threads.
//
// The orders match onnxruntime: top-k puts equal elements in input order
// and NaN above every number; arg max/min keep the first extreme element
// (the last with select_last_index) by plain comparisons, so a NaN wins only
// where it comes first in its line. Integer cumulative sums wrap around.
//
//===----------------------------------------------------------------------===//

#include "KernelSupport.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <type_traits>
#include <vector>

using namespace cleave::cpu;

namespace {

/// A tensor seen as `outer x size x inner` around one axis.
struct Lines {
  int64_t outer, size, inner;

  int64_t count() const { return outer * inner; }
  /// The offset of element 0 of line `line`, for a tensor whose axis has
  /// `axisSize` elements.
  int64_t base(int64_t line, int64_t axisSize) const {
    return (line / inner) * axisSize * inner + line % inner;
  }
};

/// Checks `axis` against `x` and describes its lines.
int32_t linesOf(CleaveContext *ctx, const char *kernel, const CleaveTensor &x,
                int64_t axis, Lines &lines) {
  if (axis < 0 || axis >= x.rank)
    return fail(ctx, kernel, "axis %lld is not in [0, %d)", (long long)axis,
                x.rank);
  lines.outer = product(x.shape, 0, axis);
  lines.size = x.shape[axis];
  lines.inner = product(x.shape, axis + 1, x.rank);
  return 0;
}

/// Calls `f(T())` with the C++ type of a numeric dtype; returns -1 for
/// another.
template <typename F> int32_t dispatchNumeric(int32_t dtype, F &&f) {
  switch (dtype) {
  case CLEAVE_F32:
    return f(float());
  case CLEAVE_F64:
    return f(double());
  case CLEAVE_I8:
    return f(int8_t());
  case CLEAVE_I16:
    return f(int16_t());
  case CLEAVE_I32:
    return f(int32_t());
  case CLEAVE_I64:
    return f(int64_t());
  case CLEAVE_U8:
    return f(uint8_t());
  case CLEAVE_U16:
    return f(uint16_t());
  case CLEAVE_U32:
    return f(uint32_t());
  case CLEAVE_U64:
    return f(uint64_t());
  default:
    return -1;
  }
}

int32_t unsupported(CleaveContext *ctx, const char *kernel, int32_t dtype) {
  return fail(ctx, kernel,
              "dtype %d is not supported (floating and integer types other "
              "than float16 and bfloat16)",
              dtype);
}

template <typename T> bool isNaN(T x) {
  if constexpr (std::is_floating_point_v<T>)
    return std::isnan(x);
  return false;
}

/// The order of top-k: NaN above every number.
template <typename T> bool lessWithNaNLargest(T a, T b) {
  if (isNaN(a))
    return false;
  if (isNaN(b))
    return true;
  return a < b;
}

//===----------------------------------------------------------------------===//
// Top-k
//===----------------------------------------------------------------------===//

template <typename T>
void topK(const Lines &lines, int64_t k, bool largest, const T *x, T *values,
          int64_t *indices, int threads) {
  const int64_t work = lines.count() * lines.size;
  parallelRegion(threads, work > kParallelGrain, [&] {
    std::vector<int64_t> order(lines.size);
#pragma omp for
    for (int64_t line = 0; line < lines.count(); ++line) {
      const T *in = x + lines.base(line, lines.size);
      const int64_t stride = lines.inner;
      // Ties go to the lower index, which makes the order total and the
      // (unstable) partial sort deterministic.
      auto before = [&](int64_t a, int64_t b) {
        T va = in[a * stride], vb = in[b * stride];
        bool aFirst =
            largest ? lessWithNaNLargest(vb, va) : lessWithNaNLargest(va, vb);
        bool bFirst =
            largest ? lessWithNaNLargest(va, vb) : lessWithNaNLargest(vb, va);
        return aFirst || (!bFirst && a < b);
      };
      std::iota(order.begin(), order.end(), int64_t(0));
      std::partial_sort(order.begin(), order.begin() + k, order.end(), before);
      const int64_t out = lines.base(line, k);
      for (int64_t j = 0; j < k; ++j) {
        values[out + j * stride] = in[order[j] * stride];
        indices[out + j * stride] = order[j];
      }
    }
  });
}

//===----------------------------------------------------------------------===//
// Arg max / arg min
//===----------------------------------------------------------------------===//

template <typename T, bool Max>
void argExtreme(const Lines &lines, bool last, const T *x, int64_t *y,
                int threads) {
  const int64_t work = lines.count() * lines.size;
  parallelFor(threads, work > kParallelGrain, lines.count(), [&](int64_t line) {
    const T *in = x + lines.base(line, lines.size);
    T best = in[0];
    int64_t bestIndex = 0;
    for (int64_t j = 1; j < lines.size; ++j) {
      T v = in[j * lines.inner];
      bool beats =
          Max ? (last ? v >= best : v > best) : (last ? v <= best : v < best);
      if (beats) {
        best = v;
        bestIndex = j;
      }
    }
    y[line] = bestIndex;
  });
}

template <bool Max>
int32_t argExtremeKernel(CleaveContext *ctx, const char *kernel,
                         const args::ArgExtreme &args) {
  const CleaveTensor &x = args.x();
  CleaveTensor &y = args.y();
  Lines lines;
  if (int32_t status = linesOf(ctx, kernel, x, args.axis(), lines))
    return status;
  if (y.dtype != CLEAVE_I64)
    return fail(ctx, kernel, "Y must be int64, not dtype %d", y.dtype);
  if (numElements(y) != lines.count())
    return fail(ctx, kernel, "Y has %lld elements, expected %lld",
                (long long)numElements(y), (long long)lines.count());
  if (lines.count() == 0)
    return 0;
  if (lines.size == 0)
    return fail(ctx, kernel, "the axis is empty");
  const bool last = args.selectLastIndex() != 0;
  const int threads = numThreads(ctx);
  int32_t status = dispatchNumeric(x.dtype, [&](auto type) {
    using T = decltype(type);
    argExtreme<T, Max>(lines, last, static_cast<const T *>(x.data),
                       static_cast<int64_t *>(y.data), threads);
    return 0;
  });
  return status < 0 ? unsupported(ctx, kernel, x.dtype) : status;
}

//===----------------------------------------------------------------------===//
// Cumulative sums
//===----------------------------------------------------------------------===//

/// `a + b`, wrapping around for integers.
template <typename T> T addWrapping(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return a + b;
  }
}

template <typename T>
void cumSum(const Lines &lines, bool exclusive, bool reverse, const T *x, T *y,
            int threads) {
  const int64_t work = lines.count() * lines.size;
  parallelFor(threads, work > kParallelGrain, lines.count(), [&](int64_t line) {
    const int64_t base = lines.base(line, lines.size);
    T sum = T(0);
    for (int64_t step = 0; step < lines.size; ++step) {
      const int64_t j = reverse ? lines.size - 1 - step : step;
      const int64_t at = base + j * lines.inner;
      // Read before writing: y may be x.
      const T v = x[at];
      if (exclusive) {
        y[at] = sum;
        sum = addWrapping(sum, v);
      } else {
        sum = addWrapping(sum, v);
        y[at] = sum;
      }
    }
  });
}

} // namespace

int32_t cleave::cpu::kernels::topk(CleaveContext *ctx, const args::TopK &args) {
  const char *kernel = "topk";
  const CleaveTensor &x = args.x();
  CleaveTensor &values = args.values(), &indices = args.indices();
  Lines lines;
  if (int32_t status = linesOf(ctx, kernel, x, args.axis(), lines))
    return status;
  const int64_t k = args.k();
  const bool largest = args.largest() != 0;
  if (k < 0 || k > lines.size)
    return fail(ctx, kernel, "k (%lld) is not in [0, %lld]", (long long)k,
                (long long)lines.size);
  if (values.dtype != x.dtype || indices.dtype != CLEAVE_I64)
    return fail(ctx, kernel,
                "values must have the input's dtype and indices int64");
  if (numElements(values) != lines.count() * k ||
      numElements(indices) != lines.count() * k)
    return fail(ctx, kernel, "outputs must have %lld elements",
                (long long)(lines.count() * k));
  if (lines.count() * k == 0)
    return 0;
  const int threads = numThreads(ctx);
  int32_t status = dispatchNumeric(x.dtype, [&](auto type) {
    using T = decltype(type);
    topK<T>(lines, k, largest, static_cast<const T *>(x.data),
            static_cast<T *>(values.data), static_cast<int64_t *>(indices.data),
            threads);
    return 0;
  });
  return status < 0 ? unsupported(ctx, kernel, x.dtype) : status;
}

int32_t cleave::cpu::kernels::arg_max(CleaveContext *ctx,
                                      const args::ArgExtreme &args) {
  return argExtremeKernel<true>(ctx, "arg_max", args);
}

int32_t cleave::cpu::kernels::arg_min(CleaveContext *ctx,
                                      const args::ArgExtreme &args) {
  return argExtremeKernel<false>(ctx, "arg_min", args);
}

int32_t cleave::cpu::kernels::cumsum(CleaveContext *ctx,
                                     const args::CumSum &args) {
  const char *kernel = "cumsum";
  const CleaveTensor &x = args.x();
  CleaveTensor &y = args.y();
  Lines lines;
  if (int32_t status = linesOf(ctx, kernel, x, args.axis(), lines))
    return status;
  if (y.dtype != x.dtype || numElements(y) != numElements(x))
    return fail(ctx, kernel, "Y must have the type and size of X");
  if (numElements(x) == 0)
    return 0;
  const bool exclusive = args.exclusive() != 0;
  const bool reverse = args.reverse() != 0;
  const int threads = numThreads(ctx);
  int32_t status = dispatchNumeric(x.dtype, [&](auto type) {
    using T = decltype(type);
    cumSum<T>(lines, exclusive, reverse, static_cast<const T *>(x.data),
              static_cast<T *>(y.data), threads);
    return 0;
  });
  return status < 0 ? unsupported(ctx, kernel, x.dtype) : status;
}
