//===- DataMovement.cu - transpose, concat, slice, gather, pad, ... -------===//
//
// Kernels that only move elements work on any element type: they dispatch
// on the element size and copy unsigned integers of that size. Every kernel
// maps an output index to an input index, so writes are coalesced.
//
//===----------------------------------------------------------------------===//

#include "CudaCommon.h"

#include <cstring>

using namespace cleave::cuda;

namespace {

/// Splits `linear` into the coordinates of `dims` (row-major) and calls
/// `f(d, coordinate)` for each dimension, innermost first.
template <typename F>
__device__ __forceinline__ void forEachCoord(const Dims &dims, int64_t linear,
                                             F &&f) {
  for (int d = dims.rank - 1; d >= 0; --d) {
    int64_t c = linear % dims.size[d];
    linear /= dims.size[d];
    f(d, c);
  }
}

//===----------------------------------------------------------------------===//
// Strided gathers: transpose, slice, tile, expand
//===----------------------------------------------------------------------===//

/// out[i] = in[offset + sum_d coord_d(i) * stride_d] where the coordinates
/// are those of `out` and `map.stride` the input stride of each output
/// dimension (0 for a broadcast one). `mod` wraps a coordinate first (tile).
template <typename T>
__global__ void stridedGatherKernel(const T *in, T *out, int64_t n, Dims map,
                                    Dims mod, int64_t offset) {
  CLEAVE_GRID_LOOP(i, n) {
    int64_t src = offset;
    forEachCoord(map, i, [&](int d, int64_t c) {
      if (mod.rank)
        c %= mod.size[d];
      src += c * map.stride[d];
    });
    out[i] = in[src];
  }
}

/// Launches stridedGatherKernel for `out` (whose sizes fill `map.size`).
int32_t stridedGather(CleaveContext *ctx, const char *kernel,
                      const CleaveTensor &x, const CleaveTensor &y, Dims map,
                      Dims mod, int64_t offset) {
  int64_t n = numElements(y);
  if (n == 0)
    return 0;
  size_t bytes = dtypeSize(x.dtype);
  if (bytes == 0 || bytes != dtypeSize(y.dtype))
    return fail(ctx, kernel, "unsupported element types %d -> %d", x.dtype,
                y.dtype);
  cudaStream_t stream = streamOf(ctx);
  dispatchBytes(bytes, [&](auto t) {
    using T = decltype(t);
    stridedGatherKernel<T><<<blocksFor(n), kThreads, 0, stream>>>(
        static_cast<const T *>(x.data), static_cast<T *>(y.data), n, map, mod,
        offset);
    return 0;
  });
  return checkLaunch(ctx, kernel);
}

//===----------------------------------------------------------------------===//
// Blocks: concat and split
//===----------------------------------------------------------------------===//

/// Copies `rows` rows of `cols` elements between pitched layouts.
template <typename T>
__global__ void copyRowsKernel(const T *src, int64_t srcPitch, T *dst,
                               int64_t dstPitch, int64_t rows, int64_t cols) {
  CLEAVE_GRID_LOOP(i, rows * cols) {
    int64_t r = i / cols, c = i % cols;
    dst[r * dstPitch + c] = src[r * srcPitch + c];
  }
}

int32_t copyRows(CleaveContext *ctx, const char *kernel, size_t bytes,
                 const void *src, int64_t srcPitch, void *dst, int64_t dstPitch,
                 int64_t rows, int64_t cols) {
  if (rows * cols == 0)
    return 0;
  cudaStream_t stream = streamOf(ctx);
  int32_t status = dispatchBytes(bytes, [&](auto t) {
    using T = decltype(t);
    copyRowsKernel<T><<<blocksFor(rows * cols), kThreads, 0, stream>>>(
        static_cast<const T *>(src), srcPitch, static_cast<T *>(dst), dstPitch,
        rows, cols);
    return 0;
  });
  if (status)
    return fail(ctx, kernel, "unsupported element size %zu", bytes);
  return checkLaunch(ctx, kernel);
}

//===----------------------------------------------------------------------===//
// Gather
//===----------------------------------------------------------------------===//

/// out[p, j, q] = data[p, indices[j], q].
template <typename T, typename I>
__global__ void gatherKernel(const T *data, const I *indices, T *out,
                             int64_t numIndices, int64_t axisSize,
                             int64_t inner, int64_t n, int axis,
                             DeviceErrorSite site) {
  CLEAVE_GRID_LOOP(i, n) {
    int64_t q = i % inner;
    int64_t j = (i / inner) % numIndices;
    int64_t p = i / (inner * numIndices);
    int64_t index = static_cast<int64_t>(indices[j]);
    int64_t k = resolveIndex(index, axisSize);
    if (k < 0) {
      recordIndexError(site, kGatherIndexOutOfRange, index, axisSize, axis);
      out[i] = T(0);
      continue;
    }
    out[i] = data[(p * axisSize + k) * inner + q];
  }
}

//===----------------------------------------------------------------------===//
// Pad
//===----------------------------------------------------------------------===//

/// Maps a padded coordinate to the input for the reflect, edge and wrap
/// modes; constant mode returns -1 outside the input.
__device__ __forceinline__ int64_t padSource(int64_t c, int64_t size,
                                             int mode) {
  if (c >= 0 && c < size)
    return c;
  switch (mode) {
  case CLEAVE_PAD_REFLECT: { // ... 2 1 | 0 1 2 | 1 0 ...
    if (size == 1)
      return 0;
    int64_t period = 2 * (size - 1);
    int64_t m = c % period;
    if (m < 0)
      m += period;
    return m < size ? m : period - m;
  }
  case CLEAVE_PAD_EDGE:
    return c < 0 ? 0 : size - 1;
  case CLEAVE_PAD_WRAP: {
    int64_t m = c % size;
    return m < 0 ? m + size : m;
  }
  default:
    return -1;
  }
}

template <typename T>
__global__ void padKernel(const T *in, T *out, int64_t n, Dims outDims,
                          Dims inDims, Dims begins, int mode, T value) {
  CLEAVE_GRID_LOOP(i, n) {
    int64_t src = 0;
    bool inside = true;
    forEachCoord(outDims, i, [&](int d, int64_t c) {
      int64_t s = padSource(c - begins.size[d], inDims.size[d], mode);
      if (s < 0)
        inside = false;
      else
        src += s * inDims.stride[d];
    });
    out[i] = inside ? in[src] : value;
  }
}

/// The bytes of `value` in `dtype`, in the low bytes of a uint64_t.
bool encodeValue(double value, int32_t dtype, uint64_t &bits) {
  bits = 0;
  auto put = [&](auto v) { std::memcpy(&bits, &v, sizeof(v)); };
  switch (dtype) {
  case CLEAVE_F32:
    put(static_cast<float>(value));
    return true;
  case CLEAVE_F64:
    put(value);
    return true;
  case CLEAVE_F16:
    put(__half(static_cast<float>(value)));
    return true;
  case CLEAVE_BF16:
    put(__nv_bfloat16(static_cast<float>(value)));
    return true;
  case CLEAVE_I64:
    put(static_cast<int64_t>(value));
    return true;
  case CLEAVE_I32:
    put(static_cast<int32_t>(value));
    return true;
  case CLEAVE_I16:
    put(static_cast<int16_t>(value));
    return true;
  case CLEAVE_I8:
    put(static_cast<int8_t>(value));
    return true;
  case CLEAVE_U8:
    put(static_cast<uint8_t>(value));
    return true;
  case CLEAVE_BOOL:
    put(static_cast<uint8_t>(value != 0));
    return true;
  case CLEAVE_U16:
    put(static_cast<uint16_t>(value));
    return true;
  case CLEAVE_U32:
    put(static_cast<uint32_t>(value));
    return true;
  case CLEAVE_U64:
    put(static_cast<uint64_t>(value));
    return true;
  default:
    return false;
  }
}

} // namespace

