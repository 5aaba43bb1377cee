//===- DataMovement.cpp - kernels that move elements without arithmetic ---===//
//
// Transpose, concat, split, slice, gather, pad, tile, expand and copy work on
// any element type: they move elements of cleave_dtype_size bytes. Slice,
// pad, tile and expand share one routine, a copy through per-dimension index
// maps (output position -> input position, or -1 for the pad value), which
// copies contiguous rows with memcpy where the last map allows.
//
//===----------------------------------------------------------------------===//

#include "KernelSupport.h"

#include "cleave/rt/Scalar.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#if defined(__AVX__) || defined(__SSE2__)
#include <immintrin.h>
#endif

using namespace cleave::cpu;

namespace {

/// Copies one element of `size` bytes (1, 2, 4 or 8).
inline void copyElement(void *dst, const void *src, size_t size) {
  switch (size) {
  case 1:
    *static_cast<uint8_t *>(dst) = *static_cast<const uint8_t *>(src);
    return;
  case 2:
    std::memcpy(dst, src, 2);
    return;
  case 4:
    std::memcpy(dst, src, 4);
    return;
  case 8:
    std::memcpy(dst, src, 8);
    return;
  default:
    std::memcpy(dst, src, size);
  }
}

/// Calls `body` with an unsigned integer type of `size` bytes, so that loops
/// over elements compile to plain loads and stores.
template <typename Body> void withElementType(size_t size, Body &&body) {
  switch (size) {
  case 1:
    body(uint8_t{});
    return;
  case 2:
    body(uint16_t{});
    return;
  case 4:
    body(uint32_t{});
    return;
  default:
    body(uint64_t{});
    return;
  }
}

/// `value` as one element of `dtype`, in `bytes` (8 at most).
bool encodeScalar(int32_t dtype, double value, unsigned char *bytes) {
  auto store = [&](auto v) { std::memcpy(bytes, &v, sizeof(v)); };
  switch (dtype) {
  case CLEAVE_F32:
    store(static_cast<float>(value));
    return true;
  case CLEAVE_F64:
    store(value);
    return true;
  case CLEAVE_F16:
    store(cl::float16_bits(static_cast<float>(value)));
    return true;
  case CLEAVE_BF16:
    store(cl::bfloat16_bits(static_cast<float>(value)));
    return true;
  case CLEAVE_I64:
    store(static_cast<int64_t>(value));
    return true;
  case CLEAVE_I32:
    store(static_cast<int32_t>(value));
    return true;
  case CLEAVE_I16:
    store(static_cast<int16_t>(value));
    return true;
  case CLEAVE_I8:
    store(static_cast<int8_t>(value));
    return true;
  case CLEAVE_U8:
    store(static_cast<uint8_t>(value));
    return true;
  case CLEAVE_BOOL:
    store(static_cast<uint8_t>(value != 0.0));
    return true;
  case CLEAVE_U16:
    store(static_cast<uint16_t>(value));
    return true;
  case CLEAVE_U32:
    store(static_cast<uint32_t>(value));
    return true;
  case CLEAVE_U64:
    store(static_cast<uint64_t>(value));
    return true;
  default:
    return false;
  }
}

/// Per output dimension, the input position each output position reads
/// (-1: the fill value).
using IndexMaps = std::vector<std::vector<int64_t>>;

/// y[o...] = x[maps[0][o0], ..., maps[r-1][o_{r-1}]], or `fill` where a map
/// says -1. x and y have the same rank.
void mappedCopy(const CleaveTensor &x, CleaveTensor &y, size_t size,
                const IndexMaps &maps, const unsigned char *fill, int threads) {
  const int32_t rank = y.rank;
  const unsigned char *src = static_cast<const unsigned char *>(x.data);
  unsigned char *dst = static_cast<unsigned char *>(y.data);
  if (rank == 0) {
    copyElement(dst, src, size);
    return;
  }
  int64_t inStrides[CLEAVE_MAX_RANK];
  rowMajorStrides(x.shape, x.rank, inStrides);
  const int64_t width = y.shape[rank - 1];
  const int64_t rows = product(y.shape, 0, rank - 1);
  if (width == 0 || rows == 0)
    return;
  const std::vector<int64_t> &last = maps[rank - 1];
  bool contiguous = last[0] >= 0;
  for (int64_t i = 1; i < width && contiguous; ++i)
    contiguous = last[i] == last[0] + i;

  parallelFor(threads, rows * width > kParallelGrain, rows, [&](int64_t row) {
    int64_t offset = 0, rest = row;
    bool filled = false;
    for (int32_t d = rank - 2; d >= 0; --d) {
      int64_t position = maps[d][rest % y.shape[d]];
      rest /= y.shape[d];
      if (position < 0)
        filled = true;
      offset += position * inStrides[d];
    }
    unsigned char *line = dst + row * width * size;
    if (filled) {
      for (int64_t i = 0; i < width; ++i)
        copyElement(line + i * size, fill, size);
    } else if (contiguous) {
      std::memcpy(line, src + (offset + last[0]) * size, width * size);
    } else {
      withElementType(size, [&](auto element) {
        using T = decltype(element);
        const T *in = reinterpret_cast<const T *>(src) + offset;
        T *out = reinterpret_cast<T *>(line);
        T value{};
        if (fill)
          std::memcpy(&value, fill, sizeof(T));
        for (int64_t i = 0; i < width; ++i)
          out[i] = last[i] >= 0 ? in[last[i]] : value;
      });
    }
  });
}

int32_t checkSameDType(CleaveContext *ctx, const char *kernel,
                       const CleaveTensor &x, const CleaveTensor &y) {
  if (x.dtype != y.dtype)
    return fail(ctx, kernel, "input dtype %d differs from output dtype %d",
                x.dtype, y.dtype);
  return 0;
}

/// The side of the square blocks of 4-byte elements that transposeBlock
/// moves with vector shuffles: one register per row.
#if defined(__AVX__)
constexpr int64_t kBlock = 8;
#else
constexpr int64_t kBlock = 4;
#endif

/// Writes the kBlock x kBlock block of 4-byte elements at `from` (rows
/// `fromStride` elements apart) transposed to `to` (rows `toStride` apart).
/// Shuffles move bits, so any 4-byte type passes through unchanged.
inline void transposeBlock(const uint32_t *from, int64_t fromStride,
                           uint32_t *to, int64_t toStride) {
  const float *in = reinterpret_cast<const float *>(from);
  float *out = reinterpret_cast<float *>(to);
#if defined(__AVX__)
  __m256 r[8], t[8];
  for (int k = 0; k < 8; ++k)
    r[k] = _mm256_loadu_ps(in + k * fromStride);
  // Interleave pairs of rows, then pairs of pairs: each 128-bit lane then
  // holds a 4x4 block transposed; the last step swaps the lanes across.
  for (int k = 0; k < 8; k += 2) {
    t[k] = _mm256_unpacklo_ps(r[k], r[k + 1]);
    t[k + 1] = _mm256_unpackhi_ps(r[k], r[k + 1]);
  }
  for (int k = 0; k < 8; k += 4) {
    r[k] = _mm256_shuffle_ps(t[k], t[k + 2], 0x44);
    r[k + 1] = _mm256_shuffle_ps(t[k], t[k + 2], 0xEE);
    r[k + 2] = _mm256_shuffle_ps(t[k + 1], t[k + 3], 0x44);
    r[k + 3] = _mm256_shuffle_ps(t[k + 1], t[k + 3], 0xEE);
  }
  for (int k = 0; k < 4; ++k) {
    _mm256_storeu_ps(out + k * toStride,
                     _mm256_permute2f128_ps(r[k], r[k + 4], 0x20));
    _mm256_storeu_ps(out + (k + 4) * toStride,
                     _mm256_permute2f128_ps(r[k], r[k + 4], 0x31));
  }
#else
  __m128 r0 = _mm_loadu_ps(in), r1 = _mm_loadu_ps(in + fromStride),
         r2 = _mm_loadu_ps(in + 2 * fromStride),
         r3 = _mm_loadu_ps(in + 3 * fromStride);
  _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
  _mm_storeu_ps(out, r0);
  _mm_storeu_ps(out + toStride, r1);
  _mm_storeu_ps(out + 2 * toStride, r2);
  _mm_storeu_ps(out + 3 * toStride, r3);
#endif
}

} // namespace

