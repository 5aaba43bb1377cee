//===- Gemm.cpp - matmul and gemm on OpenBLAS -----------------------------===//
//
// Both kernels hand the multiplication to OpenBLAS's sgemm (through
// sgemm() of KernelSupport.h, which threads it with OpenMP). A batched
// matmul whose rhs has no batch folds the batch into the rows of one sgemm;
// other batches run one sgemm per batch, one batch per thread when there are
// enough of them.
//
//===----------------------------------------------------------------------===//

#include "KernelSupport.h"

#include <algorithm>
#include <cstring>

using namespace cleave::cpu;

namespace {

/// A matmul operand seen as a batch of row-major matrices.
struct MatrixBatch {
  int64_t rows, cols;
  /// Batch dimensions right-aligned to the output's batch rank, with their
  /// element strides (0 where the operand broadcasts).
  int64_t batchShape[CLEAVE_MAX_RANK];
  int64_t batchStride[CLEAVE_MAX_RANK];
};

void describe(const CleaveTensor &t, bool isLhs, int32_t batchRank,
              MatrixBatch &m) {
  if (t.rank == 1) {
    // numpy promotes a 1-D lhs to a row and a 1-D rhs to a column.
    m.rows = isLhs ? 1 : t.shape[0];
    m.cols = isLhs ? t.shape[0] : 1;
  } else {
    m.rows = t.shape[t.rank - 2];
    m.cols = t.shape[t.rank - 1];
  }
  int32_t ownBatch = t.rank > 2 ? t.rank - 2 : 0;
  int64_t stride = m.rows * m.cols;
  for (int32_t i = batchRank - 1; i >= 0; --i) {
    int32_t own = i - (batchRank - ownBatch);
    int64_t dim = own >= 0 ? t.shape[own] : 1;
    m.batchShape[i] = dim;
    m.batchStride[i] = dim == 1 ? 0 : stride;
    stride *= dim;
  }
}

} // namespace

int32_t cleave::cpu::kernels::matmul(CleaveContext *ctx,
                                     const args::MatMul &args) {
  const char *kernel = "matmul";
  const CleaveTensor &a = args.a(), &b = args.b();
  CleaveTensor &y = args.y();
  if (checkF32(ctx, kernel, a, "A") || checkF32(ctx, kernel, b, "B") ||
      checkF32(ctx, kernel, y, "Y"))
    return 1;
  if (a.rank < 1 || b.rank < 1)
    return fail(ctx, kernel, "operands must be at least 1-D");

  int32_t batchRank = std::max(a.rank, b.rank) - 2;
  if (batchRank < 0)
    batchRank = 0;
  MatrixBatch ma, mb;
  describe(a, /*isLhs=*/true, batchRank, ma);
  describe(b, /*isLhs=*/false, batchRank, mb);
  if (ma.cols != mb.rows)
    return fail(ctx, kernel, "contracted dimensions differ: %lld vs %lld",
                (long long)ma.cols, (long long)mb.rows);
  int64_t batchShape[CLEAVE_MAX_RANK];
  int64_t batch = 1;
  for (int32_t i = 0; i < batchRank; ++i) {
    int64_t da = ma.batchShape[i], db = mb.batchShape[i];
    if (da != db && da != 1 && db != 1)
      return fail(ctx, kernel, "batch dimension %d does not broadcast", i);
    batchShape[i] = std::max(da, db);
    batch *= batchShape[i];
  }
  const int64_t m = ma.rows, k = ma.cols, n = mb.cols;
  if (numElements(y) != batch * m * n)
    return fail(ctx, kernel, "Y has %lld elements, expected %lld",
                (long long)numElements(y), (long long)(batch * m * n));
  const float *pa = static_cast<const float *>(a.data);
  const float *pb = static_cast<const float *>(b.data);
  float *py = static_cast<float *>(y.data);
  if (batch * m * n == 0)
    return 0;
  if (k == 0) {
    std::memset(py, 0, sizeof(float) * batch * m * n);
    return 0;
  }

  int threads = numThreads(ctx);
  bool rhsBatched = false, lhsBroadcast = false;
  for (int32_t i = 0; i < batchRank; ++i) {
    rhsBatched |= mb.batchStride[i] != 0;
    lhsBroadcast |= ma.batchShape[i] != batchShape[i];
  }
  if (!rhsBatched && !lhsBroadcast) {
    // The batches of A are consecutive rows of one matrix.
    sgemm(threads, false, false, batch * m, n, k, 1.0f, pa, k, pb, n, 0.0f, py,
          n);
    return 0;
  }

  auto multiply = [&](int64_t index, int sgemmThreads) {
    int64_t offsetA = 0, offsetB = 0, rest = index;
    for (int32_t i = batchRank - 1; i >= 0; --i) {
      int64_t coord = rest % batchShape[i];
      rest /= batchShape[i];
      offsetA += coord * ma.batchStride[i];
      offsetB += coord * mb.batchStride[i];
    }
    sgemm(sgemmThreads, false, false, m, n, k, 1.0f, pa + offsetA, k,
          pb + offsetB, n, 0.0f, py + index * m * n, n);
  };
  if (threads > 1 && batch >= threads) {
    // One matrix per thread: no split products, no synchronisation.
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t index = 0; index < batch; ++index)
      multiply(index, 1);
  } else {
    for (int64_t index = 0; index < batch; ++index)
      multiply(index, threads);
  }
  return 0;
}