//===----------------------------------------------------------------------===//
// Shared with other kernel files
//===----------------------------------------------------------------------===//

int32_t cleave::cuda::broadcastInto(CleaveContext *ctx, const char *kernel,
                                    const CleaveTensor &x,
                                    const CleaveTensor &y) {
  if (x.rank > y.rank)
    return fail(ctx, kernel, "cannot broadcast rank %d to rank %d", x.rank,
                y.rank);
  Dims in = dimsOf(x);
  Dims map = dimsOf(y);
  int shift = y.rank - x.rank;
  for (int d = 0; d < y.rank; ++d) {
    int xd = d - shift;
    if (xd < 0 || x.shape[xd] == 1) {
      map.stride[d] = 0;
      continue;
    }
    if (x.shape[xd] != y.shape[d])
      return fail(ctx, kernel,
                  "dimension %d of size %lld does not broadcast "
                  "to %lld",
                  xd, (long long)x.shape[xd], (long long)y.shape[d]);
    map.stride[d] = in.stride[xd];
  }
  return stridedGather(ctx, kernel, x, y, map, Dims(), 0);
}

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

int32_t cleave::cuda::kernels::transpose(CleaveContext *ctx,
                                         const args::Transpose &args) {
  const CleaveTensor &x = args.x();
  const CleaveTensor &y = args.y();
  Dims inDims = dimsOf(x);
  Dims map = dimsOf(y);
  if (y.rank != x.rank)
    return fail(ctx, "transpose", "input and output ranks differ");
  for (int d = 0; d < y.rank; ++d) {
    int64_t p = args.perm()[d];
    if (p < 0 || p >= x.rank || x.shape[p] != y.shape[d])
      return fail(ctx, "transpose", "bad permutation entry %lld", (long long)p);
    map.stride[d] = inDims.stride[p];
  }
  return stridedGather(ctx, "transpose", x, y, map, Dims(), 0);
}