//===----------------------------------------------------------------------===//
// Transpose
//===----------------------------------------------------------------------===//

int32_t cleave::cpu::kernels::transpose(CleaveContext *ctx,
                                        const args::Transpose &args) {
  const char *kernel = "transpose";
  const CleaveTensor &x = args.x();
  CleaveTensor &y = args.y();
  if (checkSameDType(ctx, kernel, x, y))
    return 1;
  size_t size = elementSize(ctx, kernel, x);
  if (size == 0)
    return 1;
  const int32_t rank = x.rank;
  bool seen[CLEAVE_MAX_RANK] = {false};
  for (int32_t d = 0; d < rank; ++d) {
    int64_t p = args.perm()[d];
    if (p < 0 || p >= rank || seen[p])
      return fail(ctx, kernel, "perm is not a permutation of [0, %d)", rank);
    seen[p] = true;
    if (y.rank != rank || y.shape[d] != x.shape[p])
      return fail(ctx, kernel, "Y's shape is not X's permuted");
  }
  const int64_t total = numElements(x);
  if (total == 0)
    return 0;

  // Coalesce: drop size-1 dimensions and merge neighbouring output
  // dimensions that are also one contiguous run of the input.
  int64_t inStrides[CLEAVE_MAX_RANK];
  rowMajorStrides(x.shape, rank, inStrides);
  int32_t r = 0;
  int64_t shape[CLEAVE_MAX_RANK], stride[CLEAVE_MAX_RANK];
  for (int32_t d = 0; d < rank; ++d) {
    int64_t p = args.perm()[d];
    if (x.shape[p] == 1)
      continue;
    if (r > 0 && stride[r - 1] == inStrides[p] * x.shape[p]) {
      shape[r - 1] *= x.shape[p];
      stride[r - 1] = inStrides[p];
    } else {
      shape[r] = x.shape[p];
      stride[r] = inStrides[p];
      ++r;
    }
  }
  const unsigned char *src = static_cast<const unsigned char *>(x.data);
  unsigned char *dst = static_cast<unsigned char *>(y.data);
  const int threads = numThreads(ctx);
  if (r <= 1) {
    std::memcpy(dst, src, total * size);
    return 0;
  }
  int64_t outStrides[CLEAVE_MAX_RANK];
  rowMajorStrides(shape, r, outStrides);
  if (stride[r - 1] == 1) {
    // The innermost run stays contiguous: copy it whole.
    const int64_t width = shape[r - 1];
    const int64_t rows = total / width;
    parallelFor(threads, total > kParallelGrain, rows, [&](int64_t row) {
      int64_t offset = 0, rest = row;
      for (int32_t d = r - 2; d >= 0; --d) {
        offset += (rest % shape[d]) * stride[d];
        rest /= shape[d];
      }
      std::memcpy(dst + row * width * size, src + offset * size, width * size);
    });
    return 0;
  }
  // The input's innermost dimension moved to output dimension `p`: copy in
  // square tiles of (p, last) so that reads and writes both stay in cache.
  int32_t p = 0;
  while (stride[p] != 1)
    ++p;
  const int32_t l = r - 1;
  constexpr int64_t kTile = 32;
  const int64_t tilesP = (shape[p] + kTile - 1) / kTile;
  const int64_t tilesL = (shape[l] + kTile - 1) / kTile;
  const int64_t outer = total / (shape[p] * shape[l]);
  withElementType(size, [&](auto element) {
    using T = decltype(element);
    const T *in = reinterpret_cast<const T *>(src);
    T *outData = reinterpret_cast<T *>(dst);
    parallelFor(threads, total > kParallelGrain, outer * tilesP,
                [&](int64_t task) {
                  int64_t o = task / tilesP, tp = task % tilesP;
                  int64_t inBase = 0, outBase = 0, rest = o;
                  for (int32_t d = r - 1; d >= 0; --d) {
                    if (d == p || d == l)
                      continue;
                    int64_t coord = rest % shape[d];
                    rest /= shape[d];
                    inBase += coord * stride[d];
                    outBase += coord * outStrides[d];
                  }
                  const int64_t pBegin = tp * kTile,
                                pEnd = std::min(shape[p], pBegin + kTile);
                  for (int64_t tl = 0; tl < tilesL; ++tl) {
                    const int64_t lBegin = tl * kTile,
                                  lEnd = std::min(shape[l], lBegin + kTile);
                    int64_t iBlocked = pBegin, jBlocked = lBegin;
                    if constexpr (sizeof(T) == 4) {
                      // Whole blocks by shuffles; the ragged edges of the
                      // tile element by element below.
                      iBlocked = pBegin + (pEnd - pBegin) / kBlock * kBlock;
                      jBlocked = lBegin + (lEnd - lBegin) / kBlock * kBlock;
                      for (int64_t i = pBegin; i < iBlocked; i += kBlock)
                        for (int64_t j = lBegin; j < jBlocked; j += kBlock)
                          transposeBlock(
                              in + inBase + i + j * stride[l], stride[l],
                              outData + outBase + i * outStrides[p] + j,
                              outStrides[p]);
                    }
                    for (int64_t i = pBegin; i < pEnd; ++i) {
                      const T *from = in + inBase + i;
                      T *to = outData + outBase + i * outStrides[p];
                      for (int64_t j = i < iBlocked ? jBlocked : lBegin;
                           j < lEnd; ++j)
                        to[j] = from[j * stride[l]];
                    }
                  }
                });
  });
  return 0;
}

