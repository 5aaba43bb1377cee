//===- VectorMath.h - vector forms of the math library ------------*- C++
//-*-===//
//
// Declares that the math functions the kernels and the fused loops call
// have vector forms under the x86-64 vector function ABI (_ZGVdN8v_expf:
// eight floats in a ymm register, ...), so that GCC vectorises a loop that
// calls them instead of calling the scalar function per element. glibc's
// libmvec implements them (within 4 ulp), for SSE, AVX, AVX2 and AVX-512;
// libm's link script brings it in where a program needs it. glibc declares
// the same only under -ffast-math, which the kernels and programs do not
// use (they keep NaNs and signed zeros); vectorising a call needs only
// -fno-math-errno, which they are built with.
//
// SLEEF's library of the same ABI (libsleefgnuabi) is not an alternative:
// it calls its own functions through the dynamic linker, so in a process
// that also has libmvec (any that was linked with these declarations and
// libm) they resolve to libmvec's IFUNCs before libmvec is relocated, and
// the process crashes at load.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_RT_VECTORMATH_H
#define CLEAVE_RT_VECTORMATH_H

#include <math.h>

// GCC's host code only: Clang reads the vector forms from -fveclib, and
// nvcc's device code has its own.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) &&         \
    !defined(__CUDACC__) && defined(__GLIBC__)
#define CLEAVE_VECTOR_FORM __attribute__((simd("notinbranch")))
extern "C" {
// In libmvec since glibc 2.22.
CLEAVE_VECTOR_FORM float expf(float) noexcept;
CLEAVE_VECTOR_FORM double exp(double) noexcept;
CLEAVE_VECTOR_FORM float logf(float) noexcept;
CLEAVE_VECTOR_FORM double log(double) noexcept;
CLEAVE_VECTOR_FORM float sinf(float) noexcept;
CLEAVE_VECTOR_FORM double sin(double) noexcept;
CLEAVE_VECTOR_FORM float cosf(float) noexcept;
CLEAVE_VECTOR_FORM double cos(double) noexcept;
CLEAVE_VECTOR_FORM float powf(float, float) noexcept;
CLEAVE_VECTOR_FORM double pow(double, double) noexcept;
#if __GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 35)
// Since glibc 2.35.
CLEAVE_VECTOR_FORM float expm1f(float) noexcept;
CLEAVE_VECTOR_FORM double expm1(double) noexcept;
CLEAVE_VECTOR_FORM float log1pf(float) noexcept;
CLEAVE_VECTOR_FORM double log1p(double) noexcept;
CLEAVE_VECTOR_FORM float tanhf(float) noexcept;
CLEAVE_VECTOR_FORM double tanh(double) noexcept;
CLEAVE_VECTOR_FORM float erff(float) noexcept;
CLEAVE_VECTOR_FORM double erf(double) noexcept;
#endif
}
#undef CLEAVE_VECTOR_FORM
#endif

#endif // CLEAVE_RT_VECTORMATH_H