int32_t cleave::cuda::kernels::concat(CleaveContext *ctx,
                                      const args::Concat &args) {
  const CleaveTensor &y = args.y();
  int axis = static_cast<int>(args.axis());
  if (axis < 0 || axis >= y.rank)
    return fail(ctx, "concat", "axis %d out of range", axis);
  size_t bytes = dtypeSize(y.dtype);
  int64_t outer = product(y.shape, 0, axis);
  int64_t inner = product(y.shape, axis + 1, y.rank);
  int64_t dstPitch = y.shape[axis] * inner;
  int64_t offset = 0;
  for (const CleaveTensor &part : args.inputs()) {
    int64_t cols = part.shape[axis] * inner;
    if (int32_t status = copyRows(ctx, "concat", bytes, part.data, cols,
                                  static_cast<char *>(y.data) + offset * bytes,
                                  dstPitch, outer, cols))
      return status;
    offset += cols;
  }
  return 0;
}

int32_t cleave::cuda::kernels::split(CleaveContext *ctx,
                                     const args::Split &args) {
  const CleaveTensor &x = args.x();
  int axis = static_cast<int>(args.axis());
  if (axis < 0 || axis >= x.rank)
    return fail(ctx, "split", "axis %d out of range", axis);
  size_t bytes = dtypeSize(x.dtype);
  int64_t outer = product(x.shape, 0, axis);
  int64_t inner = product(x.shape, axis + 1, x.rank);
  int64_t srcPitch = x.shape[axis] * inner;
  int64_t offset = 0;
  for (CleaveTensor &part : args.outputs()) {
    int64_t cols = part.shape[axis] * inner;
    if (part.data)
      if (int32_t status =
              copyRows(ctx, "split", bytes,
                       static_cast<const char *>(x.data) + offset * bytes,
                       srcPitch, part.data, cols, outer, cols))
        return status;
    offset += cols;
  }
  return 0;
}

int32_t cleave::cuda::kernels::slice(CleaveContext *ctx,
                                     const args::Slice &args) {
  const CleaveTensor &x = args.x();
  const CleaveTensor &y = args.y();
  int rank = x.rank;
  const int64_t *starts = args.starts().data(), *steps = args.steps().data();
  Dims inDims = dimsOf(x);
  Dims map = dimsOf(y);
  int64_t offset = 0;
  for (int d = 0; d < rank; ++d) {
    offset += starts[d] * inDims.stride[d];
    map.stride[d] = steps[d] * inDims.stride[d];
  }
  return stridedGather(ctx, "slice", x, y, map, Dims(), offset);
}

int32_t cleave::cuda::kernels::tile(CleaveContext *ctx,
                                    const args::Unary &args) {
  const CleaveTensor &x = args.x();
  const CleaveTensor &y = args.y();
  if (x.rank != y.rank)
    return fail(ctx, "tile", "input and output ranks differ");
  Dims inDims = dimsOf(x);
  Dims map = dimsOf(y);
  for (int d = 0; d < y.rank; ++d)
    map.stride[d] = inDims.stride[d];
  return stridedGather(ctx, "tile", x, y, map, inDims, 0);
}