//===----------------------------------------------------------------------===//
// Concat and split
//===----------------------------------------------------------------------===//

namespace {

/// Checks that `part` matches `whole` except along `axis`.
bool matchesExceptAxis(const CleaveTensor &part, const CleaveTensor &whole,
                       int64_t axis) {
  if (part.rank != whole.rank || part.dtype != whole.dtype)
    return false;
  for (int32_t d = 0; d < whole.rank; ++d)
    if (d != axis && part.shape[d] != whole.shape[d])
      return false;
  return true;
}

/// Concat (or, with `split`, its inverse) of `parts` along `axis` of
/// `whole`.
int32_t joinOrSplit(CleaveContext *ctx, const char *kernel,
                    const CleaveTensor *parts, int32_t numParts,
                    const CleaveTensor &whole, int64_t axis, bool split) {
  if (axis < 0 || axis >= whole.rank)
    return fail(ctx, kernel, "axis %lld is out of range for rank %d",
                (long long)axis, whole.rank);
  size_t size = elementSize(ctx, kernel, whole);
  if (size == 0)
    return 1;
  int64_t sum = 0;
  std::vector<int64_t> chunk(numParts), start(numParts);
  const int64_t inner = product(whole.shape, axis + 1, whole.rank);
  for (int32_t i = 0; i < numParts; ++i) {
    if (!matchesExceptAxis(parts[i], whole, axis))
      return fail(ctx, kernel, "part %d does not match along the other axes",
                  i);
    start[i] = sum * inner * size;
    chunk[i] = parts[i].shape[axis] * inner * size;
    sum += parts[i].shape[axis];
  }
  if (sum != whole.shape[axis])
    return fail(ctx, kernel, "the parts sum to %lld along axis %lld, not %lld",
                (long long)sum, (long long)axis, (long long)whole.shape[axis]);
  const int64_t outer = product(whole.shape, 0, axis);
  const int64_t wholeRow = whole.shape[axis] * inner * size;
  unsigned char *wholeData = static_cast<unsigned char *>(whole.data);
  const int threads = numThreads(ctx);
  parallelFor(
      threads, outer * wholeRow > kParallelGrain * 4, outer, [&](int64_t o) {
        for (int32_t i = 0; i < numParts; ++i) {
          unsigned char *part = static_cast<unsigned char *>(parts[i].data);
          if (chunk[i] == 0)
            continue;
          if (split)
            std::memcpy(part + o * chunk[i],
                        wholeData + o * wholeRow + start[i], chunk[i]);
          else
            std::memcpy(wholeData + o * wholeRow + start[i],
                        part + o * chunk[i], chunk[i]);
        }
      });
  return 0;
}

} // namespace

