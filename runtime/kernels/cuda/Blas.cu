//===- Blas.cu - matmul and gemm through cuBLASLt and cuBLAS --------------===//
//
// cuBLAS is column-major and our tensors are row-major: a row-major M x N
// product Y = A B is the column-major product Y^T = B^T A^T, so every call
// swaps the operands and passes N before M. All types accumulate in fp32
// (f64 in f64); fp32 keeps full precision (no TF32), matching the CPU.
//
// One product (matmul's folded batch, gemm) runs on cuBLASLt, whose
// epilogue adds a float32 product's bias (Y^T's rows are Y's columns) and
// applies its ReLU, and whose C (which may be Y itself) carries the
// residual. Its GELU is not documented to be either of ours (the erf form
// or the tanh form of rt/Scalar.h), so GELU, SiLU and the clamp take the
// elementwise pass of Epilogue.h. Where cuBLASLt has no algorithm for the
// product, or refuses it, the product runs on cuBLAS and the pass applies
// the bias too. Batched products run on cublasGemmStridedBatchedEx.
//
//===----------------------------------------------------------------------===//

#include "CudaCommon.h"
#include "Epilogue.h"
#include "Gemm.h"

#include <cublasLt.h>
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

/// alpha and beta as cuBLAS reads them in host pointer mode: doubles for
/// an f64 product, floats for the others.
class Scales {
public:
  Scales(const BlasType &type, const RowMajorGemm &g)
      : isDouble(type.isDouble), alpha64(g.alpha), beta64(g.beta),
        alpha32(static_cast<float>(g.alpha)),
        beta32(static_cast<float>(g.beta)) {}
  const void *alpha() const {
    return isDouble ? static_cast<const void *>(&alpha64) : &alpha32;
  }
  const void *beta() const {
    return isDouble ? static_cast<const void *>(&beta64) : &beta32;
  }

private:
  bool isDouble;
  double alpha64, beta64;
  float alpha32, beta32;
};

/// A cuBLASLt call's status where it queued nothing and the product is to
/// run on cuBLAS instead.
constexpr int32_t kLtDeclined = -1;

/// cuBLASLt's workspace limit: 32 MiB, what NVIDIA recommends for Hopper.
constexpr uint64_t kLtWorkspaceBytes = 32u << 20;

/// The largest power of two up to 256 that divides `pointer`'s address:
/// cuBLASLt's heuristic assumes 256 unless told, and the arena's offsets
/// and a batch's rows are aligned to less.
uint32_t alignmentOf(const void *pointer) {
  auto address = reinterpret_cast<uintptr_t>(pointer);
  uint32_t alignment = 256;
  while (alignment > 1 && address % alignment)
    alignment /= 2;
  return alignment;
}

/// The descriptors of one cuBLASLt call, destroyed with it.
struct LtCall {
  cublasLtMatmulDesc_t op = nullptr;
  // In cuBLASLt's roles: its A is our B, its B our A (see above).
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, y = nullptr;
  cublasLtMatmulPreference_t preference = nullptr;

  LtCall() = default;
  LtCall(const LtCall &) = delete;
  LtCall &operator=(const LtCall &) = delete;
  ~LtCall() {
    if (preference)
      cublasLtMatmulPreferenceDestroy(preference);
    if (y)
      cublasLtMatrixLayoutDestroy(y);
    if (b)
      cublasLtMatrixLayoutDestroy(b);
    if (a)
      cublasLtMatrixLayoutDestroy(a);
    if (op)
      cublasLtMatmulDescDestroy(op);
  }

