//===- Epilogue.h - what conv and matmul apply to their outputs ---*- C++
//-*-===//
//
// A convolution or a matrix product whose result feeds a residual add and
// an activation applies both itself (CleaveEpilogue): on oneDNN as post-ops
// while the outputs are in registers, on the other paths in one pass over
// the outputs each kernel has just written (Epilogue.cpp). The functions are
// those of the program's own loops (rt/Scalar.h), in their vector forms
// (rt/VectorMath.h), so an epilogue there computes what the unfused loop
// would.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_KERNELS_CPU_EPILOGUE_H
#define CLEAVE_KERNELS_CPU_EPILOGUE_H

#include "KernelSupport.h"

namespace cleave::cpu {

/// What a kernel applies to its outputs after the bias (CleaveEpilogue):
/// nothing, ReLU, a clamp to [min, max], SiLU or GELU; before that, with a
/// `residual` (Y's shape and layout, possibly Y itself), it adds it.
struct Epilogue {
  int64_t kind = CLEAVE_EPILOGUE_NONE;
  float min = 0, max = 0;
  const float *residual = nullptr;

  /// Reads and checks the kind and the clamp's bounds of a kernel's
  /// arguments; returns non-zero after failing.
  int32_t read(CleaveContext *ctx, const char *kernel, int64_t kind, double min,
               double max) {
    if (rt::args::checkEpilogue(ctx, kernel, kind, min, max))
      return 1;
    this->kind = kind;
    this->min = static_cast<float>(min);
    this->max = static_cast<float>(max);
    return 0;
  }

  /// Takes a kernel's optional residual, which must be float32 and hold
  /// Y's `outputs` elements; returns non-zero after failing.
  int32_t readResidual(CleaveContext *ctx, const char *kernel,
                       const CleaveTensor *tensor, int64_t outputs) {
    if (!tensor)
      return 0;
    if (checkF32(ctx, kernel, *tensor, "R"))
      return 1;
    if (numElements(*tensor) != outputs)
      return fail(ctx, kernel, "R has %lld elements, Y %lld",
                  static_cast<long long>(numElements(*tensor)),
                  static_cast<long long>(outputs));
    residual = static_cast<const float *>(tensor->data);
    return 0;
  }

  bool none() const { return kind == CLEAVE_EPILOGUE_NONE && !residual; }
};

// The functions that apply it are compiled per x86-64 level, as the
// kernels are (KernelSupport.h): an inline one would run in every variant
// as the linker's first copy, the baseline's.
inline namespace CLEAVE_CPU_LEVEL {

/// y[i] = epilogue(y[i] + *bias) over y[0..n), as a program's own loops
/// compute it (rt/Scalar.h's relu, min(max(y, min), max) with a NaN kept,
/// x * sigmoid(x), gelu_erf and gelu_tanh); with no bias added where `bias`
/// is null (no + 0, which would turn -0 into +0).
void applyEpilogueRun(const Epilogue &epilogue, float *y, int64_t n,
                      const float *bias);

/// Applies `epilogue` to y[0..n), on up to `threads` threads where y is
/// large: y[i] = epilogue(y[i] + added[i]) with `added` (a residual, any
/// layout: y and it share one), else epilogue(y[i]).
void applyEpilogue(const Epilogue &epilogue, float *y, int64_t n, int threads,
                   const float *added = nullptr);

/// Over rows x n values of y, each row a product's (matmul): y[r][j] =
/// epilogue(y[r][j] + bias[j] + added[r][j]), the bias (n values, or null)
/// added first, then `added` (rows x n, or null; not y).
void applyEpilogueRows(const Epilogue &epilogue, float *y, int64_t rows,
                       int64_t n, const float *bias, const float *added,
                       int threads);

} // namespace CLEAVE_CPU_LEVEL
} // namespace cleave::cpu

#endif // CLEAVE_KERNELS_CPU_EPILOGUE_H