int32_t cleave::cpu::kernels::concat(CleaveContext *ctx,
                                     const args::Concat &args) {
  return joinOrSplit(ctx, "concat", args.inputs().data(),
                     static_cast<int32_t>(args.inputs().size()), args.y(),
                     args.axis(), false);
}

int32_t cleave::cpu::kernels::split(CleaveContext *ctx,
                                    const args::Split &args) {
  return joinOrSplit(ctx, "split", args.outputs().data(),
                     static_cast<int32_t>(args.outputs().size()), args.x(),
                     args.axis(), true);
}

//===----------------------------------------------------------------------===//
// Slice, pad, tile, expand: copies through index maps
//===----------------------------------------------------------------------===//

int32_t cleave::cpu::kernels::slice(CleaveContext *ctx,
                                    const args::Slice &args) {
  const char *kernel = "slice";
  const CleaveTensor &x = args.x();
  CleaveTensor &y = args.y();
  if (checkSameDType(ctx, kernel, x, y))
    return 1;
  size_t size = elementSize(ctx, kernel, x);
  if (size == 0)
    return 1;
  const int32_t rank = x.rank;
  if (y.rank != rank)
    return fail(ctx, kernel, "X and Y must have the same rank");
  const int64_t *starts = args.starts().data(), *ends = args.ends().data(),
                *steps = args.steps().data();
  IndexMaps maps(rank);
  for (int32_t d = 0; d < rank; ++d) {
    int64_t start = starts[d], end = ends[d], step = steps[d];
    if (step == 0)
      return fail(ctx, kernel, "step of dimension %d is zero", d);
    int64_t length = step > 0 ? (end - start + step - 1) / step
                              : (start - end - step - 1) / (-step);
    length = std::max<int64_t>(length, 0);
    if (length != y.shape[d])
      return fail(ctx, kernel,
                  "dimension %d of Y is %lld, the slice selects "
                  "%lld",
                  d, (long long)y.shape[d], (long long)length);
    if (length > 0) {
      int64_t lastIndex = start + (length - 1) * step;
      if (start < 0 || start >= x.shape[d] || lastIndex < 0 ||
          lastIndex >= x.shape[d])
        return fail(ctx, kernel, "dimension %d: the slice leaves [0, %lld)", d,
                    (long long)x.shape[d]);
    }
    maps[d].resize(length);
    for (int64_t i = 0; i < length; ++i)
      maps[d][i] = start + i * step;
  }
  if (numElements(y) == 0)
    return 0;
  mappedCopy(x, y, size, maps, nullptr, numThreads(ctx));
  return 0;
}

