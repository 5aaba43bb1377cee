//===- Index.cpp - gathers and scatters by index tensors, one-hot, trilu --===//
//
// gather_nd, scatter_nd, gather_elements, scatter_elements, one_hot and
// trilu. Indices are data: every index is checked (after a negative one is
// counted from the end) before anything is read or written through it, and
// one out of range fails the kernel with its value and position; the
// runtime adds the node. Scatters apply their updates in row-major order,
// so repeated indices accumulate under a reduction and the last write wins
// without one.
//
//===----------------------------------------------------------------------===//

#include "KernelSupport.h"

#include <algorithm>
#include <cstring>
#include <vector>

using namespace cleave::cpu;

namespace {

int64_t readIndex(const CleaveTensor &indices, int64_t i) {
  return indices.dtype == CLEAVE_I64
             ? static_cast<const int64_t *>(indices.data)[i]
             : static_cast<const int32_t *>(indices.data)[i];
}

int32_t checkIndexType(CleaveContext *ctx, const char *kernel,
                       const CleaveTensor &indices) {
  if (indices.dtype == CLEAVE_I64 || indices.dtype == CLEAVE_I32)
    return 0;
  return fail(ctx, kernel, "indices have dtype %d; int64 or int32 expected",
              indices.dtype);
}

int32_t checkSameDType(CleaveContext *ctx, const char *kernel,
                       const CleaveTensor &a, const char *aName,
                       const CleaveTensor &b, const char *bName) {
  if (a.dtype == b.dtype)
    return 0;
  return fail(ctx, kernel, "%s has dtype %d but %s has dtype %d", aName,
              a.dtype, bName, b.dtype);
}

/// Resolves index `i` of `indices` against a dimension of `size`; fails the
/// kernel, naming the value, its position and `dim`, when out of range.
int32_t resolveIndex(CleaveContext *ctx, const char *kernel,
                     const CleaveTensor &indices, int64_t i, int64_t size,
                     int64_t dim, int64_t &resolved) {
  int64_t index = readIndex(indices, i);
  if (index < -size || index >= size)
    return fail(ctx, kernel,
                "index %lld (at position %lld of indices) is out of range "
                "[%lld, %lld) for dimension %lld of data",
                (long long)index, (long long)i, (long long)-size,
                (long long)size, (long long)dim);
  resolved = index < 0 ? index + size : index;
  return 0;
}

/// Copies `data` into `y` unless they share memory.
void copyData(const CleaveTensor &data, CleaveTensor &y, size_t size) {
  if (data.data != y.data)
    std::memmove(y.data, data.data, numElements(data) * size);
}

//===----------------------------------------------------------------------===//
// Scatter reductions
//===----------------------------------------------------------------------===//

template <typename T> T combine(T a, T b, int64_t reduction) {
  switch (reduction) {
  case CLEAVE_SCATTER_ADD:
    return static_cast<T>(a + b);
  case CLEAVE_SCATTER_MUL:
    return static_cast<T>(a * b);
  case CLEAVE_SCATTER_MAX:
    return a < b ? b : a;
  case CLEAVE_SCATTER_MIN:
    return b < a ? b : a;
  default:
    return b;
  }
}

/// Booleans add as `or` and multiply as `and`, like numpy's.
template <> bool combine<bool>(bool a, bool b, int64_t reduction) {
  switch (reduction) {
  case CLEAVE_SCATTER_ADD:
  case CLEAVE_SCATTER_MAX:
    return a || b;
  case CLEAVE_SCATTER_MUL:
  case CLEAVE_SCATTER_MIN:
    return a && b;
  default:
    return b;
  }
}

/// Calls `body(T())` with the C++ type of an arithmetic dtype; false for a
/// dtype without host arithmetic (float16, bfloat16).
template <typename Body> bool withArithmeticType(int32_t dtype, Body &&body) {
  switch (dtype) {
  case CLEAVE_F32:
    return body(float()), true;
  case CLEAVE_F64:
    return body(double()), true;
  case CLEAVE_I64:
    return body(int64_t()), true;
  case CLEAVE_I32:
    return body(int32_t()), true;
  case CLEAVE_I16:
    return body(int16_t()), true;
  case CLEAVE_I8:
    return body(int8_t()), true;
  case CLEAVE_U8:
    return body(uint8_t()), true;
  case CLEAVE_U16:
    return body(uint16_t()), true;
  case CLEAVE_U32:
    return body(uint32_t()), true;
  case CLEAVE_U64:
    return body(uint64_t()), true;
  case CLEAVE_BOOL:
    return body(bool()), true;
  default:
    return false;
  }
}

/// The checks every scatter makes of its element types and reduction.
int32_t checkScatter(CleaveContext *ctx, const char *kernel,
                     const CleaveTensor &data, const CleaveTensor &indices,
                     const CleaveTensor &updates, const CleaveTensor &y,
                     int64_t reduction) {
  if (checkIndexType(ctx, kernel, indices) ||
      checkSameDType(ctx, kernel, data, "data", y, "Y") ||
      checkSameDType(ctx, kernel, updates, "updates", data, "data"))
    return 1;
  if (reduction < CLEAVE_SCATTER_NONE || reduction > CLEAVE_SCATTER_MIN)
    return fail(ctx, kernel, "unknown reduction %lld", (long long)reduction);
  if (reduction != CLEAVE_SCATTER_NONE &&
      !withArithmeticType(data.dtype, [](auto) {}))
    return fail(ctx, kernel, "no reduction for dtype %d", data.dtype);
  if (numElements(data) != numElements(y))
    return fail(ctx, kernel, "Y has %lld elements but data has %lld",
                (long long)numElements(y), (long long)numElements(data));
  return 0;
}

/// Applies update element `u` to element `target` of `y`.
void applyUpdate(CleaveTensor &y, const CleaveTensor &updates, int64_t target,
                 int64_t u, size_t size, int64_t reduction) {
  unsigned char *dst = static_cast<unsigned char *>(y.data) + target * size;
  const unsigned char *src =
      static_cast<const unsigned char *>(updates.data) + u * size;
  if (reduction == CLEAVE_SCATTER_NONE) {
    std::memcpy(dst, src, size);
    return;
  }
  withArithmeticType(y.dtype, [&](auto zero) {
    using T = decltype(zero);
    T a, b;
    std::memcpy(&a, dst, sizeof(T));
    std::memcpy(&b, src, sizeof(T));
    T c = combine<T>(a, b, reduction);
    std::memcpy(dst, &c, sizeof(T));
  });
}

} // namespace

