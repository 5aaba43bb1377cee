//===- DnnlConv.h - forward convolutions through oneDNN -----------*- C++
//-*-===//
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

/// Y = conv(X, W) + B for `shape`, with X and Y dense in the program's
/// layout (N, C, spatial...) and W as ONNX lays it out (M, C / group,
/// kernel...); `bias` may be null. Runs a oneDNN convolution primitive on
/// the context's thread count (one thread for small ones), with the
/// weights in the layout oneDNN prefers. The primitive is made once per
/// shape and kept in the context's kernel cache; so are the weights,
/// repacked once, when they are constant weights
/// (cleave_rt_constant_weights); other weights are repacked into scratch
/// memory on every call, so that a kernel over weights that training
/// updates in place always reads their current values. With
/// `declineGeneric`, returns kDnnlDeclined where oneDNN would run its
/// generic im2col + gemm or reference implementation.
int32_t dnnlConv(CleaveContext *ctx, const ConvShape &shape, const float *x,
                 const float *w, const float *bias, float *y,
                 bool declineGeneric = false);

} // namespace cleave::cpu

#endif // CLEAVE_KERNELS_CPU_DNNLCONV_H