int32_t cleave::cpu::kernels::pad(CleaveContext *ctx, const args::Pad &args) {
  const char *kernel = "pad";
  const CleaveTensor &x = args.x();
  CleaveTensor &y = args.y();
  if (checkSameDType(ctx, kernel, x, y))
    return 1;
  size_t size = elementSize(ctx, kernel, x);
  if (size == 0)
    return 1;
  const int32_t rank = x.rank;
  if (y.rank != rank)
    return fail(ctx, kernel, "X and Y must have the same rank");
  const int64_t mode = args.mode();
  if (mode < CLEAVE_PAD_CONSTANT || mode > CLEAVE_PAD_WRAP)
    return fail(ctx, kernel, "unknown mode %lld", (long long)mode);
  unsigned char fill[8] = {0};
  if (!encodeScalar(x.dtype, args.value(), fill))
    return fail(ctx, kernel, "unknown dtype %d", x.dtype);
  IndexMaps maps(rank);
  for (int32_t d = 0; d < rank; ++d) {
    const int64_t begin = args.pads()[d], end = args.pads()[rank + d],
                  n = x.shape[d];
    if (begin < 0 || end < 0)
      return fail(ctx, kernel, "pads must be non-negative");
    if (y.shape[d] != n + begin + end)
      return fail(ctx, kernel, "dimension %d of Y is %lld, expected %lld", d,
                  (long long)y.shape[d], (long long)(n + begin + end));
    if (n == 0 && mode != CLEAVE_PAD_CONSTANT && y.shape[d] > 0)
      return fail(ctx, kernel,
                  "dimension %d is empty; only constant mode can "
                  "pad it",
                  d);
    maps[d].resize(y.shape[d]);
    for (int64_t o = 0; o < y.shape[d]; ++o) {
      int64_t i = o - begin;
      if (i < 0 || i >= n) {
        switch (mode) {
        case CLEAVE_PAD_CONSTANT:
          i = -1;
          break;
        case CLEAVE_PAD_REFLECT: {
          // Reflection about the first and last elements, period 2(n - 1).
          int64_t period = 2 * (n - 1);
          if (period == 0) {
            i = 0;
            break;
          }
          i = ((i % period) + period) % period;
          if (i >= n)
            i = period - i;
          break;
        }
        case CLEAVE_PAD_EDGE:
          i = std::min(std::max<int64_t>(i, 0), n - 1);
          break;
        default: // CLEAVE_PAD_WRAP
          i = ((i % n) + n) % n;
        }
      }
      maps[d][o] = i;
    }
  }
  if (numElements(y) == 0)
    return 0;
  mappedCopy(x, y, size, maps, fill, numThreads(ctx));
  return 0;
}

