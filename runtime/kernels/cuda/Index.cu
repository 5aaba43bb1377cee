//===- Index.cu - gathers and scatters by index tensors, one-hot, trilu ---===//
//
// gather_nd, scatter_nd, gather_elements, scatter_elements, one_hot and
// trilu on the GPU. An index out of range (after a negative one is counted
// from the end) is recorded in the device error word with the step that
// launched the kernel (DeviceError.h) and its element is skipped (a gather
// writes zero), never read or written out of bounds.
//
// Scatters stay deterministic without atomics: scatter_nd gives each thread
// one element of the slice and walks the tuples in order, scatter_elements
// gives each thread one position off the axis and walks the axis in order.
// No two threads write one element, and repeated indices combine in the
// order ONNX defines.
//
//===----------------------------------------------------------------------===//

#include "CudaCommon.h"

using namespace cleave::cuda;

namespace {

//===----------------------------------------------------------------------===//
// Element arithmetic for scatter reductions
//===----------------------------------------------------------------------===//

template <typename T>
__device__ __forceinline__ T combine(T a, T b, int reduction) {
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

template <>
__device__ __forceinline__ bool combine<bool>(bool a, bool b, int reduction) {
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

template <>
__device__ __forceinline__ __half combine<__half>(__half a, __half b,
                                                  int reduction) {
  return fromFloat<__half>(combine(toFloat(a), toFloat(b), reduction));
}

template <>
__device__ __forceinline__ __nv_bfloat16 combine<__nv_bfloat16>(__nv_bfloat16 a,
                                                                __nv_bfloat16 b,
                                                                int reduction) {
  return fromFloat<__nv_bfloat16>(combine(toFloat(a), toFloat(b), reduction));
}

/// Calls `f(T())` with the C++ type of any dtype a scatter can reduce;
/// returns -1 for another.
template <typename F> int32_t dispatchArithmetic(int32_t dtype, F &&f) {
  if (dtype == CLEAVE_BOOL)
    return f(bool());
  return dispatchNumeric(dtype, f);
}

/// Calls `f(I())` with the C++ type of an index dtype; -1 for another.
template <typename F> int32_t dispatchIndex(int32_t dtype, F &&f) {
  if (dtype == CLEAVE_I64)
    return f(int64_t());
  if (dtype == CLEAVE_I32)
    return f(int32_t());
  return -1;
}

int32_t checkReduction(CleaveContext *ctx, const char *kernel,
                       int64_t reduction) {
  if (reduction < CLEAVE_SCATTER_NONE || reduction > CLEAVE_SCATTER_MIN)
    return fail(ctx, kernel, "unknown reduction %lld", (long long)reduction);
  return 0;
}

int32_t copyData(CleaveContext *ctx, const char *kernel,
                 const CleaveTensor &data, const CleaveTensor &y) {
  size_t bytes = numElements(data) * dtypeSize(data.dtype);
  if (bytes == 0 || data.data == y.data)
    return 0;
  cudaError_t status = cudaMemcpyAsync(y.data, data.data, bytes,
                                       cudaMemcpyDeviceToDevice, streamOf(ctx));
  if (status != cudaSuccess)
    return fail(ctx, kernel, "%s", cudaGetErrorString(status));
  return 0;
}

//===----------------------------------------------------------------------===//
// gather_nd and scatter_nd
//===----------------------------------------------------------------------===//

/// The geometry of an index-tuple access (see the CPU kernels).
struct TupleAccess {
  int batchDims = 0, tuple = 0;
  int64_t numTuples = 0, slice = 0, tuplesPerBatch = 0, batchStride = 0;
  Dims data;
};

/// The offset in data of the slice tuple `t` selects, or -1 after
/// recording the first index out of range.
template <typename I>
__device__ int64_t tupleOffset(const TupleAccess &a, const I *indices,
                               int64_t t, const DeviceErrorSite &site,
                               int code) {
  int64_t offset =
      a.tuplesPerBatch ? (t / a.tuplesPerBatch) * a.batchStride : 0;
  for (int j = 0; j < a.tuple; ++j) {
    int dim = a.batchDims + j;
    int64_t index = static_cast<int64_t>(indices[t * a.tuple + j]);
    int64_t k = resolveIndex(index, a.data.size[dim]);
    if (k < 0) {
      recordIndexError(site, code, index, a.data.size[dim], dim);
      return -1;
    }
    offset += k * a.data.stride[dim];
  }
  return offset;
}

template <typename T, typename I>
__global__ void gatherNDKernel(const T *data, const I *indices, T *out,
                               TupleAccess a, int64_t n, DeviceErrorSite site) {
  CLEAVE_GRID_LOOP(i, n) {
    int64_t offset =
        tupleOffset(a, indices, i / a.slice, site, kGatherNDIndexOutOfRange);
    out[i] = offset < 0 ? T(0) : data[offset + i % a.slice];
  }
}

template <typename T, typename I>
__global__ void scatterNDKernel(const I *indices, const T *updates, T *out,
                                TupleAccess a, int reduction,
                                DeviceErrorSite site) {
  CLEAVE_GRID_LOOP(s, a.slice) {
    for (int64_t t = 0; t < a.numTuples; ++t) {
      int64_t offset =
          tupleOffset(a, indices, t, site, kScatterNDIndexOutOfRange);
      if (offset < 0)
        continue;
      out[offset + s] =
          combine(out[offset + s], updates[t * a.slice + s], reduction);
    }
  }
}

int32_t describeTuples(CleaveContext *ctx, const char *kernel,
                       const CleaveTensor &data, const CleaveTensor &indices,
                       int64_t batchDims, TupleAccess &a) {
  if (indices.rank < 1 || batchDims < 0 || batchDims >= data.rank ||
      batchDims >= indices.rank)
    return fail(ctx, kernel, "batch_dims %lld does not fit ranks %d and %d",
                (long long)batchDims, data.rank, indices.rank);
  a.batchDims = static_cast<int>(batchDims);
  a.tuple = static_cast<int>(indices.shape[indices.rank - 1]);
  if (a.tuple < 1 || a.tuple > data.rank - a.batchDims)
    return fail(ctx, kernel, "index tuples of %d entries do not fit rank %d",
                a.tuple, data.rank);
  a.numTuples = product(indices.shape, 0, indices.rank - 1);
  a.slice = product(data.shape, a.batchDims + a.tuple, data.rank);
  int64_t batches = product(data.shape, 0, a.batchDims);
  a.tuplesPerBatch = batches ? a.numTuples / batches : 0;
  a.batchStride = product(data.shape, a.batchDims, data.rank);
  a.data = dimsOf(data);
  return 0;
}

//===----------------------------------------------------------------------===//
// gather_elements and scatter_elements
//===----------------------------------------------------------------------===//

/// The offset in data that element `i` of indices (shape `index`) addresses
/// along `axis`, or -1 after recording an index out of range.
template <typename I>
__device__ int64_t elementOffset(const Dims &data, const Dims &index, int axis,
                                 const I *indices, int64_t i,
                                 const DeviceErrorSite &site, int code) {
  int64_t value = static_cast<int64_t>(indices[i]);
  int64_t k = resolveIndex(value, data.size[axis]);
  if (k < 0) {
    recordIndexError(site, code, value, data.size[axis], axis);
    return -1;
  }
  int64_t offset = 0, linear = i;
  for (int d = index.rank - 1; d >= 0; --d) {
    int64_t c = linear % index.size[d];
    linear /= index.size[d];
    offset += (d == axis ? k : c) * data.stride[d];
  }
  return offset;
}

template <typename T, typename I>
__global__ void gatherElementsKernel(const T *data, const I *indices, T *out,
                                     Dims dataDims, Dims indexDims, int axis,
                                     int64_t n, DeviceErrorSite site) {
  CLEAVE_GRID_LOOP(i, n) {
    int64_t offset = elementOffset(dataDims, indexDims, axis, indices, i, site,
                                   kGatherElementsIndexOutOfRange);
    out[i] = offset < 0 ? T(0) : data[offset];
  }
}

/// One thread per position of indices off the axis (`n` of them), walking
/// the axis in order.
template <typename T, typename I>
__global__ void scatterElementsKernel(const I *indices, const T *updates,
                                      T *out, Dims dataDims, Dims indexDims,
                                      int axis, int reduction, int64_t n,
                                      DeviceErrorSite site) {
  int64_t axisSize = indexDims.size[axis];
  int64_t inner = indexDims.stride[axis];
  CLEAVE_GRID_LOOP(p, n) {
    int64_t first = (p / inner) * axisSize * inner + p % inner;
    for (int64_t a = 0; a < axisSize; ++a) {
      int64_t u = first + a * inner;
      int64_t offset = elementOffset(dataDims, indexDims, axis, indices, u,
                                     site, kScatterElementsIndexOutOfRange);
      if (offset >= 0)
        out[offset] = combine(out[offset], updates[u], reduction);
    }
  }
}

int32_t checkElementShapes(CleaveContext *ctx, const char *kernel,
                           const CleaveTensor &data,
                           const CleaveTensor &indices, int64_t axis) {
  if (axis < 0 || axis >= data.rank || indices.rank != data.rank)
    return fail(ctx, kernel, "axis %lld does not fit ranks %d and %d",
                (long long)axis, data.rank, indices.rank);
  for (int d = 0; d < data.rank; ++d)
    if (d != axis && indices.shape[d] > data.shape[d])
      return fail(ctx, kernel, "dimension %d of indices exceeds data's", d);
  return 0;
}

//===----------------------------------------------------------------------===//
// one_hot and trilu
//===----------------------------------------------------------------------===//

template <typename T, typename I>
__global__ void oneHotKernel(const I *indices, const T *values, T *out,
                             int64_t depth, int64_t inner, int64_t n) {
  CLEAVE_GRID_LOOP(i, n) {
    int64_t j = (i / inner) % depth;
    int64_t index = static_cast<int64_t>(
        indices[(i / (inner * depth)) * inner + i % inner]);
    if (index < 0)
      index += depth;
    out[i] = values[index == j ? 1 : 0];
  }
}

template <typename T>
__global__ void triluKernel(const T *in, T *out, int64_t rows, int64_t cols,
                            int64_t k, bool upper, int64_t n) {
  CLEAVE_GRID_LOOP(i, n) {
    int64_t row = (i / cols) % rows, col = i % cols;
    bool keep = upper ? col - row >= k : col - row <= k;
    out[i] = keep ? in[i] : T(0);
  }
}

} // namespace

//===----------------------------------------------------------------------===//
// Entry points
//===----------------------------------------------------------------------===//

int32_t cleave::cuda::kernels::gather_nd(CleaveContext *ctx,
                                         const args::GatherND &args) {
  const char *kernel = "gather_nd";
  const CleaveTensor &data = args.data(), &indices = args.indices();
  const CleaveTensor &y = args.y();
  TupleAccess a;
  if (int32_t status =
          describeTuples(ctx, kernel, data, indices, args.batchDims(), a))
    return status;
  int64_t n = numElements(y);
  if (n == 0)
    return 0;
  DeviceErrorSite site = deviceErrorSite(ctx);
  cudaStream_t stream = streamOf(ctx);
  int32_t status = dispatchIndex(indices.dtype, [&](auto index) {
    using I = decltype(index);
    return dispatchBytes(dtypeSize(data.dtype), [&](auto t) {
      using T = decltype(t);
      gatherNDKernel<T, I><<<blocksFor(n), kThreads, 0, stream>>>(
          static_cast<const T *>(data.data),
          static_cast<const I *>(indices.data), static_cast<T *>(y.data), a, n,
          site);
      return 0;
    });
  });
  if (status)
    return fail(ctx, kernel, "unsupported element types %d, %d", data.dtype,
                indices.dtype);
  return checkLaunch(ctx, kernel);
}

int32_t cleave::cuda::kernels::scatter_nd(CleaveContext *ctx,
                                          const args::ScatterND &args) {
  const char *kernel = "scatter_nd";
  const CleaveTensor &data = args.data(), &indices = args.indices(),
                     &updates = args.updates();
  const CleaveTensor &y = args.y();
  int reduction = static_cast<int>(args.reduction());
  TupleAccess a;
  if (int32_t status = checkReduction(ctx, kernel, args.reduction()))
    return status;
  if (int32_t status = describeTuples(ctx, kernel, data, indices, 0, a))
    return status;
  if (int32_t status = copyData(ctx, kernel, data, y))
    return status;
  if (a.slice == 0 || a.numTuples == 0)
    return 0;
  DeviceErrorSite site = deviceErrorSite(ctx);
  cudaStream_t stream = streamOf(ctx);
  int32_t status = dispatchIndex(indices.dtype, [&](auto index) {
    using I = decltype(index);
    return dispatchArithmetic(data.dtype, [&](auto t) {
      using T = decltype(t);
      scatterNDKernel<T, I><<<blocksFor(a.slice), kThreads, 0, stream>>>(
          static_cast<const I *>(indices.data),
          static_cast<const T *>(updates.data), static_cast<T *>(y.data), a,
          reduction, site);
      return 0;
    });
  });
  if (status)
    return fail(ctx, kernel, "unsupported element types %d, %d", data.dtype,
                indices.dtype);
  return checkLaunch(ctx, kernel);
}

int32_t cleave::cuda::kernels::gather_elements(CleaveContext *ctx,
                                               const args::Gather &args) {
  const char *kernel = "gather_elements";
  const CleaveTensor &data = args.data(), &indices = args.indices();
  const CleaveTensor &y = args.y();
  int axis = static_cast<int>(args.axis());
  if (int32_t status = checkElementShapes(ctx, kernel, data, indices, axis))
    return status;
  int64_t n = numElements(y);
  if (n == 0)
    return 0;
  DeviceErrorSite site = deviceErrorSite(ctx);
  cudaStream_t stream = streamOf(ctx);
  int32_t status = dispatchIndex(indices.dtype, [&](auto index) {
    using I = decltype(index);
    return dispatchBytes(dtypeSize(data.dtype), [&](auto t) {
      using T = decltype(t);
      gatherElementsKernel<T, I><<<blocksFor(n), kThreads, 0, stream>>>(
          static_cast<const T *>(data.data),
          static_cast<const I *>(indices.data), static_cast<T *>(y.data),
          dimsOf(data), dimsOf(indices), axis, n, site);
      return 0;
    });
  });
  if (status)
    return fail(ctx, kernel, "unsupported element types %d, %d", data.dtype,
                indices.dtype);
  return checkLaunch(ctx, kernel);
}

int32_t
cleave::cuda::kernels::scatter_elements(CleaveContext *ctx,
                                        const args::ScatterElements &args) {
  const char *kernel = "scatter_elements";
  const CleaveTensor &data = args.data(), &indices = args.indices(),
                     &updates = args.updates();
  const CleaveTensor &y = args.y();
  int axis = static_cast<int>(args.axis());
  int reduction = static_cast<int>(args.reduction());
  if (int32_t status = checkReduction(ctx, kernel, args.reduction()))
    return status;
  if (int32_t status = checkElementShapes(ctx, kernel, data, indices, axis))
    return status;
  if (int32_t status = copyData(ctx, kernel, data, y))
    return status;
  int64_t count = numElements(indices);
  if (count == 0)
    return 0;
  int64_t n = count / indices.shape[axis];
  DeviceErrorSite site = deviceErrorSite(ctx);
  cudaStream_t stream = streamOf(ctx);
  int32_t status = dispatchIndex(indices.dtype, [&](auto index) {
    using I = decltype(index);
    return dispatchArithmetic(data.dtype, [&](auto t) {
      using T = decltype(t);
      scatterElementsKernel<T, I><<<blocksFor(n), kThreads, 0, stream>>>(
          static_cast<const I *>(indices.data),
          static_cast<const T *>(updates.data), static_cast<T *>(y.data),
          dimsOf(data), dimsOf(indices), axis, reduction, n, site);
      return 0;
    });
  });
  if (status)
    return fail(ctx, kernel, "unsupported element types %d, %d", data.dtype,
                indices.dtype);
  return checkLaunch(ctx, kernel);
}

int32_t cleave::cuda::kernels::one_hot(CleaveContext *ctx,
                                       const args::OneHot &args) {
  const char *kernel = "one_hot";
  const CleaveTensor &indices = args.indices(), &values = args.values();
  const CleaveTensor &y = args.y();
  int axis = static_cast<int>(args.axis());
  if (axis < 0 || axis >= y.rank || y.rank != indices.rank + 1)
    return fail(ctx, kernel, "axis %d does not fit Y of rank %d", axis, y.rank);
  if (numElements(values) != 2 || values.dtype != y.dtype)
    return fail(ctx, kernel, "values must be two elements of Y's dtype");
  int64_t n = numElements(y);
  if (n == 0)
    return 0;
  int64_t depth = y.shape[axis];
  int64_t inner = product(y.shape, axis + 1, y.rank);
  cudaStream_t stream = streamOf(ctx);
  int32_t status = dispatchIndex(indices.dtype, [&](auto index) {
    using I = decltype(index);
    return dispatchBytes(dtypeSize(y.dtype), [&](auto t) {
      using T = decltype(t);
      oneHotKernel<T, I><<<blocksFor(n), kThreads, 0, stream>>>(
          static_cast<const I *>(indices.data),
          static_cast<const T *>(values.data), static_cast<T *>(y.data), depth,
          inner, n);
      return 0;
    });
  });
  if (status)
    return fail(ctx, kernel, "unsupported element types %d, %d", y.dtype,
                indices.dtype);
  return checkLaunch(ctx, kernel);
}

int32_t cleave::cuda::kernels::trilu(CleaveContext *ctx,
                                     const args::Trilu &args) {
  const char *kernel = "trilu";
  const CleaveTensor &x = args.x();
  const CleaveTensor &y = args.y();
  if (x.rank < 2)
    return fail(ctx, kernel, "X has rank %d; at least 2 expected", x.rank);
  int64_t n = numElements(y);
  if (n == 0)
    return 0;
  int64_t rows = x.shape[x.rank - 2], cols = x.shape[x.rank - 1];
  cudaStream_t stream = streamOf(ctx);
  int32_t status = dispatchBytes(dtypeSize(x.dtype), [&](auto t) {
    using T = decltype(t);
    triluKernel<T><<<blocksFor(n), kThreads, 0, stream>>>(
        static_cast<const T *>(x.data), static_cast<T *>(y.data), rows, cols,
        args.k(), args.upper() != 0, n);
    return 0;
  });
  if (status)
    return fail(ctx, kernel, "unsupported element type %d", x.dtype);
  return checkLaunch(ctx, kernel);
}