  /// Describes Y^T = op(B)^T op(A)^T (+ beta C) with `epilogue` (bias: N
  /// float32 values); false where cuBLASLt refuses a descriptor.
  bool describe(const BlasType &type, const RowMajorGemm &g,
                cublasLtEpilogue_t epilogue, const float *bias) {
    cublasOperation_t transA = g.transB ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasOperation_t transB = g.transA ? CUBLAS_OP_T : CUBLAS_OP_N;
    cudaDataType_t scale = type.isDouble ? CUDA_R_64F : CUDA_R_32F;
    auto u = [](int64_t v) { return static_cast<uint64_t>(v); };
    bool ok = cublasLtMatmulDescCreate(&op, type.compute, scale) ==
                  CUBLAS_STATUS_SUCCESS &&
              setOp(CUBLASLT_MATMUL_DESC_TRANSA, transA) &&
              setOp(CUBLASLT_MATMUL_DESC_TRANSB, transB) &&
              setOp(CUBLASLT_MATMUL_DESC_EPILOGUE, epilogue) &&
              (!bias || setOp(CUBLASLT_MATMUL_DESC_BIAS_POINTER, bias));
    ok = ok &&
         cublasLtMatrixLayoutCreate(&a, type.data, u(g.transB ? g.k : g.n),
                                    u(g.transB ? g.n : g.k),
                                    g.ldb) == CUBLAS_STATUS_SUCCESS &&
         cublasLtMatrixLayoutCreate(&b, type.data, u(g.transA ? g.m : g.k),
                                    u(g.transA ? g.k : g.m),
                                    g.lda) == CUBLAS_STATUS_SUCCESS &&
         cublasLtMatrixLayoutCreate(&y, type.data, u(g.n), u(g.m), g.ldy) ==
             CUBLAS_STATUS_SUCCESS;
    return ok;
  }

  /// The heuristic's best algorithm for operands at these addresses
  /// (`a` and `b` in our roles); false where it has none.
  bool choose(cublasLtHandle_t handle, const void *a, const void *b,
              const void *c, const void *y,
              cublasLtMatmulHeuristicResult_t &result) {
    uint64_t workspace = kLtWorkspaceBytes;
    uint32_t alignA = alignmentOf(b), alignB = alignmentOf(a),
             alignC = alignmentOf(c), alignD = alignmentOf(y);
    bool ok =
        cublasLtMatmulPreferenceCreate(&preference) == CUBLAS_STATUS_SUCCESS &&
        setPreference(CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, workspace) &&
        setPreference(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, alignA) &&
        setPreference(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, alignB) &&
        setPreference(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, alignC) &&
        setPreference(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, alignD);
    int returned = 0;
    return ok &&
           cublasLtMatmulAlgoGetHeuristic(handle, op, this->a, this->b, this->y,
                                          this->y, preference, 1, &result,
                                          &returned) == CUBLAS_STATUS_SUCCESS &&
           returned > 0 && result.state == CUBLAS_STATUS_SUCCESS;
  }

private:
  template <typename T> bool setOp(cublasLtMatmulDescAttributes_t what, T v) {
    return cublasLtMatmulDescSetAttribute(op, what, &v, sizeof(v)) ==
           CUBLAS_STATUS_SUCCESS;
  }
  template <typename T>
  bool setPreference(cublasLtMatmulPreferenceAttributes_t what, T v) {
    return cublasLtMatmulPreferenceSetAttribute(
               preference, what, &v, sizeof(v)) == CUBLAS_STATUS_SUCCESS;
  }
};