int32_t cleave::cpu::kernels::tile(CleaveContext *ctx,
                                   const args::Unary &args) {
  const char *kernel = "tile";
  const CleaveTensor &x = args.x();
  CleaveTensor &y = args.y();
  if (checkSameDType(ctx, kernel, x, y))
    return 1;
  size_t size = elementSize(ctx, kernel, x);
  if (size == 0)
    return 1;
  if (y.rank != x.rank)
    return fail(ctx, kernel, "X and Y must have the same rank");
  IndexMaps maps(x.rank);
  for (int32_t d = 0; d < x.rank; ++d) {
    const int64_t n = x.shape[d];
    if (n == 0 ? y.shape[d] != 0 : y.shape[d] % n != 0)
      return fail(ctx, kernel,
                  "dimension %d of Y (%lld) is not a multiple of "
                  "X's (%lld)",
                  d, (long long)y.shape[d], (long long)n);
    maps[d].resize(y.shape[d]);
    for (int64_t o = 0; o < y.shape[d]; ++o)
      maps[d][o] = o % n;
  }
  if (numElements(y) == 0)
    return 0;
  mappedCopy(x, y, size, maps, nullptr, numThreads(ctx));
  return 0;
}

int32_t cleave::cpu::kernels::expand(CleaveContext *ctx,
                                     const args::Unary &args) {
  const char *kernel = "expand";
  const CleaveTensor &x = args.x();
  CleaveTensor &y = args.y();
  if (checkSameDType(ctx, kernel, x, y))
    return 1;
  size_t size = elementSize(ctx, kernel, x);
  if (size == 0)
    return 1;
  if (x.rank > y.rank)
    return fail(ctx, kernel, "X has a higher rank than Y");
  // X seen with Y's rank: leading dimensions of size 1.
  CleaveTensor aligned = x;
  aligned.rank = y.rank;
  const int32_t lead = y.rank - x.rank;
  for (int32_t d = 0; d < y.rank; ++d)
    aligned.shape[d] = d < lead ? 1 : x.shape[d - lead];
  IndexMaps maps(y.rank);
  for (int32_t d = 0; d < y.rank; ++d) {
    const int64_t n = aligned.shape[d];
    if (n != 1 && n != y.shape[d])
      return fail(ctx, kernel,
                  "dimension %d of X (%lld) does not broadcast "
                  "to %lld",
                  d - lead, (long long)n, (long long)y.shape[d]);
    maps[d].resize(y.shape[d]);
    for (int64_t o = 0; o < y.shape[d]; ++o)
      maps[d][o] = n == 1 ? 0 : o;
  }
  if (numElements(y) == 0)
    return 0;
  mappedCopy(aligned, y, size, maps, nullptr, numThreads(ctx));
  return 0;
}

