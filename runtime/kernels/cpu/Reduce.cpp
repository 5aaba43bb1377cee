//===- Reduce.cpp - reductions over a set of axes -------------------------===//
//
// The input's dimensions are coalesced into alternating runs of kept and
// reduced dimensions (size-1 dimensions dropped). The usual shapes then take
// a contiguous path: reducing the trailing run (rows), or one run between
// kept ones (accumulating whole inner rows at a time); any other pattern
// walks each output's reduced elements.
//
// float32, float64, int32 and int64 are supported; the mean of integers is
// an integer division, as onnxruntime computes it. Sums, means, products and
// sums of squares of float32 accumulate in float64: a mean over tens of
// thousands of elements (the batch statistics of a normalisation in
// training) would otherwise lose digits with every addition.
//
//===----------------------------------------------------------------------===//

#include "KernelSupport.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

using namespace cleave::cpu;

namespace {

/// The type a sum of `T` accumulates in.
template <typename T> struct Wide { using type = T; };
template <> struct Wide<float> { using type = double; };

template <typename T> struct Sum {
  using Acc = typename Wide<T>::type;
  static Acc init() { return Acc(0); }
  static void add(Acc &acc, T x) { acc += x; }
  static T finish(Acc acc, int64_t) { return static_cast<T>(acc); }
};
template <typename T> struct Mean : Sum<T> {
  using typename Sum<T>::Acc;
  static T finish(Acc acc, int64_t count) {
    if (std::numeric_limits<T>::is_integer && count == 0)
      return T(0);
    return static_cast<T>(acc / static_cast<Acc>(count));
  }
};
template <typename T> struct Max {
  using Acc = T;
  static T init() {
    return std::numeric_limits<T>::has_infinity
               ? -std::numeric_limits<T>::infinity()
               : std::numeric_limits<T>::lowest();
  }
  static void add(T &acc, T x) { acc = x > acc ? x : acc; }
  static T finish(T acc, int64_t) { return acc; }
};
template <typename T> struct Min {
  using Acc = T;
  static T init() {
    return std::numeric_limits<T>::has_infinity
               ? std::numeric_limits<T>::infinity()
               : std::numeric_limits<T>::max();
  }
  static void add(T &acc, T x) { acc = x < acc ? x : acc; }
  static T finish(T acc, int64_t) { return acc; }
};
template <typename T> struct Prod {
  using Acc = typename Wide<T>::type;
  static Acc init() { return Acc(1); }
  static void add(Acc &acc, T x) { acc *= x; }
  static T finish(Acc acc, int64_t) { return static_cast<T>(acc); }
};
template <typename T> struct SumSquare {
  using Acc = typename Wide<T>::type;
  static Acc init() { return Acc(0); }
  static void add(Acc &acc, T x) { acc += static_cast<Acc>(x) * x; }
  static T finish(Acc acc, int64_t) { return static_cast<T>(acc); }
};
template <typename T> struct L2 : SumSquare<T> {
  using typename SumSquare<T>::Acc;
  static T finish(Acc acc, int64_t) {
    return static_cast<T>(std::sqrt(static_cast<double>(acc)));
  }
};

/// The input's dimensions as alternating runs of kept and reduced ones.
struct Runs {
  int count = 0;
  int64_t size[CLEAVE_MAX_RANK];
  bool reduced[CLEAVE_MAX_RANK];
};

template <typename T, template <typename> class Op>
void reduce(const Runs &runs, int64_t reducedCount, int64_t outCount,
            const T *x, T *y, int threads) {
  using R = Op<T>;
  const int64_t work = outCount * reducedCount;
  // With one element reduced per output, outputs follow the input's order.
  if (reducedCount == 1 || runs.count == 0 ||
      (runs.count == 1 && runs.reduced[0]) ||
      (runs.count == 2 && runs.reduced[1])) {
    // Rows of `reducedCount` contiguous elements.
    parallelFor(threads, work > kParallelGrain, outCount, [&](int64_t o) {
      const T *row = x + o * reducedCount;
      typename R::Acc acc = R::init();
      for (int64_t i = 0; i < reducedCount; ++i)
        R::add(acc, row[i]);
      y[o] = R::finish(acc, reducedCount);
    });
    return;
  }
  if ((runs.count == 2 && runs.reduced[0]) ||
      (runs.count == 3 && runs.reduced[1])) {
    // outer x reduced x inner: accumulate whole inner rows, in chunks so
    // that a single outer row still spreads over threads.
    const int64_t inner = runs.size[runs.count - 1];
    const int64_t outer = outCount / inner;
    constexpr int64_t kChunk = 1024;
    const int64_t chunks = (inner + kChunk - 1) / kChunk;
    parallelFor(
        threads, work > kParallelGrain, outer * chunks, [&](int64_t task) {
          const int64_t o = task / chunks, begin = (task % chunks) * kChunk;
          const int64_t end = begin + kChunk < inner ? begin + kChunk : inner;
          typename R::Acc acc[kChunk];
          for (int64_t i = 0; i < end - begin; ++i)
            acc[i] = R::init();
          const T *base = x + o * reducedCount * inner + begin;
          for (int64_t r = 0; r < reducedCount; ++r)
            for (int64_t i = 0; i < end - begin; ++i)
              R::add(acc[i], base[r * inner + i]);
          T *out = y + o * inner + begin;
          for (int64_t i = 0; i < end - begin; ++i)
            out[i] = R::finish(acc[i], reducedCount);
        });
    return;
  }
  // Any other pattern: each output walks its reduced elements.
  int64_t strides[CLEAVE_MAX_RANK];
  rowMajorStrides(runs.size, runs.count, strides);
  parallelFor(threads, work > kParallelGrain, outCount, [&](int64_t o) {
    int64_t base = 0, rest = o;
    for (int d = runs.count - 1; d >= 0; --d) {
      if (runs.reduced[d])
        continue;
      base += (rest % runs.size[d]) * strides[d];
      rest /= runs.size[d];
    }
    typename R::Acc acc = R::init();
    for (int64_t r = 0; r < reducedCount; ++r) {
      int64_t offset = base, left = r;
      for (int d = runs.count - 1; d >= 0; --d) {
        if (!runs.reduced[d])
          continue;
        offset += (left % runs.size[d]) * strides[d];
        left /= runs.size[d];
      }
      R::add(acc, x[offset]);
    }
    y[o] = R::finish(acc, reducedCount);
  });
}

template <template <typename> class Op>
int32_t reduceKernel(CleaveContext *ctx, const char *kernel,
                     const args::Reduce &args) {
  const CleaveTensor &x = args.x();
  CleaveTensor &y = args.y();
  if (x.dtype != y.dtype)
    return fail(ctx, kernel, "X and Y have different dtypes");
  const args::IntList axes = args.axes();
  bool reducedAxis[CLEAVE_MAX_RANK] = {false};
  for (int64_t i = 0; i < axes.size(); ++i) {
    int64_t axis = axes[i];
    if (axis < 0 || axis >= x.rank || (i > 0 && axis <= axes[i - 1]))
      return fail(ctx, kernel, "axes must be sorted, unique and in [0, %d)",
                  x.rank);
    reducedAxis[axis] = true;
  }
  Runs runs;
  int64_t reducedCount = 1, outCount = 1;
  for (int32_t d = 0; d < x.rank; ++d) {
    (reducedAxis[d] ? reducedCount : outCount) *= x.shape[d];
    if (x.shape[d] == 1)
      continue;
    if (runs.count > 0 && runs.reduced[runs.count - 1] == reducedAxis[d]) {
      runs.size[runs.count - 1] *= x.shape[d];
      continue;
    }
    runs.size[runs.count] = x.shape[d];
    runs.reduced[runs.count] = reducedAxis[d];
    ++runs.count;
  }
  if (numElements(y) != outCount)
    return fail(ctx, kernel, "Y has %lld elements, expected %lld",
                (long long)numElements(y), (long long)outCount);
  size_t elementBytes = cleave_dtype_size(x.dtype);
  // Reducing no axis folds one element per output: the input itself, but
  // for the reductions that square their elements first.
  constexpr bool squares = std::is_same_v<Op<float>, SumSquare<float>> ||
                           std::is_same_v<Op<float>, L2<float>>;
  if (axes.size() == 0 && elementBytes != 0 && !squares) {
    if (y.data != x.data)
      std::memcpy(y.data, x.data, elementBytes * outCount);
    return 0;
  }
  if (outCount == 0)
    return 0;
  const int threads = numThreads(ctx);
  switch (x.dtype) {
  case CLEAVE_F32:
    reduce<float, Op>(runs, reducedCount, outCount,
                      static_cast<const float *>(x.data),
                      static_cast<float *>(y.data), threads);
    return 0;
  case CLEAVE_F64:
    reduce<double, Op>(runs, reducedCount, outCount,
                       static_cast<const double *>(x.data),
                       static_cast<double *>(y.data), threads);
    return 0;
  case CLEAVE_I32:
    reduce<int32_t, Op>(runs, reducedCount, outCount,
                        static_cast<const int32_t *>(x.data),
                        static_cast<int32_t *>(y.data), threads);
    return 0;
  case CLEAVE_I64:
    reduce<int64_t, Op>(runs, reducedCount, outCount,
                        static_cast<const int64_t *>(x.data),
                        static_cast<int64_t *>(y.data), threads);
    return 0;
  case CLEAVE_U8:
  case CLEAVE_BOOL:
    // Booleans are bytes 0 and 1: max is "any", min is "all".
    reduce<uint8_t, Op>(runs, reducedCount, outCount,
                        static_cast<const uint8_t *>(x.data),
                        static_cast<uint8_t *>(y.data), threads);
    return 0;
  default:
    return fail(ctx, kernel,
                "dtype %d is not supported (float32, float64, int32, int64, "
                "uint8, bool)",
                x.dtype);
  }
}

} // namespace

#define CLEAVE_REDUCE_KERNEL(name, op)                                         \
  int32_t cleave::cpu::kernels::name(CleaveContext *ctx,                       \
                                     const args::Reduce &args) {               \
    return reduceKernel<op>(ctx, #name, args);                                 \
  }

CLEAVE_REDUCE_KERNEL(reduce_sum, Sum)
CLEAVE_REDUCE_KERNEL(reduce_mean, Mean)
CLEAVE_REDUCE_KERNEL(reduce_max, Max)
CLEAVE_REDUCE_KERNEL(reduce_min, Min)
CLEAVE_REDUCE_KERNEL(reduce_prod, Prod)
CLEAVE_REDUCE_KERNEL(reduce_l2, L2)
CLEAVE_REDUCE_KERNEL(reduce_sum_square, SumSquare)
