//===- Elements.h - element arithmetic the host communicators share -*- C++
//-*-===//
//
// float16 and bfloat16 have no MPI type and no C++ arithmetic: reductions
// widen them to float32 and round once at the end. Averages divide in the
// element type (integer division for integers), as MPI's sum would be.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_RT_COMM_ELEMENTS_H
#define CLEAVE_RT_COMM_ELEMENTS_H

#include "cleave/rt/Communicator.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace cleave::rt::elements {

inline float halfToFloat(uint16_t half) {
  uint32_t sign = static_cast<uint32_t>(half & 0x8000) << 16;
  uint32_t exponent = (half >> 10) & 0x1f, mantissa = half & 0x3ff;
  uint32_t bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000 | (mantissa << 13);
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    bits = sign;
  } else {
    exponent = 113;
    while (!(mantissa & 0x400)) {
      mantissa <<= 1;
      --exponent;
    }
    bits = sign | (exponent << 23) | ((mantissa & 0x3ff) << 13);
  }
  float value;
  std::memcpy(&value, &bits, 4);
  return value;
}

inline uint16_t floatToHalf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000);
  uint32_t magnitude = bits & 0x7fffffff;
  if (magnitude > 0x7f800000) // NaN
    return sign | 0x7e00;
  if (magnitude >= 0x477ff000) // rounds to infinity
    return sign | 0x7c00;
  if (magnitude < 0x38800000) { // subnormal or zero: round to nearest even
    float scaled;
    uint32_t absBits = magnitude;
    std::memcpy(&scaled, &absBits, 4);
    scaled *= 16777216.0f; // 2^24: units of the smallest subnormal
    uint32_t units = static_cast<uint32_t>(scaled);
    float rest = scaled - static_cast<float>(units);
    if (rest > 0.5f || (rest == 0.5f && (units & 1)))
      ++units;
    return sign | static_cast<uint16_t>(units);
  }
  uint32_t rounded = magnitude + 0xfff + ((magnitude >> 13) & 1);
  return sign | static_cast<uint16_t>((rounded - 0x38000000) >> 13);
}

inline float bfloat16ToFloat(uint16_t value) {
  uint32_t bits = static_cast<uint32_t>(value) << 16;
  float result;
  std::memcpy(&result, &bits, 4);
  return result;
}

inline uint16_t floatToBfloat16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  if ((bits & 0x7fffffff) > 0x7f800000)
    return static_cast<uint16_t>((bits >> 16) | 0x40);
  return static_cast<uint16_t>((bits + 0x7fff + ((bits >> 16) & 1)) >> 16);
}

inline bool isHalf(CleaveDType dtype) {
  return dtype == CLEAVE_F16 || dtype == CLEAVE_BF16;
}

/// `count` float16 or bfloat16 elements as float32.
inline std::vector<float> widen(const void *data, std::size_t count,
                                CleaveDType dtype) {
  std::vector<float> wide(count);
  const auto *half = static_cast<const uint16_t *>(data);
  for (std::size_t i = 0; i < count; ++i)
    wide[i] =
        dtype == CLEAVE_F16 ? halfToFloat(half[i]) : bfloat16ToFloat(half[i]);
  return wide;
}

inline void narrow(const std::vector<float> &wide, void *data,
                   CleaveDType dtype) {
  auto *half = static_cast<uint16_t *>(data);
  for (std::size_t i = 0; i < wide.size(); ++i)
    half[i] =
        dtype == CLEAVE_F16 ? floatToHalf(wide[i]) : floatToBfloat16(wide[i]);
}

/// Calls `f(static_cast<T *>(nullptr))` with T the C++ type of a dtype that
/// has one (bool as uint8_t); false for float16, bfloat16 and unknown ones.
template <typename F> bool withNativeType(CleaveDType dtype, F &&f) {
  switch (dtype) {
  case CLEAVE_F32:
    return f(static_cast<float *>(nullptr)), true;
  case CLEAVE_F64:
    return f(static_cast<double *>(nullptr)), true;
  case CLEAVE_I64:
    return f(static_cast<int64_t *>(nullptr)), true;
  case CLEAVE_I32:
    return f(static_cast<int32_t *>(nullptr)), true;
  case CLEAVE_I16:
    return f(static_cast<int16_t *>(nullptr)), true;
  case CLEAVE_I8:
    return f(static_cast<int8_t *>(nullptr)), true;
  case CLEAVE_U8:
  case CLEAVE_BOOL:
    return f(static_cast<uint8_t *>(nullptr)), true;
  case CLEAVE_U16:
    return f(static_cast<uint16_t *>(nullptr)), true;
  case CLEAVE_U32:
    return f(static_cast<uint32_t *>(nullptr)), true;
  case CLEAVE_U64:
    return f(static_cast<uint64_t *>(nullptr)), true;
  default:
    return false;
  }
}

/// Divides `count` elements by `divisor` in place (an average's last step).
inline void divide(void *data, std::size_t count, CleaveDType dtype,
                   int divisor) {
  bool known = withNativeType(dtype, [&](auto *type) {
    using T = std::remove_pointer_t<decltype(type)>;
    T *values = static_cast<T *>(data);
    for (std::size_t i = 0; i < count; ++i)
      values[i] = static_cast<T>(values[i] / divisor);
  });
  if (!known || dtype == CLEAVE_BOOL)
    throw Error(std::string("cannot average ") + dtypeName(dtype));
}

/// `out` = the reduction of `blocks` blocks of `count` elements each, laid
/// out one after another; bool sums are "any" and products "all"; float16
/// and bfloat16 are reduced in float32 and rounded once.
inline void reduceBlocks(void *out, const void *blocks, int numBlocks,
                         std::size_t count, CleaveDType dtype,
                         Reduction reduction) {
  auto fold = [&](auto *values, auto *result) {
    using T = std::remove_pointer_t<decltype(result)>;
    for (std::size_t i = 0; i < count; ++i) {
      T acc = values[i];
      for (int b = 1; b < numBlocks; ++b)
        acc = combine(reduction, acc, T(values[b * count + i]),
                      dtype == CLEAVE_BOOL);
      result[i] = acc;
    }
  };
  if (isHalf(dtype)) {
    std::vector<float> wide = widen(blocks, count * numBlocks, dtype);
    std::vector<float> result(count);
    fold(wide.data(), result.data());
    if (reduction == Reduction::Average)
      divide(result.data(), count, CLEAVE_F32, numBlocks);
    narrow(result, out, dtype);
    return;
  }
  bool known = withNativeType(dtype, [&](auto *type) {
    using T = std::remove_pointer_t<decltype(type)>;
    // `out` may be one of the blocks: fold into a copy.
    std::vector<T> result(count);
    fold(static_cast<const T *>(blocks), result.data());
    std::memcpy(out, result.data(), count * sizeof(T));
  });
  if (!known)
    throw Error(std::string("cannot reduce ") + dtypeName(dtype));
  if (reduction == Reduction::Average)
    divide(out, count, dtype, numBlocks);
}

} // namespace cleave::rt::elements

#endif // CLEAVE_RT_COMM_ELEMENTS_H