/// Queues Y = act(alpha op(A) op(B) + beta C + bias) for one product
/// (g.batch 1) on cuBLASLt, act a ReLU where `relu`, no bias where `bias`
/// is null, C of Y's layout (Y itself, or another matrix; ignored where
/// beta is 0). Returns kLtDeclined where it queued nothing.
int32_t ltProduct(CleaveContext *ctx, const BlasType &type,
                  const RowMajorGemm &g, const void *a, const void *b,
                  const void *c, void *y, const float *bias, bool relu) {
  auto handle = static_cast<cublasLtHandle_t>(cleave_rt_cublaslt(ctx));
  if (!handle || g.batch != 1)
    return kLtDeclined;
  cublasLtEpilogue_t epilogue = bias && relu ? CUBLASLT_EPILOGUE_RELU_BIAS
                                : bias       ? CUBLASLT_EPILOGUE_BIAS
                                : relu       ? CUBLASLT_EPILOGUE_RELU
                                             : CUBLASLT_EPILOGUE_DEFAULT;
  if (!c || g.beta == 0.0)
    c = y;
  LtCall call;
  cublasLtMatmulHeuristicResult_t chosen = {};
  if (!call.describe(type, g, epilogue, bias) ||
      !call.choose(handle, a, b, c, y, chosen))
    return kLtDeclined;
  void *workspace = nullptr;
  if (chosen.workspaceSize > 0) {
    workspace = cleave_rt_scratch(ctx, chosen.workspaceSize);
    if (!workspace)
      return 1; // cleave_rt_scratch has failed the run
  }
  const Scales scales(type, g);
  // A refusal at launch (a configuration the algorithm does not take after
  // all) leaves the product to cuBLAS.
  cublasStatus_t status =
      cublasLtMatmul(handle, call.op, scales.alpha(), b, call.a, a, call.b,
                     scales.beta(), c, call.y, y, call.y, &chosen.algo,
                     workspace, chosen.workspaceSize, streamOf(ctx));
  return status == CUBLAS_STATUS_SUCCESS ? 0 : kLtDeclined;
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
  const Scales scales(type, g);
  cublasStatus_t status =
      cublasSetPointerMode(handle, CUBLAS_POINTER_MODE_HOST);
  if (status == CUBLAS_STATUS_SUCCESS)
    status = cublasGemmStridedBatchedEx(
        handle, g.transB ? CUBLAS_OP_T : CUBLAS_OP_N,
        g.transA ? CUBLAS_OP_T : CUBLAS_OP_N, static_cast<int>(g.n),
        static_cast<int>(g.m), static_cast<int>(g.k), scales.alpha(), b,
        type.data, static_cast<int>(g.ldb), g.strideB, a, type.data,
        static_cast<int>(g.lda), g.strideA, scales.beta(), y, type.data,
        static_cast<int>(g.ldy), g.strideY, static_cast<int>(g.batch),
        type.compute, CUBLAS_GEMM_DEFAULT);
  if (status != CUBLAS_STATUS_SUCCESS)
    return fail(ctx, kernel, "cuBLAS: %s", cublasGetStatusString(status));
  return 0;
}

namespace {

/// Y = epilogue(alpha op(A) op(B) + beta C + bias) for one row-major
/// product (g.batch 1, Y contiguous: ldy = N): C is Y itself, another
/// matrix of Y's shape (a residual) or null; `bias` (N float32 values) and
/// the epilogue come with float32 products only. cuBLASLt adds what its
/// epilogue has; one pass over Y applies the rest.
int32_t fusedProduct(CleaveContext *ctx, const char *kernel, int32_t dtype,
                     RowMajorGemm g, const void *a, const void *b,
                     const void *c, void *y, const float *bias,
                     const Epilogue &epilogue) {
  BlasType type;
  if (!blasTypeOf(dtype, type))
    return fail(ctx, kernel, "no cuBLAS product for element type %d", dtype);
  if (!c)
    g.beta = 0.0;
  // The ReLU comes after the bias: cuBLASLt applies it only where it adds
  // the bias too (or there is none), which needs a bias aligned as its
  // vector loads read it.
  bool ltBias = bias && alignmentOf(bias) >= 16;
  bool ltRelu = epilogue.kind == CLEAVE_EPILOGUE_RELU && (ltBias || !bias);
  int32_t status =
      ltProduct(ctx, type, g, a, b, c, y, ltBias ? bias : nullptr, ltRelu);
  if (status == kLtDeclined) {
    ltBias = ltRelu = false;
    status =
        c ? copyResidual(ctx, kernel, c, y, g.m * g.n * dtypeSize(dtype)) : 0;
    if (!status)
      status = rowMajorGemm(ctx, kernel, dtype, g, a, b, y);
  }
  if (status)
    return status;
  Epilogue rest = epilogue;
  if (ltRelu)
    rest.kind = CLEAVE_EPILOGUE_NONE;
  return applyEpilogue(ctx, kernel, rest, static_cast<float *>(y), g.m * g.n,
                       ltBias ? nullptr : bias, 1, g.n);
}

/// Y = epilogue(R + bias) for a product with no terms (K = 0): R is Y
/// itself, another tensor of Y's size, or null (zeros).
int32_t emptyProduct(CleaveContext *ctx, const char *kernel,
                     const CleaveTensor &y, const void *r, const float *bias,
                     int64_t n, const Epilogue &epilogue) {
  size_t bytes = numElements(y) * dtypeSize(y.dtype);
  int32_t status = 0;
  if (r)
    status = copyResidual(ctx, kernel, r, y.data, bytes);
  else if (cudaMemsetAsync(y.data, 0, bytes, streamOf(ctx)) != cudaSuccess)
    status = fail(ctx, kernel, "cudaMemsetAsync failed");
  if (status)
    return status;
  return applyEpilogue(ctx, kernel, epilogue, static_cast<float *>(y.data),
                       numElements(y), bias, 1, n);
}

/// y[i][j] = beta c[i * rowStride + j * colStride] + r[i][j] over M x N
/// (no r where null; r may be y).
__global__ void scaledCKernel(float *y, const float *c, const float *r,
                              int64_t m, int64_t n, int64_t rowStride,
                              int64_t colStride, float beta) {
  CLEAVE_GRID_LOOP(i, m * n) {
    float v = beta * c[(i / n) * rowStride + (i % n) * colStride];
    y[i] = r ? v + r[i] : v;
  }
}

/// Writes beta C (broadcast, at most 2-D) plus the residual R (or nothing)
/// into the float32 M x N matrix Y, for the product to accumulate onto.
int32_t writeScaledC(CleaveContext *ctx, const CleaveTensor &c, double beta,
                     const void *r, const CleaveTensor &y) {
  if (c.rank > 2)
    return fail(ctx, "gemm", "C must be at most 2-D");
  int64_t m = y.shape[0], n = y.shape[1];
  int64_t rows = c.rank == 2 ? c.shape[0] : 1;
  int64_t cols = c.rank >= 1 ? c.shape[c.rank - 1] : 1;
  if ((rows != 1 && rows != m) || (cols != 1 && cols != n))
    return fail(ctx, "gemm", "C does not broadcast to %lldx%lld", (long long)m,
                (long long)n);
  scaledCKernel<<<blocksFor(m * n), kThreads, 0, streamOf(ctx)>>>(
      static_cast<float *>(y.data), static_cast<const float *>(c.data),
      static_cast<const float *>(r), m, n, rows == 1 ? 0 : cols,
      cols == 1 ? 0 : 1, static_cast<float>(beta));
  return checkLaunch(ctx, "gemm");
}

} // namespace

