//===- Blas.cu - matmul and gemm through cuBLAS ---------------------------===//
//
// cuBLAS is column-major and our tensors are row-major: a row-major M x N
// product Y = A B is the column-major product Y^T = B^T A^T, so every call
// swaps the operands and passes N before M. All types accumulate in fp32
// (f64 in f64); fp32 keeps full precision (no TF32), matching the CPU.
//
//===----------------------------------------------------------------------===//

#include "CudaCommon.h"
#include "Gemm.h"

#include <cublas_v2.h>

using namespace cleave::cuda;

namespace {

struct BlasType {
  cudaDataType_t data;
  cublasComputeType_t compute;
  bool isDouble;
};

bool blasTypeOf(int32_t dtype, BlasType &type) {
  switch (dtype) {
  case CLEAVE_F32:
    type = {CUDA_R_32F, CUBLAS_COMPUTE_32F, false};
    return true;
  case CLEAVE_F16:
    type = {CUDA_R_16F, CUBLAS_COMPUTE_32F, false};
    return true;
  case CLEAVE_BF16:
    type = {CUDA_R_16BF, CUBLAS_COMPUTE_32F, false};
    return true;
  case CLEAVE_F64:
    type = {CUDA_R_64F, CUBLAS_COMPUTE_64F, true};
    return true;
  default:
    return false;
  }
}

} // namespace

bool cleave::cuda::gemmSupports(int32_t dtype) {
  BlasType type;
  return blasTypeOf(dtype, type);
}

int32_t cleave::cuda::rowMajorGemm(CleaveContext *ctx, const char *kernel,
                                   int32_t dtype, const RowMajorGemm &g,
                                   const void *a, const void *b, void *y) {
  BlasType type;
  if (!blasTypeOf(dtype, type))
    return fail(ctx, kernel, "no cuBLAS product for element type %d", dtype);
  if (g.m == 0 || g.n == 0 || g.batch == 0)
    return 0;
  auto handle = static_cast<cublasHandle_t>(cleave_rt_cublas(ctx));
  if (!handle)
    return fail(ctx, kernel, "no cuBLAS handle in the context");
  const int64_t limit = INT32_MAX;
  if (g.m > limit || g.n > limit || g.k > limit || g.batch > limit ||
      g.lda > limit || g.ldb > limit || g.ldy > limit)
    return fail(ctx, kernel, "dimensions exceed cuBLAS's 32-bit sizes");
  float alphaF = static_cast<float>(g.alpha),
        betaF = static_cast<float>(g.beta);
  const void *alpha = type.isDouble ? static_cast<const void *>(&g.alpha)
                                    : static_cast<const void *>(&alphaF);
  const void *beta = type.isDouble ? static_cast<const void *>(&g.beta)
                                   : static_cast<const void *>(&betaF);
  cublasStatus_t status =
      cublasSetPointerMode(handle, CUBLAS_POINTER_MODE_HOST);
  if (status == CUBLAS_STATUS_SUCCESS)
    status = cublasGemmStridedBatchedEx(
        handle, g.transB ? CUBLAS_OP_T : CUBLAS_OP_N,
        g.transA ? CUBLAS_OP_T : CUBLAS_OP_N, static_cast<int>(g.n),
        static_cast<int>(g.m), static_cast<int>(g.k), alpha, b, type.data,
        static_cast<int>(g.ldb), g.strideB, a, type.data,
        static_cast<int>(g.lda), g.strideA, beta, y, type.data,
        static_cast<int>(g.ldy), g.strideY, static_cast<int>(g.batch),
        type.compute, CUBLAS_GEMM_DEFAULT);
  if (status != CUBLAS_STATUS_SUCCESS)
    return fail(ctx, kernel, "cuBLAS: %s", cublasGetStatusString(status));
  return 0;
}