//===----------------------------------------------------------------------===//
// Gather and copy
//===----------------------------------------------------------------------===//

int32_t cleave::cpu::kernels::gather(CleaveContext *ctx,
                                     const args::Gather &args) {
  const char *kernel = "gather";
  const CleaveTensor &data = args.data(), &indices = args.indices();
  CleaveTensor &y = args.y();
  if (checkSameDType(ctx, kernel, data, y))
    return 1;
  size_t size = elementSize(ctx, kernel, data);
  if (size == 0)
    return 1;
  if (indices.dtype != CLEAVE_I64 && indices.dtype != CLEAVE_I32)
    return fail(ctx, kernel, "indices have dtype %d; int64 or int32 expected",
                indices.dtype);
  const int64_t axis = args.axis();
  if (axis < 0 || axis >= data.rank)
    return fail(ctx, kernel, "axis %lld is out of range for rank %d",
                (long long)axis, data.rank);
  const int64_t outer = product(data.shape, 0, axis);
  const int64_t n = data.shape[axis];
  const int64_t inner = product(data.shape, axis + 1, data.rank);
  const int64_t count = numElements(indices);
  if (numElements(y) != outer * count * inner)
    return fail(ctx, kernel, "Y has %lld elements, expected %lld",
                (long long)numElements(y), (long long)(outer * count * inner));
  std::vector<int64_t> resolved(count);
  for (int64_t i = 0; i < count; ++i) {
    int64_t index = indices.dtype == CLEAVE_I64
                        ? static_cast<const int64_t *>(indices.data)[i]
                        : static_cast<const int32_t *>(indices.data)[i];
    if (index < -n || index >= n)
      return fail(ctx, kernel,
                  "index %lld (at position %lld) is out of range "
                  "[%lld, %lld) for axis %lld",
                  (long long)index, (long long)i, (long long)-n, (long long)n,
                  (long long)axis);
    resolved[i] = index < 0 ? index + n : index;
  }
  const unsigned char *src = static_cast<const unsigned char *>(data.data);
  unsigned char *dst = static_cast<unsigned char *>(y.data);
  const int64_t block = inner * size;
  const int threads = numThreads(ctx);
  parallelFor(threads, outer * count * inner > kParallelGrain, outer * count,
              [&](int64_t task) {
                int64_t o = task / count, i = task % count;
                std::memcpy(dst + task * block,
                            src + (o * n + resolved[i]) * block, block);
              });
  return 0;
}

int32_t cleave::cpu::kernels::copy(CleaveContext *ctx,
                                   const args::Unary &args) {
  const char *kernel = "copy";
  const CleaveTensor &x = args.x();
  CleaveTensor &y = args.y();
  size_t inSize = elementSize(ctx, kernel, x);
  size_t outSize = elementSize(ctx, kernel, y);
  if (inSize == 0 || outSize == 0)
    return 1;
  const int64_t bytes = numElements(x) * inSize;
  if (bytes != numElements(y) * static_cast<int64_t>(outSize))
    return fail(ctx, kernel, "X has %lld bytes, Y %lld", (long long)bytes,
                (long long)(numElements(y) * outSize));
  if (bytes > 0 && x.data != y.data)
    std::memmove(y.data, x.data, bytes);
  return 0;
}
