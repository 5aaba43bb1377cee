//===- Epilogue.h - what conv, matmul and gemm apply to their outputs -*- C++
//-*-===//
//
// A float32 convolution or matrix product whose result feeds a bias add, a
// residual add and an activation applies them itself (CleaveEpilogue, as
// the CPU kernels do): cuBLASLt's and cuDNN's fused epilogues take the
// ones they have (a bias, ReLU, the residual as the product's C); the rest
// is one elementwise pass over the outputs the library call has just
// written (Epilogue.cu), computing rt/Scalar.h's functions, which the
// program's own loops compute.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_RT_CUDA_EPILOGUE_H
#define CLEAVE_RT_CUDA_EPILOGUE_H

#include "cleave/rt/Kernels.h"

#include <cstdint>

namespace cleave::cuda {

/// The activation a kernel applies after its adds (CleaveEpilogue): none,
/// ReLU, a clamp to [min, max], SiLU, or GELU in its erf or tanh form.
struct Epilogue {
  int64_t kind = CLEAVE_EPILOGUE_NONE;
  float min = 0, max = 0;

  /// Reads and checks the kind and the clamp's bounds of a kernel's
  /// arguments; returns non-zero after failing.
  int32_t read(CleaveContext *ctx, const char *kernel, int64_t kind, double min,
               double max);

  bool none() const { return kind == CLEAVE_EPILOGUE_NONE; }
};

/// Checks the optional bias (`count` float32 values) and residual (float32,
/// Y's `outputs` elements) of a kernel whose result has type `dtype`, and
/// that a bias, a residual or an activation comes with a float32 result
/// only; returns non-zero after failing.
int32_t checkEpilogueInputs(CleaveContext *ctx, const char *kernel,
                            int32_t dtype, const Epilogue &epilogue,
                            const CleaveTensor *bias, int64_t count,
                            const CleaveTensor *residual, int64_t outputs);

/// y[i] = epilogue(y[i] + bias[(i / inner) % count]) over y[0..n), queued
/// on the context's stream; no add where `bias` is null (so -0 stays -0),
/// and nothing queued where there is neither a bias nor an activation.
/// `inner` is 1 for a product's bias (one value per column, `count`
/// columns) and the spatial size for a convolution's (one per channel).
int32_t applyEpilogue(CleaveContext *ctx, const char *kernel,
                      const Epilogue &epilogue, float *y, int64_t n,
                      const float *bias, int64_t inner, int64_t count);

/// Copies `bytes` from `from` to `to` on the context's stream, nothing
/// where they are the same; for a residual that the product then
/// accumulates onto (beta 1).
int32_t copyResidual(CleaveContext *ctx, const char *kernel, const void *from,
                     void *to, size_t bytes);

} // namespace cleave::cuda

#endif // CLEAVE_RT_CUDA_EPILOGUE_H