//===----------------------------------------------------------------------===//
// gather_nd and scatter_nd
//===----------------------------------------------------------------------===//

namespace {

/// The geometry of an index-tuple access: `numTuples` tuples of `tuple`
/// indices into the dimensions [batchDims, batchDims + tuple) of data, each
/// selecting a slice of `slice` elements.
struct TupleAccess {
  int64_t batchDims = 0, tuple = 0, numTuples = 0, slice = 0;
  /// Tuples per batch entry, and data elements per batch entry.
  int64_t tuplesPerBatch = 0, batchStride = 0;
  int64_t strides[CLEAVE_MAX_RANK] = {};

  /// Fails unless the shapes fit together.
  int32_t init(CleaveContext *ctx, const char *kernel, const CleaveTensor &data,
               const CleaveTensor &indices, int64_t batch) {
    if (indices.rank < 1 || batch < 0 || batch >= data.rank ||
        batch >= indices.rank)
      return fail(ctx, kernel,
                  "batch_dims %lld does not fit data of rank %d and indices "
                  "of rank %d",
                  (long long)batch, data.rank, indices.rank);
    batchDims = batch;
    tuple = indices.shape[indices.rank - 1];
    if (tuple < 1 || tuple > data.rank - batchDims)
      return fail(ctx, kernel,
                  "index tuples of %lld entries do not fit data of rank %d "
                  "after %lld batch dimensions",
                  (long long)tuple, data.rank, (long long)batchDims);
    for (int64_t d = 0; d < batchDims; ++d)
      if (indices.shape[d] != data.shape[d])
        return fail(ctx, kernel,
                    "batch dimension %lld of indices (%lld) differs from "
                    "data's (%lld)",
                    (long long)d, (long long)indices.shape[d],
                    (long long)data.shape[d]);
    numTuples = product(indices.shape, 0, indices.rank - 1);
    slice = product(data.shape, batchDims + tuple, data.rank);
    int64_t batches = product(data.shape, 0, batchDims);
    tuplesPerBatch = batches ? numTuples / batches : 0;
    batchStride = product(data.shape, batchDims, data.rank);
    rowMajorStrides(data.shape, data.rank, strides);
    return 0;
  }