int32_t cleave::cuda::kernels::matmul(CleaveContext *ctx,
                                      const args::MatMul &args) {
  const CleaveTensor &a = args.a(), &b = args.b(), &y = args.y();
  BlasType type;
  if (a.dtype != b.dtype || a.dtype != y.dtype || !blasTypeOf(a.dtype, type))
    return fail(ctx, "matmul", "unsupported element types %d x %d -> %d",
                a.dtype, b.dtype, y.dtype);
  if (a.rank < 1 || b.rank < 1)
    return fail(ctx, "matmul", "operands must have rank >= 1");
  Epilogue epilogue;
  if (epilogue.read(ctx, "matmul", args.epilogue(), args.epilogueMin(),
                    args.epilogueMax()))
    return 1;
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
  const CleaveTensor *bias = args.bias(), *residual = args.residual();
  if (checkEpilogueInputs(ctx, "matmul", y.dtype, epilogue, bias, n, residual,
                          total * m * n))
    return 1;
  if (total == 0 || m == 0 || n == 0)
    return 0;
  const float *biasData =
      bias ? static_cast<const float *>(bias->data) : nullptr;
  // The residual is the product's C, with beta 1; it may be Y itself.
  const void *r = residual ? residual->data : nullptr;
  if (k == 0)
    return emptyProduct(ctx, "matmul", y, r, biasData, n, epilogue);

  RowMajorGemm g;
  g.m = m;
  g.n = n;
  g.k = k;
  g.lda = k;
  g.ldb = n;
  g.ldy = n;
  g.beta = r ? 1.0 : 0.0;
  // A shared weight under a full batch of A: one product of (batch*M) rows.
  bool aFull = true, bShared = true;
  for (int d = 0; d < batchRank; ++d) {
    aFull &= batch[d] == 1 || strideA[d] != 0;
    bShared &= batch[d] == 1 || strideB[d] == 0;
  }
  if (aFull && bShared) {
    g.m = total * m;
    return fusedProduct(ctx, "matmul", a.dtype, g, a.data, b.data, r, y.data,
                        biasData, epilogue);
  }
  // Otherwise: one strided-batched call along the innermost batch dimension
  // for every index of the outer ones, accumulating onto the residual, and
  // the bias and the activation in one pass after them.
  size_t bytes = dtypeSize(a.dtype);
  if (r && copyResidual(ctx, "matmul", r, y.data, total * m * n * bytes))
    return 1;
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
  return applyEpilogue(ctx, "matmul", epilogue, static_cast<float *>(y.data),
                       total * m * n, biasData, 1, n);
}