int32_t cleave::cuda::kernels::expand(CleaveContext *ctx,
                                      const args::Unary &args) {
  return broadcastInto(ctx, "expand", args.x(), args.y());
}

int32_t cleave::cuda::kernels::copy(CleaveContext *ctx,
                                    const args::Unary &args) {
  const CleaveTensor &x = args.x();
  CleaveTensor &y = args.y();
  size_t bytes = numElements(x) * dtypeSize(x.dtype);
  if (bytes == 0 || x.data == y.data)
    return 0;
  cudaError_t status = cudaMemcpyAsync(y.data, x.data, bytes,
                                       cudaMemcpyDeviceToDevice, streamOf(ctx));
  if (status != cudaSuccess)
    return fail(ctx, "copy", "%s", cudaGetErrorString(status));
  return 0;
}

int32_t cleave::cuda::kernels::gather(CleaveContext *ctx,
                                      const args::Gather &args) {
  const CleaveTensor &data = args.data();
  const CleaveTensor &indices = args.indices();
  const CleaveTensor &y = args.y();
  int axis = static_cast<int>(args.axis());
  if (axis < 0 || axis >= data.rank)
    return fail(ctx, "gather", "axis %d out of range", axis);
  int64_t n = numElements(y);
  if (n == 0)
    return 0;
  int64_t axisSize = data.shape[axis];
  int64_t inner = product(data.shape, axis + 1, data.rank);
  int64_t numIndices = numElements(indices);
  DeviceErrorSite site = deviceErrorSite(ctx);
  cudaStream_t stream = streamOf(ctx);
  auto launch = [&](auto index) {
    using I = decltype(index);
    return dispatchBytes(dtypeSize(data.dtype), [&](auto t) {
      using T = decltype(t);
      gatherKernel<T, I><<<blocksFor(n), kThreads, 0, stream>>>(
          static_cast<const T *>(data.data),
          static_cast<const I *>(indices.data), static_cast<T *>(y.data),
          numIndices, axisSize, inner, n, axis, site);
      return 0;
    });
  };
  int32_t status;
  if (indices.dtype == CLEAVE_I64)
    status = launch(int64_t());
  else if (indices.dtype == CLEAVE_I32)
    status = launch(int32_t());
  else
    return fail(ctx, "gather", "indices must be int64 or int32");
  if (status)
    return fail(ctx, "gather", "unsupported element type %d", data.dtype);
  return checkLaunch(ctx, "gather");
}

int32_t cleave::cuda::kernels::pad(CleaveContext *ctx, const args::Pad &args) {
  const CleaveTensor &x = args.x();
  const CleaveTensor &y = args.y();
  int rank = x.rank;
  int mode = static_cast<int>(args.mode());
  if (mode < CLEAVE_PAD_CONSTANT || mode > CLEAVE_PAD_WRAP)
    return fail(ctx, "pad", "unknown mode %d", mode);
  int64_t n = numElements(y);
  if (n == 0)
    return 0;
  if (numElements(x) == 0 && mode != CLEAVE_PAD_CONSTANT)
    return fail(ctx, "pad", "cannot pad an empty tensor in mode %d", mode);
  Dims begins;
  begins.rank = rank;
  for (int d = 0; d < rank; ++d)
    begins.size[d] = args.pads()[d];
  uint64_t bits;
  if (!encodeValue(args.value(), x.dtype, bits))
    return fail(ctx, "pad", "unsupported element type %d", x.dtype);
  cudaStream_t stream = streamOf(ctx);
  dispatchBytes(dtypeSize(x.dtype), [&](auto t) {
    using T = decltype(t);
    T value;
    std::memcpy(&value, &bits, sizeof(T));
    padKernel<T><<<blocksFor(n), kThreads, 0, stream>>>(
        static_cast<const T *>(x.data), static_cast<T *>(y.data), n, dimsOf(y),
        dimsOf(x), begins, mode, value);
    return 0;
  });
  return checkLaunch(ctx, "pad");
}