  /// The offset in data of the slice tuple `t` selects, after checking its
  /// indices.
  int32_t offsetOf(CleaveContext *ctx, const char *kernel,
                   const CleaveTensor &data, const CleaveTensor &indices,
                   int64_t t, int64_t &offset) const {
    offset = tuplesPerBatch ? (t / tuplesPerBatch) * batchStride : 0;
    for (int64_t j = 0; j < tuple; ++j) {
      int64_t dim = batchDims + j, index;
      if (int32_t status = resolveIndex(ctx, kernel, indices, t * tuple + j,
                                        data.shape[dim], dim, index))
        return status;
      offset += index * strides[dim];
    }
    return 0;
  }
};

} // namespace

int32_t cleave::cpu::kernels::gather_nd(CleaveContext *ctx,
                                        const args::GatherND &args) {
  const char *kernel = "gather_nd";
  const CleaveTensor &data = args.data(), &indices = args.indices();
  CleaveTensor &y = args.y();
  if (checkIndexType(ctx, kernel, indices) ||
      checkSameDType(ctx, kernel, data, "data", y, "Y"))
    return 1;
  size_t size = elementSize(ctx, kernel, data);
  if (size == 0)
    return 1;
  TupleAccess access;
  if (int32_t status =
          access.init(ctx, kernel, data, indices, args.batchDims()))
    return status;
  if (numElements(y) != access.numTuples * access.slice)
    return fail(ctx, kernel, "Y has %lld elements, expected %lld",
                (long long)numElements(y),
                (long long)(access.numTuples * access.slice));
  std::vector<int64_t> offsets(access.numTuples);
  for (int64_t t = 0; t < access.numTuples; ++t)
    if (int32_t status =
            access.offsetOf(ctx, kernel, data, indices, t, offsets[t]))
      return status;
  const unsigned char *src = static_cast<const unsigned char *>(data.data);
  unsigned char *dst = static_cast<unsigned char *>(y.data);
  const int64_t block = access.slice * size;
  const int threads = numThreads(ctx);
  parallelFor(threads, numElements(y) > kParallelGrain, access.numTuples,
              [&](int64_t t) {
                std::memcpy(dst + t * block, src + offsets[t] * size, block);
              });
  return 0;
}

int32_t cleave::cpu::kernels::scatter_nd(CleaveContext *ctx,
                                         const args::ScatterND &args) {
  const char *kernel = "scatter_nd";
  const CleaveTensor &data = args.data(), &indices = args.indices(),
                     &updates = args.updates();
  CleaveTensor &y = args.y();
  const int64_t reduction = args.reduction();
  if (checkScatter(ctx, kernel, data, indices, updates, y, reduction))
    return 1;
  size_t size = elementSize(ctx, kernel, data);
  if (size == 0)
    return 1;
  TupleAccess access;
  if (int32_t status = access.init(ctx, kernel, data, indices, 0))
    return status;
  if (numElements(updates) != access.numTuples * access.slice)
    return fail(ctx, kernel, "updates has %lld elements, expected %lld",
                (long long)numElements(updates),
                (long long)(access.numTuples * access.slice));
  // Every index is checked before Y changes.
  std::vector<int64_t> offsets(access.numTuples);
  for (int64_t t = 0; t < access.numTuples; ++t)
    if (int32_t status =
            access.offsetOf(ctx, kernel, data, indices, t, offsets[t]))
      return status;
  copyData(data, y, size);
  for (int64_t t = 0; t < access.numTuples; ++t)
    for (int64_t s = 0; s < access.slice; ++s)
      applyUpdate(y, updates, offsets[t] + s, t * access.slice + s, size,
                  reduction);
  return 0;
}

