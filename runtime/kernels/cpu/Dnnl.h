//===- Dnnl.h - convolutions and matrix products through oneDNN -*- C++ -*-===//
//
// Compiled once, outside the x86-64 level variants: oneDNN chooses its own
// instructions for the CPU it runs on. Both entry points take constant
// weights only (cleave_rt_constant_weights), which they repack once into
// the layout oneDNN prefers and keep, with the primitive made once per
// shape, in the context's kernel cache.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_KERNELS_CPU_DNNL_H
#define CLEAVE_KERNELS_CPU_DNNL_H

#include "ConvGeometry.h"

namespace cleave::cpu {

/// What dnnlConv() returns, having done nothing, when `declineGeneric` is
/// set and oneDNN has no kernel of its own for the shape.
constexpr int32_t kDnnlDeclined = -1;

/// Y = epilogue(conv(X, W) + B [+ R]) for `shape`, with X and Y dense in
/// the program's layouts (`layouts`: N, C, spatial... or channel-blocked)
/// and W as ONNX lays it out (M, C / group, kernel...); `bias` may be
/// null, and the epilogue runs as oneDNN's post-ops (a sum of the
/// residual R, then the activation), on the outputs while they are in
/// registers. R is read from Y where it is Y, else copied there first.
/// A window whose outer taps read only the padding for every output is cut
/// to the taps that read inside X first (its weights cut and packed once),
/// so that a 3x3 convolution of a 1x1 map reads a ninth of its weights. Other
/// than constant W is refused with an error. Runs on the context's thread count
/// (one thread for small convolutions). With `declineGeneric`, returns
/// kDnnlDeclined where oneDNN would run its generic im2col + gemm or reference
/// implementation.
int32_t dnnlConv(CleaveContext *ctx, const ConvShape &shape, const float *x,
                 const float *w, const float *bias, float *y,
                 const Epilogue &epilogue, const ConvLayouts &layouts = {},
                 bool declineGeneric = false);

/// Whether dnnlConv() runs `shape`, a depthwise convolution, on oneDNN's
/// kernel for channel blocks whatever the layouts it is given (reordering
/// X and Y into the blocks and back): where oneDNN runs with AVX-512 and
/// its 16-channel blocks divide the channels. That kernel beats the
/// runtime's direct loop on maps of any size (docs/PERFORMANCE.md).
bool dnnlBlocksDepthwise(const ConvShape &shape);

/// A matrix product of constant weights: Y (M x N) = epilogue(A (M x K) W
/// + bias [+ R]), all float32 and row-major, with W stored K x N, or N x K
/// when `transposeW` (Gemm's transB). `bias` (N values, one per column) may
/// be null; the epilogue's residual R (M x N) is read from Y where it is Y,
/// else copied there first, and runs, with the activation, as oneDNN's
/// post-ops.
struct WeightProduct {
  int64_t m = 0, k = 0, n = 0;
  bool transposeW = false;
  const float *a = nullptr, *w = nullptr, *bias = nullptr;
  float *y = nullptr;
  Epilogue epilogue;

  int64_t multiplyAdds() const { return m * k * n; }
};

/// Runs `product` on oneDNN's matmul over the context's thread count; W
/// other than constant weights is refused with an error. Returns
/// kDnnlDeclined, having done nothing, where oneDNN has no kernel for the
/// shape that takes packed weights (on x86-64-v3 and below, oneDNN 2.6
/// runs f32 products on a jit sgemm that packs on every call). `kernel`
/// names the caller in messages.
int32_t dnnlMatmul(CleaveContext *ctx, const char *kernel,
                   const WeightProduct &product);

} // namespace cleave::cpu

#endif // CLEAVE_KERNELS_CPU_DNNL_H
