//===- Selection.cu - top-k, arg max/min and cumulative sums --------------===//
//
// The CUDA side of runtime/kernels/cpu/Selection.cpp, with the same orders:
// top-k puts equal elements in input order and NaN above every number; arg
// max/min keep the first extreme element (the last with select_last_index)
// by plain comparisons; integer cumulative sums wrap around.
//
// A tensor is `outer x size x inner` around the axis. Arg max/min and
// cumulative sums give each line to one thread. Top-k gives each element
// one thread that counts the elements ordered before it in its line (its
// rank) and writes it if the rank is below k: no sort and no scratch memory,
// but quadratic in the length of the axis.
//
//===----------------------------------------------------------------------===//

#include "CudaCommon.h"

#include <type_traits>

using namespace cleave::cuda;

namespace {

/// A tensor seen as `outer x size x inner` around one axis.
struct Lines {
  int64_t outer, size, inner;

  __host__ __device__ int64_t count() const { return outer * inner; }
  /// The offset of element 0 of line `line`, for a tensor whose axis has
  /// `axisSize` elements.
  __host__ __device__ int64_t base(int64_t line, int64_t axisSize) const {
    return (line / inner) * axisSize * inner + line % inner;
  }
};

int32_t linesOf(CleaveContext *ctx, const char *kernel, const CleaveTensor &x,
                int64_t axis, Lines &lines) {
  if (axis < 0 || axis >= x.rank)
    return fail(ctx, kernel, "axis %lld is not in [0, %d)", (long long)axis,
                x.rank);
  lines.outer = product(x.shape, 0, static_cast<int>(axis));
  lines.size = x.shape[axis];
  lines.inner = product(x.shape, static_cast<int>(axis) + 1, x.rank);
  return 0;
}

/// The value compared and summed for an element: half types as float.
template <typename T> struct Arith {
  using Type = T;
  static __device__ T of(T x) { return x; }
  static __device__ T back(T x) { return x; }
};
template <> struct Arith<__half> {
  using Type = float;
  static __device__ float of(__half x) { return toFloat(x); }
  static __device__ __half back(float x) { return fromFloat<__half>(x); }
};
template <> struct Arith<__nv_bfloat16> {
  using Type = float;
  static __device__ float of(__nv_bfloat16 x) { return toFloat(x); }
  static __device__ __nv_bfloat16 back(float x) {
    return fromFloat<__nv_bfloat16>(x);
  }
};

template <typename A> __device__ bool isNaN(A x) {
  if constexpr (std::is_floating_point_v<A>)
    return isnan(x);
  return false;
}

/// Whether element (a, i) comes before element (b, j) in top-k order.
template <typename A>
__device__ bool precedes(A a, int64_t i, A b, int64_t j, bool largest) {
  bool aNaN = isNaN(a), bNaN = isNaN(b);
  bool aAbove = aNaN ? !bNaN : (!bNaN && a > b);
  bool bAbove = bNaN ? !aNaN : (!aNaN && b > a);
  bool aFirst = largest ? aAbove : bAbove;
  bool bFirst = largest ? bAbove : aAbove;
  return aFirst || (!bFirst && i < j);
}

template <typename T>
__global__ void topKKernel(const T *x, T *values, int64_t *indices, Lines lines,
                           int64_t k, bool largest) {
  using A = typename Arith<T>::Type;
  CLEAVE_GRID_LOOP(e, lines.count() * lines.size) {
    int64_t line = e / lines.size, i = e % lines.size;
    const T *in = x + lines.base(line, lines.size);
    A v = Arith<T>::of(in[i * lines.inner]);
    int64_t rank = 0;
    for (int64_t j = 0; j < lines.size && rank < k; ++j)
      rank += precedes(Arith<T>::of(in[j * lines.inner]), j, v, i, largest);
    if (rank < k) {
      int64_t at = lines.base(line, k) + rank * lines.inner;
      values[at] = in[i * lines.inner];
      indices[at] = i;
    }
  }
}

template <typename T, bool Max>
__global__ void argExtremeKernel(const T *x, int64_t *y, Lines lines,
                                 bool last) {
  using A = typename Arith<T>::Type;
  CLEAVE_GRID_LOOP(line, lines.count()) {
    const T *in = x + lines.base(line, lines.size);
    A best = Arith<T>::of(in[0]);
    int64_t bestIndex = 0;
    for (int64_t j = 1; j < lines.size; ++j) {
      A v = Arith<T>::of(in[j * lines.inner]);
      bool beats =
          Max ? (last ? v >= best : v > best) : (last ? v <= best : v < best);
      if (beats) {
        best = v;
        bestIndex = j;
      }
    }
    y[line] = bestIndex;
  }
}

/// `a + b`, wrapping around for integers.
template <typename A> __device__ A addWrapping(A a, A b) {
  if constexpr (std::is_integral_v<A>) {
    using U = std::make_unsigned_t<A>;
    return static_cast<A>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return a + b;
  }
}

template <typename T>
__global__ void cumSumKernel(const T *x, T *y, Lines lines, bool exclusive,
                             bool reverse) {
  using A = typename Arith<T>::Type;
  CLEAVE_GRID_LOOP(line, lines.count()) {
    int64_t base = lines.base(line, lines.size);
    A sum = A(0);
    for (int64_t step = 0; step < lines.size; ++step) {
      int64_t j = reverse ? lines.size - 1 - step : step;
      int64_t at = base + j * lines.inner;
      A v = Arith<T>::of(x[at]);
      if (exclusive) {
        y[at] = Arith<T>::back(sum);
        sum = addWrapping(sum, v);
      } else {
        sum = addWrapping(sum, v);
        y[at] = Arith<T>::back(sum);
      }
    }
  }
}

template <bool Max>
int32_t argExtremeEntry(CleaveContext *ctx, const char *kernel,
                        const args::ArgExtreme &args) {
  const CleaveTensor &x = args.x(), &y = args.y();
  Lines lines;
  if (int32_t status = linesOf(ctx, kernel, x, args.axis(), lines))
    return status;
  if (y.dtype != CLEAVE_I64 || numElements(y) != lines.count())
    return fail(ctx, kernel, "Y must be int64 with %lld elements",
                (long long)lines.count());
  if (lines.count() == 0)
    return 0;
  if (lines.size == 0)
    return fail(ctx, kernel, "the axis is empty");
  bool last = args.selectLastIndex() != 0;
  int32_t status = dispatchNumeric(x.dtype, [&](auto type) {
    using T = decltype(type);
    argExtremeKernel<T, Max>
        <<<blocksFor(lines.count()), kThreads, 0, streamOf(ctx)>>>(
            static_cast<const T *>(x.data), static_cast<int64_t *>(y.data),
            lines, last);
    return 0;
  });
  if (status)
    return fail(ctx, kernel, "unsupported element type %d", x.dtype);
  return checkLaunch(ctx, kernel);
}

} // namespace