//===----------------------------------------------------------------------===//
// gather_elements and scatter_elements
//===----------------------------------------------------------------------===//

namespace {

/// Checks the shapes of an element-wise indexing and resolves, for every
/// element of `indices`, the offset in data it addresses along `axis`.
int32_t resolveElementTargets(CleaveContext *ctx, const char *kernel,
                              const CleaveTensor &data,
                              const CleaveTensor &indices, int64_t axis,
                              std::vector<int64_t> &targets) {
  if (axis < 0 || axis >= data.rank)
    return fail(ctx, kernel, "axis %lld is out of range for rank %d",
                (long long)axis, data.rank);
  if (indices.rank != data.rank)
    return fail(ctx, kernel, "indices have rank %d but data has rank %d",
                indices.rank, data.rank);
  for (int32_t d = 0; d < data.rank; ++d)
    if (d != axis && indices.shape[d] > data.shape[d])
      return fail(ctx, kernel,
                  "dimension %d of indices (%lld) exceeds data's (%lld)", d,
                  (long long)indices.shape[d], (long long)data.shape[d]);
  int64_t strides[CLEAVE_MAX_RANK];
  rowMajorStrides(data.shape, data.rank, strides);
  const int64_t count = numElements(indices);
  targets.resize(count);
  int64_t coords[CLEAVE_MAX_RANK] = {};
  for (int64_t i = 0; i < count; ++i) {
    int64_t index;
    if (int32_t status = resolveIndex(ctx, kernel, indices, i, data.shape[axis],
                                      axis, index))
      return status;
    int64_t offset = 0;
    for (int32_t d = 0; d < data.rank; ++d)
      offset += (d == axis ? index : coords[d]) * strides[d];
    targets[i] = offset;
    for (int32_t d = indices.rank - 1; d >= 0; --d) {
      if (++coords[d] < indices.shape[d])
        break;
      coords[d] = 0;
    }
  }
  return 0;
}

} // namespace

int32_t cleave::cpu::kernels::gather_elements(CleaveContext *ctx,
                                              const args::Gather &args) {
  const char *kernel = "gather_elements";
  const CleaveTensor &data = args.data(), &indices = args.indices();
  CleaveTensor &y = args.y();
  if (checkIndexType(ctx, kernel, indices) ||
      checkSameDType(ctx, kernel, data, "data", y, "Y"))
    return 1;
  size_t size = elementSize(ctx, kernel, data);
  if (size == 0)
    return 1;
  if (numElements(y) != numElements(indices))
    return fail(ctx, kernel, "Y has %lld elements but indices have %lld",
                (long long)numElements(y), (long long)numElements(indices));
  std::vector<int64_t> sources;
  if (int32_t status = resolveElementTargets(ctx, kernel, data, indices,
                                             args.axis(), sources))
    return status;
  const unsigned char *src = static_cast<const unsigned char *>(data.data);
  unsigned char *dst = static_cast<unsigned char *>(y.data);
  const int64_t count = static_cast<int64_t>(sources.size());
  const int threads = numThreads(ctx);
  parallelFor(threads, count > kParallelGrain, count, [&](int64_t i) {
    std::memcpy(dst + i * size, src + sources[i] * size, size);
  });
  return 0;
}

