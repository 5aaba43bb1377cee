//===- Scalar.h - scalar functions of fused elementwise kernels ---*- C++ -*-===//
//
// The fused kernels cleave emits compute each element with these functions,
// so the C++ and the CUDA emitters print the same expression and the
// semantics (ONNX's) are written once. Float and double take the math
// library; integer and boolean forms exist where ONNX defines them.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_RT_SCALAR_H
#define CLEAVE_RT_SCALAR_H

#include "cleave/rt/VectorMath.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#ifdef __CUDACC__
#define CLEAVE_HD __host__ __device__ __forceinline__
#else
#define CLEAVE_HD inline
#endif

namespace cl {

// Math functions, overloaded so that the emitted expression does not depend
// on the element type.
CLEAVE_HD float exp_(float x) { return expf(x); }
CLEAVE_HD double exp_(double x) { return ::exp(x); }
CLEAVE_HD float log_(float x) { return logf(x); }
CLEAVE_HD double log_(double x) { return ::log(x); }
CLEAVE_HD float sqrt_(float x) { return sqrtf(x); }
CLEAVE_HD double sqrt_(double x) { return ::sqrt(x); }
CLEAVE_HD float erf_(float x) { return erff(x); }
CLEAVE_HD double erf_(double x) { return ::erf(x); }
CLEAVE_HD float tanh_(float x) { return tanhf(x); }
CLEAVE_HD double tanh_(double x) { return ::tanh(x); }
CLEAVE_HD float sin_(float x) { return sinf(x); }
CLEAVE_HD double sin_(double x) { return ::sin(x); }
CLEAVE_HD float cos_(float x) { return cosf(x); }
CLEAVE_HD double cos_(double x) { return ::cos(x); }
CLEAVE_HD float floor_(float x) { return floorf(x); }
CLEAVE_HD double floor_(double x) { return ::floor(x); }
CLEAVE_HD float ceil_(float x) { return ceilf(x); }
CLEAVE_HD double ceil_(double x) { return ::ceil(x); }
CLEAVE_HD float pow_(float x, float y) { return powf(x, y); }
CLEAVE_HD double pow_(double x, double y) { return ::pow(x, y); }
CLEAVE_HD float log1p_(float x) { return log1pf(x); }
CLEAVE_HD double log1p_(double x) { return ::log1p(x); }
CLEAVE_HD float rint_(float x) { return rintf(x); }
CLEAVE_HD double rint_(double x) { return ::rint(x); }
CLEAVE_HD float fmod_(float x, float y) { return fmodf(x, y); }
CLEAVE_HD double fmod_(double x, double y) { return ::fmod(x, y); }
CLEAVE_HD float copysign_(float x, float y) { return copysignf(x, y); }
CLEAVE_HD double copysign_(double x, double y) { return ::copysign(x, y); }

template <typename T> CLEAVE_HD T neg(T x) { return -x; }
template <typename T> CLEAVE_HD T abs(T x) { return x < T(0) ? -x : x; }
template <typename T> CLEAVE_HD T min(T a, T b) {
  // NaN propagates, as in onnxruntime.
  return (a != a) ? a : (b < a ? b : a);
}
template <typename T> CLEAVE_HD T max(T a, T b) {
  return (a != a) ? a : (b > a ? b : a);
}
/// Integer division truncates toward zero; what C leaves undefined is
/// defined as the compiler folds it: x / 0 is 0, MIN / -1 is MIN. Emitted
/// for integer types only (floating-point division is the infix `/`).
template <typename T> CLEAVE_HD T div(T a, T b) {
  if (b == T(0))
    return T(0);
  // MIN / -1 overflows (and traps on x86); every other a / -1 is -a.
  const T minimum = T(uint64_t(1) << (sizeof(T) * 8 - 1));
  if (T(-1) < T(0) && b == T(-1))
    return a == minimum ? a : T(-a);
  return a / b;
}
/// Integer remainder with the sign of the dividend (C's `%`), defined as
/// cl::div defines the quotient: x mod 0 is 0, and MIN mod -1 (which traps
/// on x86) is 0, as every x mod -1 is.
template <typename T> CLEAVE_HD T fmod(T a, T b) {
  if (b == T(0) || (T(-1) < T(0) && b == T(-1)))
    return T(0);
  return T(a % b);
}
CLEAVE_HD float fmod(float a, float b) { return fmod_(a, b); }
CLEAVE_HD double fmod(double a, double b) { return fmod_(a, b); }
/// Remainder with the sign of the divisor (Python's `%`, numpy.mod).
template <typename T> CLEAVE_HD T mod(T a, T b) {
  T r = fmod(a, b);
  return r != T(0) && (r < T(0)) != (b < T(0)) ? T(r + b) : r;
}
/// numpy.mod of floats: a zero remainder takes the divisor's sign; a NaN
/// remainder (x mod 0, inf mod y) stays NaN.
template <typename T> CLEAVE_HD T float_mod(T a, T b) {
  T r = fmod_(a, b);
  if (r == T(0))
    return copysign_(T(0), b);
  return (r < T(0)) != (b < T(0)) ? r + b : r;
}
CLEAVE_HD float mod(float a, float b) { return float_mod(a, b); }
CLEAVE_HD double mod(double a, double b) { return float_mod(a, b); }
template <typename T> CLEAVE_HD T sign(T x) {
  // NaN stays NaN; both zeros give +0.
  return x > T(0) ? T(1) : (x < T(0) ? T(-1) : (x == T(0) ? T(0) : x));
}
/// Rounds halfway cases to even (the default rounding mode, which emitted
/// programs never change).
template <typename T> CLEAVE_HD T round(T x) { return rint_(x); }
/// The bfloat16 nearest `x` (ties to even), as a float: what a cast to
/// bfloat16 computes in a fused loop, whose values are floats. NaN stays
/// NaN; a value past the largest bfloat16 rounds to infinity.
CLEAVE_HD float round_bf16(float x) {
  uint32_t bits;
  memcpy(&bits, &x, 4);
  if ((bits & 0x7fffffffu) > 0x7f800000u)
    return x;
  bits += 0x7fffu + ((bits >> 16) & 1u);
  bits &= 0xffff0000u;
  memcpy(&x, &bits, 4);
  return x;
}
/// The float16 nearest `x` (ties to even), as a float.
CLEAVE_HD float round_f16(float x) {
  float a = x < 0.0f ? -x : x;
  // Halfway between 65504, the largest float16, and 65536 rounds to even:
  // to infinity.
  if (!(a < 65520.0f))
    return a != a ? x : copysign_(INFINITY, x);
  // Below 2^-14 float16 is subnormal: a multiple of 2^-24.
  if (a < 6.103515625e-05f)
    return copysign_(rint_(a * 16777216.0f) * 5.9604644775390625e-08f, x);
  uint32_t bits;
  memcpy(&bits, &x, 4);
  bits += 0xfffu + ((bits >> 13) & 1u);
  bits &= ~0x1fffu;
  memcpy(&x, &bits, 4);
  return x;
}
/// The bits of the bfloat16 nearest `x` (ties to even); a NaN stays a NaN
/// (quiet).
CLEAVE_HD uint16_t bfloat16_bits(float x) {
  uint32_t bits;
  memcpy(&bits, &x, 4);
  if ((bits & 0x7fffffffu) > 0x7f800000u)
    return static_cast<uint16_t>((bits >> 16) | 0x40u);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}
/// The float of bfloat16 bits (exact).
CLEAVE_HD float bfloat16_value(uint16_t bits) {
  uint32_t wide = static_cast<uint32_t>(bits) << 16;
  float x;
  memcpy(&x, &wide, 4);
  return x;
}
/// The bits of the IEEE float16 nearest `x` (ties to even); a NaN stays a
/// NaN (quiet).
CLEAVE_HD uint16_t float16_bits(float x) {
  uint32_t bits;
  memcpy(&bits, &x, 4);
  uint32_t sign = (bits >> 16) & 0x8000u;
  int32_t exponent = static_cast<int32_t>((bits >> 23) & 0xff) - 127 + 15;
  uint32_t mantissa = bits & 0x7fffffu;
  if (((bits >> 23) & 0xff) == 0xff)
    return static_cast<uint16_t>(sign | 0x7c00u | (mantissa ? 0x200u : 0u));
  if (exponent >= 31)
    return static_cast<uint16_t>(sign | 0x7c00u);
  if (exponent <= 0) {
    // A subnormal float16 (or zero): a multiple of 2^-24.
    if (exponent < -10)
      return static_cast<uint16_t>(sign);
    mantissa |= 0x800000u;
    uint32_t shift = static_cast<uint32_t>(14 - exponent);
    uint32_t half = mantissa >> shift;
    uint32_t rest = mantissa & ((1u << shift) - 1);
    uint32_t midpoint = 1u << (shift - 1);
    if (rest > midpoint || (rest == midpoint && (half & 1)))
      ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = (static_cast<uint32_t>(exponent) << 10) | (mantissa >> 13);
  uint32_t rest = mantissa & 0x1fffu;
  // A carry into the exponent is the right rounding, up to infinity.
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1)))
    ++half;
  return static_cast<uint16_t>(sign | half);
}
/// The float of float16 bits (exact).
CLEAVE_HD float float16_value(uint16_t bits) {
  uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  uint32_t exponent = (bits >> 10) & 0x1fu;
  uint32_t mantissa = bits & 0x3ffu;
  uint32_t wide;
  if (exponent == 0x1f) {
    wide = sign | 0x7f800000u | (mantissa << 13);
  } else if (exponent == 0) {
    float magnitude = static_cast<float>(mantissa) * 5.9604644775390625e-08f;
    return sign ? -magnitude : magnitude;
  } else {
    wide = sign | ((exponent + 112u) << 23) | (mantissa << 13);
  }
  float x;
  memcpy(&x, &wide, 4);
  return x;
}
/// Host C++ has no half-precision types: a host program stores a bfloat16
/// or float16 element as its bits, and its fused loops, which compute in
/// float, convert where they load or store one.
struct bfloat16 {
  uint16_t bits;
  CLEAVE_HD explicit bfloat16(float x) : bits(bfloat16_bits(x)) {}
  CLEAVE_HD explicit operator float() const { return bfloat16_value(bits); }
};
struct float16 {
  uint16_t bits;
  CLEAVE_HD explicit float16(float x) : bits(float16_bits(x)) {}
  CLEAVE_HD explicit operator float() const { return float16_value(bits); }
};
template <typename T> CLEAVE_HD bool is_nan(T x) { return x != x; }
template <typename T> CLEAVE_HD bool is_pos_inf(T x) {
  return x == T(INFINITY);
}
template <typename T> CLEAVE_HD bool is_neg_inf(T x) {
  return x == -T(INFINITY);
}
template <typename T> CLEAVE_HD bool is_inf(T x) {
  return is_pos_inf(x) || is_neg_inf(x);
}
template <typename T> CLEAVE_HD T sqrt(T x) { return sqrt_(x); }
template <typename T> CLEAVE_HD T reciprocal(T x) { return T(1) / x; }
template <typename T> CLEAVE_HD T exp(T x) { return exp_(x); }
template <typename T> CLEAVE_HD T log(T x) { return log_(x); }
template <typename T> CLEAVE_HD T erf(T x) { return erf_(x); }
template <typename T> CLEAVE_HD T tanh(T x) { return tanh_(x); }
template <typename T> CLEAVE_HD T sin(T x) { return sin_(x); }
template <typename T> CLEAVE_HD T cos(T x) { return cos_(x); }
template <typename T> CLEAVE_HD T floor(T x) { return floor_(x); }
template <typename T> CLEAVE_HD T ceil(T x) { return ceil_(x); }
template <typename T> CLEAVE_HD T sigmoid(T x) {
  return T(1) / (T(1) + exp_(-x));
}
template <typename T> CLEAVE_HD T softplus(T x) {
  // log(1 + exp(x)) without overflow for large x.
  return x > T(20) ? x : log1p_(exp_(x));
}
template <typename T> CLEAVE_HD T relu(T x) { return x > T(0) ? x : T(0); }
template <typename T> CLEAVE_HD T leaky_relu(T x, T alpha) {
  return x >= T(0) ? x : alpha * x;
}
template <typename T> CLEAVE_HD T elu(T x, T alpha) {
  return x >= T(0) ? x : alpha * (exp_(x) - T(1));
}
template <typename T> CLEAVE_HD T gelu_erf(T x) {
  return T(0.5) * x * (T(1) + erf_(x * T(0.70710678118654752440)));
}
template <typename T> CLEAVE_HD T gelu_tanh(T x) {
  return T(0.5) * x *
         (T(1) + tanh_(T(0.79788456080286535588) *
                       (x + T(0.044715) * x * x * x)));
}
template <typename T> CLEAVE_HD T hard_sigmoid(T x, T alpha, T beta) {
  T y = alpha * x + beta;
  return y < T(0) ? T(0) : (y > T(1) ? T(1) : y);
}
template <typename T> CLEAVE_HD T hard_swish(T x) {
  return x * hard_sigmoid(x, T(1) / T(6), T(0.5));
}
template <typename T> CLEAVE_HD T clip(T x, T lo, T hi) {
  return x < lo ? lo : (x > hi ? hi : x);
}
template <typename T> CLEAVE_HD T pow(T x, T y) { return pow_(x, y); }
/// Integer power by squaring; ONNX Pow on integers.
CLEAVE_HD int64_t pow(int64_t x, int64_t y) {
  if (y < 0)
    return x == 1 ? 1 : (x == -1 ? ((y & 1) ? -1 : 1) : 0);
  int64_t r = 1;
  while (y) {
    if (y & 1)
      r *= x;
    x *= x;
    y >>= 1;
  }
  return r;
}
CLEAVE_HD int32_t pow(int32_t x, int32_t y) {
  return (int32_t)pow((int64_t)x, (int64_t)y);
}
template <typename T> CLEAVE_HD bool equal(T a, T b) { return a == b; }
template <typename T> CLEAVE_HD bool less(T a, T b) { return a < b; }
template <typename T> CLEAVE_HD bool less_equal(T a, T b) { return a <= b; }
template <typename T> CLEAVE_HD bool greater(T a, T b) { return a > b; }
template <typename T> CLEAVE_HD bool greater_equal(T a, T b) { return a >= b; }
CLEAVE_HD bool logical_and(bool a, bool b) { return a && b; }
CLEAVE_HD bool logical_or(bool a, bool b) { return a || b; }
CLEAVE_HD bool logical_not(bool a) { return !a; }
template <typename T> CLEAVE_HD T select(bool c, T a, T b) { return c ? a : b; }

} // namespace cl

#endif // CLEAVE_RT_SCALAR_H