int32_t cleave::cuda::kernels::matmul(CleaveContext *ctx,
                                      const args::MatMul &args) {
  const CleaveTensor &a = args.a(), &b = args.b(), &y = args.y();
  BlasType type;
  if (a.dtype != b.dtype || a.dtype != y.dtype || !blasTypeOf(a.dtype, type))
    return fail(ctx, "matmul", "unsupported element types %d x %d -> %d",
                a.dtype, b.dtype, y.dtype);
  if (a.rank < 1 || b.rank < 1)
    return fail(ctx, "matmul", "operands must have rank >= 1");
  // The compiler joins the ops after a product to it for CPU programs only
  // (DeviceProgramOptions::fuseKernelEpilogues).
  if (args.bias() || args.residual() || args.epilogue() != CLEAVE_EPILOGUE_NONE)
    return fail(ctx, "matmul",
                "a bias, residual or epilogue: CUDA programs apply them as "
                "a loop of their own");
  // Promote 1-D operands: A (K) is 1 x K, B (K) is K x 1.
  int64_t m = a.rank == 1 ? 1 : a.shape[a.rank - 2];
  int64_t k = a.shape[a.rank - 1];
  int64_t n = b.rank == 1 ? 1 : b.shape[b.rank - 1];
  int64_t kb = b.rank == 1 ? b.shape[0] : b.shape[b.rank - 2];
  if (k != kb)
    return fail(ctx, "matmul", "inner dimensions differ (%lld, %lld)",
                (long long)k, (long long)kb);
  // Batch dimensions, right-aligned and broadcast.
  int batchA = a.rank > 2 ? a.rank - 2 : 0;
  int batchB = b.rank > 2 ? b.rank - 2 : 0;
  int batchRank = batchA > batchB ? batchA : batchB;
  int64_t batch[CLEAVE_MAX_RANK], strideA[CLEAVE_MAX_RANK],
      strideB[CLEAVE_MAX_RANK];
  int64_t sa = m * k, sb = k * n;
  for (int d = batchRank - 1; d >= 0; --d) {
    int da = d - (batchRank - batchA), db = d - (batchRank - batchB);
    int64_t na = da >= 0 ? a.shape[da] : 1, nb = db >= 0 ? b.shape[db] : 1;
    if (na != nb && na != 1 && nb != 1)
      return fail(ctx, "matmul", "batch dimensions do not broadcast");
    batch[d] = na > nb ? na : nb;
    strideA[d] = na == 1 ? 0 : sa;
    strideB[d] = nb == 1 ? 0 : sb;
    sa *= na;
    sb *= nb;
  }
  int64_t total = product(batch, 0, batchRank);
  if (numElements(y) != total * m * n)
    return fail(ctx, "matmul", "result has the wrong number of elements");
  if (total == 0 || m == 0 || n == 0)
    return 0;
  size_t bytes = dtypeSize(a.dtype);
  if (k == 0)
    return cudaMemsetAsync(y.data, 0, total * m * n * bytes, streamOf(ctx)) ==
                   cudaSuccess
               ? 0
               : fail(ctx, "matmul", "cudaMemsetAsync failed");

  RowMajorGemm g;
  g.m = m;
  g.n = n;
  g.k = k;
  g.lda = k;
  g.ldb = n;
  g.ldy = n;
  // A shared weight under a full batch of A: one product of (batch*M) rows.
  bool aFull = true, bShared = true;
  for (int d = 0; d < batchRank; ++d) {
    aFull &= batch[d] == 1 || strideA[d] != 0;
    bShared &= batch[d] == 1 || strideB[d] == 0;
  }
  if (aFull && bShared) {
    g.m = total * m;
    return rowMajorGemm(ctx, "matmul", a.dtype, g, a.data, b.data, y.data);
  }
  // Otherwise: one strided-batched call along the innermost batch dimension
  // for every index of the outer ones.
  int last = batchRank - 1;
  g.batch = batch[last];
  g.strideA = strideA[last];
  g.strideB = strideB[last];
  g.strideY = m * n;
  int64_t outer = total / g.batch;
  for (int64_t o = 0; o < outer; ++o) {
    int64_t offA = 0, offB = 0, rest = o;
    for (int d = last - 1; d >= 0; --d) {
      int64_t c = rest % batch[d];
      rest /= batch[d];
      offA += c * strideA[d];
      offB += c * strideB[d];
    }
    if (int32_t status = rowMajorGemm(
            ctx, "matmul", a.dtype, g,
            static_cast<const char *>(a.data) + offA * bytes,
            static_cast<const char *>(b.data) + offB * bytes,
            static_cast<char *>(y.data) + o * g.batch * m * n * bytes))
      return status;
  }
  return 0;
}

int32_t cleave::cuda::kernels::gemm(CleaveContext *ctx,
                                    const args::Gemm &args) {
  const CleaveTensor &a = args.a(), &b = args.b(), &y = args.y();
  const CleaveTensor *c = args.c();
  BlasType type;
  if (a.dtype != b.dtype || a.dtype != y.dtype || !blasTypeOf(a.dtype, type))
    return fail(ctx, "gemm", "unsupported element types %d x %d -> %d", a.dtype,
                b.dtype, y.dtype);
  if (a.rank != 2 || b.rank != 2 || y.rank != 2)
    return fail(ctx, "gemm", "operands must be matrices");
  // As for matmul, the ops after a Gemm stay loops in CUDA programs.
  if (args.residual() || args.epilogue() != CLEAVE_EPILOGUE_NONE)
    return fail(ctx, "gemm",
                "a residual or epilogue: CUDA programs apply them as a loop "
                "of their own");
  RowMajorGemm g;
  g.transA = args.transA() != 0;
  g.transB = args.transB() != 0;
  g.m = g.transA ? a.shape[1] : a.shape[0];
  g.k = g.transA ? a.shape[0] : a.shape[1];
  g.n = g.transB ? b.shape[0] : b.shape[1];
  int64_t kb = g.transB ? b.shape[1] : b.shape[0];
  if (g.k != kb || y.shape[0] != g.m || y.shape[1] != g.n)
    return fail(ctx, "gemm", "operand shapes do not match");
  g.lda = a.shape[1];
  g.ldb = b.shape[1];
  g.ldy = g.n;
  g.alpha = args.alpha();
  g.beta = c ? args.beta() : 0.0;
  if (c && g.beta != 0.0) {
    if (c->dtype != y.dtype)
      return fail(ctx, "gemm", "C has another element type");
    if (int32_t status = broadcastInto(ctx, "gemm", *c, y))
      return status;
  } else {
    g.beta = 0.0;
  }
  if (g.k == 0) {
    // No products: Y = beta C. cuBLAS may return early for K = 0 without
    // scaling, so only the scales that need no arithmetic are handled.
    if (g.beta == 0.0 && numElements(y))
      return cudaMemsetAsync(y.data, 0, numElements(y) * dtypeSize(y.dtype),
                             streamOf(ctx)) == cudaSuccess
                 ? 0
                 : fail(ctx, "gemm", "cudaMemsetAsync failed");
    if (g.beta != 1.0)
      return fail(ctx, "gemm", "K = 0 with beta other than 0 or 1");
    return 0;
  }
  return rowMajorGemm(ctx, "gemm", a.dtype, g, a.data, b.data, y.data);
}