int32_t
cleave::cpu::kernels::scatter_elements(CleaveContext *ctx,
                                       const args::ScatterElements &args) {
  const char *kernel = "scatter_elements";
  const CleaveTensor &data = args.data(), &indices = args.indices(),
                     &updates = args.updates();
  CleaveTensor &y = args.y();
  const int64_t reduction = args.reduction();
  if (checkScatter(ctx, kernel, data, indices, updates, y, reduction))
    return 1;
  size_t size = elementSize(ctx, kernel, data);
  if (size == 0)
    return 1;
  if (numElements(updates) != numElements(indices))
    return fail(ctx, kernel, "updates have %lld elements but indices %lld",
                (long long)numElements(updates),
                (long long)numElements(indices));
  std::vector<int64_t> targets;
  if (int32_t status = resolveElementTargets(ctx, kernel, data, indices,
                                             args.axis(), targets))
    return status;
  copyData(data, y, size);
  for (int64_t u = 0, e = static_cast<int64_t>(targets.size()); u < e; ++u)
    applyUpdate(y, updates, targets[u], u, size, reduction);
  return 0;
}

//===----------------------------------------------------------------------===//
// one_hot and trilu
//===----------------------------------------------------------------------===//

int32_t cleave::cpu::kernels::one_hot(CleaveContext *ctx,
                                      const args::OneHot &args) {
  const char *kernel = "one_hot";
  const CleaveTensor &indices = args.indices(), &values = args.values();
  CleaveTensor &y = args.y();
  if (checkIndexType(ctx, kernel, indices) ||
      checkSameDType(ctx, kernel, values, "values", y, "Y"))
    return 1;
  size_t size = elementSize(ctx, kernel, y);
  if (size == 0)
    return 1;
  const int64_t axis = args.axis();
  if (axis < 0 || axis >= y.rank || y.rank != indices.rank + 1)
    return fail(ctx, kernel, "axis %lld does not fit Y of rank %d",
                (long long)axis, y.rank);
  if (numElements(values) != 2)
    return fail(ctx, kernel, "values have %lld elements; 2 expected",
                (long long)numElements(values));
  const int64_t depth = y.shape[axis];
  const int64_t inner = product(y.shape, axis + 1, y.rank);
  const int64_t total = numElements(y);
  const unsigned char *off = static_cast<const unsigned char *>(values.data);
  const unsigned char *on = off + size;
  unsigned char *dst = static_cast<unsigned char *>(y.data);
  const int threads = numThreads(ctx);
  parallelFor(threads, total > kParallelGrain, total, [&](int64_t i) {
    int64_t j = (i / inner) % depth;
    int64_t index =
        readIndex(indices, (i / (inner * depth)) * inner + i % inner);
    if (index < 0)
      index += depth;
    std::memcpy(dst + i * size, index == j ? on : off, size);
  });
  return 0;
}

int32_t cleave::cpu::kernels::trilu(CleaveContext *ctx,
                                    const args::Trilu &args) {
  const char *kernel = "trilu";
  const CleaveTensor &x = args.x();
  CleaveTensor &y = args.y();
  if (checkSameDType(ctx, kernel, x, "X", y, "Y"))
    return 1;
  size_t size = elementSize(ctx, kernel, x);
  if (size == 0)
    return 1;
  if (x.rank < 2 || numElements(x) != numElements(y))
    return fail(ctx, kernel, "X of rank %d does not match Y", x.rank);
  const int64_t k = args.k();
  const bool upper = args.upper() != 0;
  const int64_t rows = x.shape[x.rank - 2], cols = x.shape[x.rank - 1];
  const int64_t total = numElements(x);
  const unsigned char *src = static_cast<const unsigned char *>(x.data);
  unsigned char *dst = static_cast<unsigned char *>(y.data);
  const int threads = numThreads(ctx);
  parallelFor(threads, total > kParallelGrain, total, [&](int64_t i) {
    int64_t row = (i / cols) % rows, col = i % cols;
    bool keep = upper ? col - row >= k : col - row <= k;
    if (keep)
      std::memmove(dst + i * size, src + i * size, size);
    else
      std::memset(dst + i * size, 0, size);
  });
  return 0;
}