int32_t cleave::cuda::kernels::topk(CleaveContext *ctx,
                                    const args::TopK &args) {
  const char *kernel = "topk";
  const CleaveTensor &x = args.x(), &values = args.values(),
                     &indices = args.indices();
  Lines lines;
  if (int32_t status = linesOf(ctx, kernel, x, args.axis(), lines))
    return status;
  int64_t k = args.k();
  bool largest = args.largest() != 0;
  if (k < 0 || k > lines.size)
    return fail(ctx, kernel, "k (%lld) is not in [0, %lld]", (long long)k,
                (long long)lines.size);
  if (values.dtype != x.dtype || indices.dtype != CLEAVE_I64 ||
      numElements(values) != lines.count() * k ||
      numElements(indices) != lines.count() * k)
    return fail(ctx, kernel,
                "outputs must be %lld values of the input's type and as many "
                "int64 indices",
                (long long)(lines.count() * k));
  if (lines.count() * k == 0)
    return 0;
  int32_t status = dispatchNumeric(x.dtype, [&](auto type) {
    using T = decltype(type);
    topKKernel<T>
        <<<blocksFor(lines.count() * lines.size), kThreads, 0, streamOf(ctx)>>>(
            static_cast<const T *>(x.data), static_cast<T *>(values.data),
            static_cast<int64_t *>(indices.data), lines, k, largest);
    return 0;
  });
  if (status)
    return fail(ctx, kernel, "unsupported element type %d", x.dtype);
  return checkLaunch(ctx, kernel);
}

int32_t cleave::cuda::kernels::arg_max(CleaveContext *ctx,
                                       const args::ArgExtreme &args) {
  return argExtremeEntry<true>(ctx, "arg_max", args);
}

int32_t cleave::cuda::kernels::arg_min(CleaveContext *ctx,
                                       const args::ArgExtreme &args) {
  return argExtremeEntry<false>(ctx, "arg_min", args);
}

int32_t cleave::cuda::kernels::cumsum(CleaveContext *ctx,
                                      const args::CumSum &args) {
  const char *kernel = "cumsum";
  const CleaveTensor &x = args.x(), &y = args.y();
  Lines lines;
  if (int32_t status = linesOf(ctx, kernel, x, args.axis(), lines))
    return status;
  if (y.dtype != x.dtype || numElements(y) != numElements(x))
    return fail(ctx, kernel, "Y must have the type and size of X");
  if (numElements(x) == 0)
    return 0;
  bool exclusive = args.exclusive() != 0, reverse = args.reverse() != 0;
  int32_t status = dispatchNumeric(x.dtype, [&](auto type) {
    using T = decltype(type);
    cumSumKernel<T><<<blocksFor(lines.count()), kThreads, 0, streamOf(ctx)>>>(
        static_cast<const T *>(x.data), static_cast<T *>(y.data), lines,
        exclusive, reverse);
    return 0;
  });
  if (status)
    return fail(ctx, kernel, "unsupported element type %d", x.dtype);
  return checkLaunch(ctx, kernel);
}
