//===- Gemm.h - row-major products through cuBLAS ----------------*- C++
//-*-===//
//
// Shared by matmul, gemm, the convolutions and the recurrent layers.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_RT_CUDA_GEMM_H
#define CLEAVE_RT_CUDA_GEMM_H

#include "cleave/rt/Kernels.h"

#include <cstdint>

namespace cleave::cuda {

/// Y_b = alpha op(A_b) op(B_b) + beta Y_b for b < batch, all row-major, with
/// op(A) M x K and op(B) K x N. `lda`, `ldb` and `ldy` are the row lengths
/// of A, B and Y as stored; the strides step from one batch to the next (0
/// repeats an operand).
struct RowMajorGemm {
  bool transA = false, transB = false;
  int64_t m = 0, n = 0, k = 0;
  int64_t lda = 0, ldb = 0, ldy = 0;
  int64_t strideA = 0, strideB = 0, strideY = 0;
  int64_t batch = 1;
  double alpha = 1, beta = 0;
};

/// Whether cuBLAS products are available for `dtype` (f32, f16, bf16, f64).
bool gemmSupports(int32_t dtype);

/// Queues the product on the context's stream; all three operands have
/// `dtype`. Returns non-zero after cleave_rt_fail.
int32_t rowMajorGemm(CleaveContext *ctx, const char *kernel, int32_t dtype,
                     const RowMajorGemm &gemm, const void *a, const void *b,
                     void *y);

} // namespace cleave::cuda

#endif // CLEAVE_RT_CUDA_GEMM_H