int32_t cleave::cuda::kernels::gemm(CleaveContext *ctx,
                                    const args::Gemm &args) {
  const CleaveTensor &a = args.a(), &b = args.b(), &y = args.y();
  const CleaveTensor *c = args.c(), *residual = args.residual();
  BlasType type;
  if (a.dtype != b.dtype || a.dtype != y.dtype || !blasTypeOf(a.dtype, type))
    return fail(ctx, "gemm", "unsupported element types %d x %d -> %d", a.dtype,
                b.dtype, y.dtype);
  if (a.rank != 2 || b.rank != 2 || y.rank != 2)
    return fail(ctx, "gemm", "operands must be matrices");
  Epilogue epilogue;
  if (epilogue.read(ctx, "gemm", args.epilogue(), args.epilogueMin(),
                    args.epilogueMax()))
    return 1;
  RowMajorGemm g;
  g.transA = args.transA() != 0;
  g.transB = args.transB() != 0;
  g.m = g.transA ? a.shape[1] : a.shape[0];
  g.k = g.transA ? a.shape[0] : a.shape[1];
  g.n = g.transB ? b.shape[0] : b.shape[1];
  int64_t kb = g.transB ? b.shape[1] : b.shape[0];
  if (g.k != kb || y.shape[0] != g.m || y.shape[1] != g.n)
    return fail(ctx, "gemm", "operand shapes do not match");
  if (checkEpilogueInputs(ctx, "gemm", y.dtype, epilogue, nullptr, 0, residual,
                          g.m * g.n))
    return 1;
  if (g.m == 0 || g.n == 0)
    return 0;
  g.lda = a.shape[1];
  g.ldb = b.shape[1];
  g.ldy = g.n;
  g.alpha = args.alpha();
  double beta = c ? args.beta() : 0.0;
  if (c && beta != 0.0 && c->dtype != y.dtype)
    return fail(ctx, "gemm", "C has another element type");
  // The product's terms: C as cuBLASLt's bias where it is one float32 row
  // that beta leaves as it is; otherwise beta C and the residual R written
  // into Y, which the product accumulates onto; otherwise R as the
  // product's C (it may be Y itself).
  const void *r = residual ? residual->data : nullptr;
  const float *bias = nullptr;
  const void *accumulate = nullptr;
  if (c && beta != 0.0) {
    bool row = numElements(*c) == g.n && (c->rank < 2 || c->shape[0] == 1);
    if (y.dtype == CLEAVE_F32 && row && beta == 1.0) {
      bias = static_cast<const float *>(c->data);
    } else if (y.dtype == CLEAVE_F32) {
      if (int32_t status = writeScaledC(ctx, *c, beta, r, y))
        return status;
      accumulate = y.data;
      r = nullptr;
    } else {
      if (int32_t status = broadcastInto(ctx, "gemm", *c, y))
        return status;
      accumulate = y.data;
      g.beta = beta;
    }
  }
  if (r) {
    accumulate = r;
    g.beta = 1.0;
  } else if (accumulate && y.dtype == CLEAVE_F32) {
    g.beta = 1.0;
  }
  if (g.k == 0) {
    // No products: Y = beta C (+ R). cuBLAS may return early for K = 0
    // without scaling, so only the scales that need no arithmetic are
    // handled.
    if (accumulate && g.beta != 1.0)
      return fail(ctx, "gemm", "K = 0 with beta other than 0 or 1");
    return emptyProduct(ctx, "gemm", y, accumulate, bias, g.n, epilogue);
  }
  return fusedProduct(ctx, "gemm", a.dtype, g, a.data, b.data, accumulate,
                      y.data, bias, epilogue);
}
