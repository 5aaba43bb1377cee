//===- Checked.h - sizes from outside, computed without wrapping --*- C++ -*-===//
//
// Shapes and counts that come from files and command lines (ONNX dims,
// .npy headers, manifests, --input-shape) are multiplied here, once, for
// the importer, the planner, the bundle reader and the runtime: a product
// that does not fit is reported, never wrapped into a small buffer.
// Dependency-free, like the rest of the runtime's public headers.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_RT_CHECKED_H
#define CLEAVE_RT_CHECKED_H

#include <cstdint>
#include <limits>

namespace cleave::rt {

/// The largest tensor, in bytes, that cleave plans or allocates: 2^62, far
/// above any device's memory and far enough below 2^63 that sums of a few
/// such sizes (arena offsets) cannot wrap either.
inline constexpr int64_t kMaxTensorBytes = int64_t(1) << 62;

/// `a * b` into `out`; false when it does not fit in int64.
inline bool checkedMul(int64_t a, int64_t b, int64_t &out) {
  return !__builtin_mul_overflow(a, b, &out);
}

/// `a + b` into `out`; false when it does not fit in int64.
inline bool checkedAdd(int64_t a, int64_t b, int64_t &out) {
  return !__builtin_add_overflow(a, b, &out);
}

/// The elements and bytes of a tensor of `shape` (a range of int64 dims)
/// with `elementBytes` per element; false for a negative dimension or more
/// than kMaxTensorBytes.
template <typename Shape>
bool checkedTensorSize(const Shape &shape, int64_t elementBytes,
                       int64_t &elements, int64_t &bytes) {
  elements = 1;
  for (int64_t dim : shape)
    if (dim < 0 || !checkedMul(elements, dim, elements))
      return false;
  return checkedMul(elements, elementBytes, bytes) && bytes <= kMaxTensorBytes;
}

} // namespace cleave::rt

#endif // CLEAVE_RT_CHECKED_H