int32_t cleave::cpu::kernels::gemm(CleaveContext *ctx, const args::Gemm &args) {
  const char *kernel = "gemm";
  const CleaveTensor &a = args.a(), &b = args.b();
  CleaveTensor &y = args.y();
  const CleaveTensor *optionalC = args.c();
  if (checkF32(ctx, kernel, a, "A") || checkF32(ctx, kernel, b, "B") ||
      checkF32(ctx, kernel, y, "Y") ||
      (optionalC && checkF32(ctx, kernel, *optionalC, "C")))
    return 1;
  if (a.rank != 2 || b.rank != 2 || y.rank != 2)
    return fail(ctx, kernel, "A, B and Y must be 2-D");
  bool transA = args.transA() != 0, transB = args.transB() != 0;
  float alpha = static_cast<float>(args.alpha());
  float beta = static_cast<float>(args.beta());
  int64_t m = transA ? a.shape[1] : a.shape[0];
  int64_t k = transA ? a.shape[0] : a.shape[1];
  int64_t kb = transB ? b.shape[1] : b.shape[0];
  int64_t n = transB ? b.shape[0] : b.shape[1];
  if (k != kb)
    return fail(ctx, kernel, "contracted dimensions differ: %lld vs %lld",
                (long long)k, (long long)kb);
  if (y.shape[0] != m || y.shape[1] != n)
    return fail(ctx, kernel, "Y is %lldx%lld, expected %lldx%lld",
                (long long)y.shape[0], (long long)y.shape[1], (long long)m,
                (long long)n);
  float *py = static_cast<float *>(y.data);
  if (m * n == 0)
    return 0;

  float gemmBeta = 0.0f;
  if (optionalC && beta != 0.0f) {
    // Unidirectional broadcast of C: a dimension of C is either the
    // result's or 1, right-aligned.
    const CleaveTensor &c = *optionalC;
    if (c.rank > 2)
      return fail(ctx, kernel, "C must be at most 2-D");
    int64_t cRows = c.rank == 2 ? c.shape[0] : 1;
    int64_t cCols = c.rank >= 1 ? c.shape[c.rank - 1] : 1;
    if ((cRows != 1 && cRows != m) || (cCols != 1 && cCols != n))
      return fail(ctx, kernel, "C does not broadcast to %lldx%lld",
                  (long long)m, (long long)n);
    const float *pc = static_cast<const float *>(c.data);
    int64_t rowStride = cRows == 1 ? 0 : cCols;
    int64_t colStride = cCols == 1 ? 0 : 1;
    int threads = numThreads(ctx);
#pragma omp parallel for num_threads(threads) if (m * n > kParallelGrain)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        py[i * n + j] = beta * pc[i * rowStride + j * colStride];
    gemmBeta = 1.0f;
  }
  if (k == 0) {
    if (gemmBeta == 0.0f)
      std::memset(py, 0, sizeof(float) * m * n);
    return 0;
  }
  sgemm(numThreads(ctx), transA, transB, m, n, k, alpha,
        static_cast<const float *>(a.data), a.shape[1],
        static_cast<const float *>(b.data), b.shape[1], gemmBeta, py, n);
  return 0;
}
