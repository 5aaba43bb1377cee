//===- Gemm.cpp - matmul and gemm on oneDNN and OpenBLAS ------------------===//
//
// A product of constant weights (a layer's, read from the bundle) of at
// least kWeightProductMacs multiply-adds runs on oneDNN's matmul
// (Dnnl.cpp) where oneDNN has a kernel that takes its weights packed once
// into a blocked layout (brgemm, on x86-64-v4). The rest go to OpenBLAS's
// sgemm (through sgemm() of KernelSupport.h, which
// threads it with OpenMP), which packs both operands on every call; matmul
// also multiplies float64 through dgemm. A batched matmul whose rhs has no
// batch folds the batch into the rows of one product; other batches run
// one product per batch, one batch per thread when there are enough of
// them. A float32 matmul may apply a bias, a residual and an activation
// (Epilogue.h): as oneDNN's post-ops, or in one pass over Y after OpenBLAS.
//
//===----------------------------------------------------------------------===//

#include "Dnnl.h"
#include "KernelSupport.h"

#include <algorithm>
#include <cstring>

using namespace cleave::cpu;

namespace {

/// From this many multiply-adds a product of constant weights runs on
/// oneDNN's brgemm where it has one. Measured on an AVX-512 Xeon, 1 and 2
/// threads (docs/PERFORMANCE.md, "Matrix products of constant weights, and
/// weights packed at compile time"): at 16x64x64
/// OpenBLAS took 0.8-1.2 us and oneDNN 1.3-1.9; at 128x64x64 (2^19) both
/// 7-8 us; above, oneDNN was faster throughout, by 1.15-1.4x on a
/// transformer's 128x768x3072 and by up to 4x with few rows (4x768x768).
constexpr int64_t kWeightProductMacs = int64_t(1) << 19;

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

/// The row-major product of OpenBLAS's gemm for `T`, added to what Y
/// holds where `accumulate`.
void gemm(int threads, int64_t m, int64_t n, int64_t k, const float *a,
          const float *b, float *y, bool accumulate) {
  sgemm(threads, false, false, m, n, k, 1.0f, a, k, b, n,
        accumulate ? 1.0f : 0.0f, y, n);
}
void gemm(int threads, int64_t m, int64_t n, int64_t k, const double *a,
          const double *b, double *y, bool accumulate) {
  dgemm(threads, false, false, m, n, k, 1.0, a, k, b, n, accumulate ? 1.0 : 0.0,
        y, n);
}

/// Whether the batches of A are consecutive rows of one matrix and B has
/// none: one product of (batch * M) rows.
bool foldsIntoRows(const MatrixBatch &ma, const MatrixBatch &mb,
                   const int64_t *batchShape, int32_t batchRank) {
  for (int32_t i = 0; i < batchRank; ++i)
    if (mb.batchStride[i] != 0 || ma.batchShape[i] != batchShape[i])
      return false;
  return true;
}

/// The product of a checked batch of matrices (`batch` products of
/// `m x k` and `k x n`, batch dimensions broadcast as `ma` and `mb` say),
/// added to what Y holds where `accumulate`.
template <typename T>
void multiplyBatches(int threads, const MatrixBatch &ma, const MatrixBatch &mb,
                     const int64_t *batchShape, int32_t batchRank,
                     int64_t batch, const T *pa, const T *pb, T *py,
                     bool accumulate) {
  const int64_t m = ma.rows, k = ma.cols, n = mb.cols;
  if (k == 0) {
    if (!accumulate)
      std::memset(py, 0, sizeof(T) * batch * m * n);
    return;
  }
  if (foldsIntoRows(ma, mb, batchShape, batchRank)) {
    // The batches of A are consecutive rows of one matrix.
    gemm(threads, batch * m, n, k, pa, pb, py, accumulate);
    return;
  }

  auto multiply = [&](int64_t index, int gemmThreads) {
    int64_t offsetA = 0, offsetB = 0, rest = index;
    for (int32_t i = batchRank - 1; i >= 0; --i) {
      int64_t coord = rest % batchShape[i];
      rest /= batchShape[i];
      offsetA += coord * ma.batchStride[i];
      offsetB += coord * mb.batchStride[i];
    }
    gemm(gemmThreads, m, n, k, pa + offsetA, pb + offsetB, py + index * m * n,
         accumulate);
  };
  // One matrix per thread (no split products, no synchronisation) where
  // the whole batch is worth a team; otherwise each product decides for
  // itself, and small ones (an attention's scores, head by head) run on the
  // calling thread.
  if (forkTeam(threads, batch * m * n * k >= kParallelProductWork) &&
      batch >= threads) {
    parallelFor(threads, true, batch,
                [&](int64_t index) { multiply(index, 1); });
  } else {
    for (int64_t index = 0; index < batch; ++index)
      multiply(index, threads);
  }
}

} // namespace

