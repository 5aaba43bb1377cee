//===- KernelSupport.cpp - what the CPU kernels share ---------------------===//
//
// Failure formatting, argument checks and the thread count.
//
//===----------------------------------------------------------------------===//

#include "KernelSupport.h"

#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <strings.h>

extern "C" void openblas_set_num_threads(int numThreads);

namespace cleave::cpu {

int32_t fail(CleaveContext *ctx, const char *kernel, const char *format, ...) {
  char message[512];
  va_list args;
  va_start(args, format);
  std::vsnprintf(message, sizeof(message), format, args);
  va_end(args);
  return cleave_rt_fail(ctx, kernel, message);
}

int32_t checkF32(CleaveContext *ctx, const char *kernel, const CleaveTensor &t,
                 const char *what) {
  if (t.dtype != CLEAVE_F32)
    return fail(ctx, kernel, "%s has dtype %d; only float32 (%d) is supported",
                what, t.dtype, CLEAVE_F32);
  return 0;
}

size_t elementSize(CleaveContext *ctx, const char *kernel,
                   const CleaveTensor &t) {
  size_t size = cleave_dtype_size(t.dtype);
  if (size == 0)
    fail(ctx, kernel, "unknown dtype %d", t.dtype);
  return size;
}

int numThreads(CleaveContext *ctx) {
  // Every kernel asks, so OpenBLAS is single-threaded before its pool
  // ever gets work (and spins after it).
  useSingleThreadedBlas();
  int threads = cleave_rt_num_threads(ctx);
  return threads > 0 ? threads : 1;
}

bool waitsSpin(const char *policy, const char *spinCount) {
  if (policy && strcasecmp(policy, "passive") == 0)
    return false;
  if (spinCount) {
    char *end = nullptr;
    const long long count = std::strtoll(spinCount, &end, 10);
    if (end != spinCount && *end == '\0' && count == 0)
      return false;
  }
  return true;
}

bool threadsSpin() {
  static const bool spin =
      waitsSpin(std::getenv("OMP_WAIT_POLICY"), std::getenv("GOMP_SPINCOUNT"));
  return spin;
}

void useSingleThreadedBlas() {
  static std::atomic<bool> done{false};
  if (done.exchange(true))
    return;
  // OpenBLAS's OpenMP flavour sets the calling thread's default team size
  // along with its own; keep the caller's.
  int teamSize = omp_get_max_threads();
  openblas_set_num_threads(1);
  omp_set_num_threads(teamSize);
}

namespace {

/// OpenBLAS's OpenMP flavour sizes each call's team by the calling thread's
/// default team size (omp_get_max_threads), whatever openblas_set_num_threads
/// said. A thread that is not already in a parallel region (a rank's thread
/// of a session group, whose default is every core; a kernel told to use
/// one thread) would start a team of its own per call, and the teams of
/// several ranks then spin against each other. So every call runs with a
/// default of one thread, restored after it.
class SingleThreadedCall {
public:
  SingleThreadedCall() : saved(omp_in_parallel() ? 1 : omp_get_max_threads()) {
    if (saved != 1)
      omp_set_num_threads(1);
  }
  ~SingleThreadedCall() {
    if (saved != 1)
      omp_set_num_threads(saved);
  }

private:
  int saved;
};

void cblasGemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int64_t m, int64_t n,
               int64_t k, float alpha, const float *a, int64_t lda,
               const float *b, int64_t ldb, float beta, float *c, int64_t ldc) {
  SingleThreadedCall single;
  cblas_sgemm(CblasRowMajor, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c,
              ldc);
}

void cblasGemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int64_t m, int64_t n,
               int64_t k, double alpha, const double *a, int64_t lda,
               const double *b, int64_t ldb, double beta, double *c,
               int64_t ldc) {
  SingleThreadedCall single;
  cblas_dgemm(CblasRowMajor, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c,
              ldc);
}

template <typename T>
void threadedGemm(int threads, bool transA, bool transB, int64_t m, int64_t n,
                  int64_t k, T alpha, const T *a, int64_t lda, const T *b,
                  int64_t ldb, T beta, T *c, int64_t ldc) {
  useSingleThreadedBlas();
  const CBLAS_TRANSPOSE ta = transA ? CblasTrans : CblasNoTrans;
  const CBLAS_TRANSPOSE tb = transB ? CblasTrans : CblasNoTrans;
  // Below kParallelProductWork waking a second thread costs more than it
  // saves.
  if (threads <= 1 || m * n * k < kParallelProductWork || (m < 2 && n < 32)) {
    cblasGemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    return;
  }
  // Split the rows when there are enough for every thread to get a
  // multiple of the micro-kernel's height, otherwise the columns.
  const bool splitRows = m >= 16 * threads || m >= n;
  const int64_t extent = splitRows ? m : n;
  const int64_t align = splitRows ? 8 : 16;
#pragma omp parallel num_threads(threads)
  {
    const int64_t parts = omp_get_num_threads();
    const int64_t part = omp_get_thread_num();
    int64_t block = (extent + parts - 1) / parts;
    block = (block + align - 1) / align * align;
    const int64_t begin = std::min(extent, part * block);
    const int64_t end = std::min(extent, begin + block);
    if (begin < end) {
      if (splitRows)
        cblasGemm(ta, tb, end - begin, n, k, alpha,
                  transA ? a + begin : a + begin * lda, lda, b, ldb, beta,
                  c + begin * ldc, ldc);
      else
        cblasGemm(ta, tb, m, end - begin, k, alpha, a, lda,
                  transB ? b + begin * ldb : b + begin, ldb, beta, c + begin,
                  ldc);
    }
  }
}

} // namespace

void sgemm(int threads, bool transA, bool transB, int64_t m, int64_t n,
           int64_t k, float alpha, const float *a, int64_t lda, const float *b,
           int64_t ldb, float beta, float *c, int64_t ldc) {
  threadedGemm(threads, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c,
               ldc);
}

void dgemm(int threads, bool transA, bool transB, int64_t m, int64_t n,
           int64_t k, double alpha, const double *a, int64_t lda,
           const double *b, int64_t ldb, double beta, double *c, int64_t ldc) {
  threadedGemm(threads, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c,
               ldc);
}

void rowMajorStrides(const int64_t *shape, int32_t rank, int64_t *strides) {
  int64_t stride = 1;
  for (int32_t i = rank - 1; i >= 0; --i) {
    strides[i] = stride;
    stride *= shape[i];
  }
}

} // namespace cleave::cpu
