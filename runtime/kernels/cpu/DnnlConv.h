//===- DnnlConv.h - forward convolutions through oneDNN ---------*- C++ -*-===//
//
// Compiled once, outside the x86-64 level variants: oneDNN chooses its own
// instructions for the CPU it runs on.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_KERNELS_CPU_DNNLCONV_H
#define CLEAVE_KERNELS_CPU_DNNLCONV_H

#include "ConvGeometry.h"

namespace cleave::cpu {

/// What dnnlConv() returns, having done nothing, when `declineGeneric` is
/// set and oneDNN has no kernel of its own for the shape.
constexpr int32_t kDnnlDeclined = -1;

/// Y = epilogue(conv(X, W) + B) for `shape`, with X and Y dense in the
/// program's layout (N, C, spatial...) and W as ONNX lays it out (M,
/// C / group, kernel...); `bias` may be null, and the epilogue runs as
/// oneDNN's post-op, on the outputs while they are in registers. W must be
/// constant weights (cleave_rt_constant_weights): it is repacked once, into
/// the layout oneDNN prefers, and the packed copy is kept in the context's
/// kernel cache with the primitive, which is made once per shape; other
/// weights
/// are refused with an error. Runs on the context's thread count (one
/// thread for small convolutions). With `declineGeneric`, returns
/// kDnnlDeclined where oneDNN would run its generic im2col + gemm or
/// reference implementation.
int32_t dnnlConv(CleaveContext *ctx, const ConvShape &shape, const float *x,
                 const float *w, const float *bias, float *y,
                 const ConvEpilogue &epilogue, bool declineGeneric = false);

} // namespace cleave::cpu

#endif // CLEAVE_KERNELS_CPU_DNNLCONV_H