int32_t cleave::cpu::kernels::matmul(CleaveContext *ctx,
                                     const args::MatMul &args) {
  const char *kernel = "matmul";
  const CleaveTensor &a = args.a(), &b = args.b();
  CleaveTensor &y = args.y();
  if (a.dtype != b.dtype || a.dtype != y.dtype ||
      (a.dtype != CLEAVE_F32 && a.dtype != CLEAVE_F64))
    return fail(ctx, kernel,
                "dtypes %d x %d -> %d: A, B and Y must all be float32 (%d) or "
                "all float64 (%d)",
                a.dtype, b.dtype, y.dtype, CLEAVE_F32, CLEAVE_F64);
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
  const int64_t m = ma.rows, n = mb.cols;
  if (numElements(y) != batch * m * n)
    return fail(ctx, kernel, "Y has %lld elements, expected %lld",
                (long long)numElements(y), (long long)(batch * m * n));
  Epilogue epilogue;
  if (epilogue.read(ctx, kernel, args.epilogue(), args.epilogueMin(),
                    args.epilogueMax()))
    return 1;
  const CleaveTensor *bias = args.bias();
  if (epilogue.readResidual(ctx, kernel, args.residual(), numElements(y)))
    return 1;
  if (bias) {
    if (checkF32(ctx, kernel, *bias, "the bias"))
      return 1;
    if (numElements(*bias) != n)
      return fail(ctx, kernel,
                  "the bias has %lld elements, Y's last dimension %lld",
                  static_cast<long long>(numElements(*bias)),
                  static_cast<long long>(n));
  }
  if (a.dtype != CLEAVE_F32 && (bias || !epilogue.none()))
    return fail(ctx, kernel,
                "a bias, residual or epilogue applies to float32 "
                "products only");
  if (batch * m * n == 0)
    return 0;
  const float *biasData =
      bias ? static_cast<const float *>(bias->data) : nullptr;
  if (a.dtype == CLEAVE_F32 && foldsIntoRows(ma, mb, batchShape, batchRank)) {
    WeightProduct product;
    product.m = batch * m;
    product.k = ma.cols;
    product.n = n;
    product.a = static_cast<const float *>(a.data);
    product.w = static_cast<const float *>(b.data);
    product.y = static_cast<float *>(y.data);
    product.bias = biasData;
    product.epilogue = epilogue;
    if (product.multiplyAdds() >= kWeightProductMacs &&
        cleave_rt_constant_weights(ctx, b.data,
                                   sizeof(float) * product.k * product.n)) {
      int32_t status = dnnlMatmul(ctx, kernel, product);
      if (status != kDnnlDeclined)
        return status;
    }
  }
  const int threads = numThreads(ctx);
  if (a.dtype == CLEAVE_F64) {
    multiplyBatches(threads, ma, mb, batchShape, batchRank, batch,
                    static_cast<const double *>(a.data),
                    static_cast<const double *>(b.data),
                    static_cast<double *>(y.data), /*accumulate=*/false);
    return 0;
  }
  // A residual that is Y is added by the product itself; another one, and
  // the bias, in the pass that applies the activation. (Where R is Y, R is
  // added before the bias: the sums may differ from the unfused ones in the
  // last place.)
  float *py = static_cast<float *>(y.data);
  const bool inPlace = epilogue.residual == py;
  multiplyBatches(threads, ma, mb, batchShape, batchRank, batch,
                  static_cast<const float *>(a.data),
                  static_cast<const float *>(b.data), py, inPlace);
  applyEpilogueRows(epilogue, py, batch * m, n, biasData,
                    inPlace ? nullptr : epilogue.residual, threads);
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
  Epilogue epilogue;
  if (epilogue.read(ctx, kernel, args.epilogue(), args.epilogueMin(),
                    args.epilogueMax()))
    return 1;
  if (epilogue.readResidual(ctx, kernel, args.residual(), m * n))
    return 1;
  float *py = static_cast<float *>(y.data);
  if (m * n == 0)
    return 0;

  // oneDNN adds C as its bias where C is one row (or none is added).
  const bool rowBias = optionalC && beta == 1.0f &&
                       numElements(*optionalC) == n &&
                       (optionalC->rank < 2 || optionalC->shape[0] == 1);
  WeightProduct product;
  product.m = m;
  product.k = k;
  product.n = n;
  product.transposeW = transB;
  product.a = static_cast<const float *>(a.data);
  product.w = static_cast<const float *>(b.data);
  product.y = py;
  product.epilogue = epilogue;
  if (rowBias)
    product.bias = static_cast<const float *>(optionalC->data);
  if (!transA && alpha == 1.0f && (rowBias || !optionalC || beta == 0.0f) &&
      product.multiplyAdds() >= kWeightProductMacs &&
      cleave_rt_constant_weights(ctx, b.data, sizeof(float) * k * n)) {
    int32_t status = dnnlMatmul(ctx, kernel, product);
    if (status != kDnnlDeclined)
      return status;
  }

  // A residual that is Y is added by the product itself (beta of 1, with
  // beta C added to it first); another one in the pass that applies the
  // activation.
  const bool inPlace = epilogue.residual == py;
  float gemmBeta = inPlace ? 1.0f : 0.0f;
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
    parallelFor(threads, m * n > kParallelGrain, m, [&](int64_t i) {
      for (int64_t j = 0; j < n; ++j) {
        float scaled = beta * pc[i * rowStride + j * colStride];
        py[i * n + j] = inPlace ? py[i * n + j] + scaled : scaled;
      }
    });
    gemmBeta = 1.0f;
  }
  if (k == 0) {
    if (gemmBeta == 0.0f)
      std::memset(py, 0, sizeof(float) * m * n);
  } else {
    sgemm(numThreads(ctx), transA, transB, m, n, k, alpha,
          static_cast<const float *>(a.data), a.shape[1],
          static_cast<const float *>(b.data), b.shape[1], gemmBeta, py, n);
  }
  applyEpilogueRows(epilogue, py, m, n, /*bias=*/nullptr,
                    inPlace ? nullptr : epilogue.residual, numThreads(ctx));
  return 0;
}
