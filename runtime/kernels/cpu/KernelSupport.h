//===- KernelSupport.h - what the CPU kernels share ---------------*- C++
//-*-===//
//
// Private to runtime/kernels/cpu: the typed kernel functions the C symbols
// call (KernelTable.cpp), tensor geometry, argument checks that fail
// through cleave_rt_fail with a formatted message, and the thread count
// every kernel takes from its context (OpenMP and OpenBLAS alike).
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_KERNELS_CPU_KERNELSUPPORT_H
#define CLEAVE_KERNELS_CPU_KERNELSUPPORT_H

#include "cleave/rt/KernelArgs.h"
#include "cleave/rt/Kernels.h"
#include "cleave/rt/VectorMath.h"

#include <cstddef>
#include <cstdint>

namespace cleave::cpu {

namespace args = cleave::rt::args;

/// The kernel sources are compiled once per x86-64 level (CMakeLists.txt),
/// each time into its own namespace: CLEAVE_CPU_LEVEL names it (x86_64,
/// x86_64_v3, x86_64_v4) and defaults to the baseline. The namespace is
/// inline, so the sources name their functions without it.
#ifndef CLEAVE_CPU_LEVEL
#define CLEAVE_CPU_LEVEL x86_64
#endif

/// One function per KernelList.def entry, over the view of its signature;
/// `cleave_cpu_<name>` binds the view and calls the variant of the level
/// the context asks for. Each is defined with its qualified name, so that a
/// definition of another signature does not compile.
#define CLEAVE_KERNEL(name, signature)                                         \
  int32_t name(CleaveContext *ctx, const args::signature &args);
inline namespace CLEAVE_CPU_LEVEL {
namespace kernels {
#include "cleave/rt/KernelList.def"
} // namespace kernels

/// Softmax (or log-softmax) of the contiguous `line` into `result` (which
/// may be `line`), shifted by the line's maximum. The reductions are
/// `omp simd` so that they vectorise (in lanes, which reorders the sum),
/// and the exponentials call the vector math library (rt/VectorMath.h).
/// Defined in Softmax.cpp; attention applies it to each row of scores.
void softmaxLine(const float *line, float *result, int64_t length, bool log);
} // namespace CLEAVE_CPU_LEVEL

/// Product of the dimensions in [begin, end) (1 for an empty range).
inline int64_t product(const int64_t *dims, int64_t begin, int64_t end) {
  int64_t result = 1;
  for (int64_t i = begin; i < end; ++i)
    result *= dims[i];
  return result;
}

inline int64_t numElements(const CleaveTensor &t) {
  return product(t.shape, 0, t.rank);
}

/// Formats a message printf-style and records it as the kernel's failure;
/// returns the non-zero status to return from the kernel.
int32_t fail(CleaveContext *ctx, const char *kernel, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

/// Fails unless `t` holds float32 data; `what` names the operand.
int32_t checkF32(CleaveContext *ctx, const char *kernel, const CleaveTensor &t,
                 const char *what);

/// The element size of `t`, or 0 after failing on an unknown dtype.
size_t elementSize(CleaveContext *ctx, const char *kernel,
                   const CleaveTensor &t);

/// The thread count kernels use (at least 1).
int numThreads(CleaveContext *ctx);

/// Row-major C = alpha op(A) op(B) + beta C (cblas_sgemm's arguments),
/// split into blocks of rows or columns over `threads` OpenMP threads, each
/// running a single-threaded OpenBLAS sgemm, so that the matrix products
/// and the other kernels share one OpenMP team of the session's size.
/// (OpenBLAS's pthread flavour, where it is the one linked, keeps a pool of
/// its own, which stays idle.)
void sgemm(int threads, bool transA, bool transB, int64_t m, int64_t n,
           int64_t k, float alpha, const float *a, int64_t lda, const float *b,
           int64_t ldb, float beta, float *c, int64_t ldc);

/// sgemm() in float64 (OpenBLAS's dgemm).
void dgemm(int threads, bool transA, bool transB, int64_t m, int64_t n,
           int64_t k, double alpha, const double *a, int64_t lda,
           const double *b, int64_t ldb, double beta, double *c, int64_t ldc);

/// Keeps OpenBLAS single-threaded; call before using cblas directly.
void useSingleThreadedBlas();

/// Row-major strides of `shape[0..rank)` in elements.
void rowMajorStrides(const int64_t *shape, int32_t rank, int64_t *strides);

/// Whether OpenMP threads spin while they wait under OMP_WAIT_POLICY
/// `policy` and GOMP_SPINCOUNT `spinCount` (null where unset), as libgomp
/// reads them: unless the policy is PASSIVE or the count is 0.
bool waitsSpin(const char *policy, const char *spinCount);

/// waitsSpin of this process's environment when the runtime loaded (cleave
/// run, cleave-worker and `import cleave` choose the waits before it does).
bool threadsSpin();

/// `sleeping` where waiting threads sleep; an eighth of it where they spin.
inline int64_t parallelWork(int64_t sleeping) {
  return threadsSpin() ? sleeping / 8 : sleeping;
}

/// Work below which an OpenMP loop runs on one thread, fixed when the
/// runtime loads. Waking a sleeping thread for a region took 11 us back to
/// back and 23 us after 200 us of other work on a 2-vCPU virtual machine,
/// 1.8-2.1 us for a spinning one: with sleeping threads a second thread
/// pays only on loops of tens of microseconds, tens of thousands of
/// elements (docs/PERFORMANCE.md, "Fewer teams at 2 threads"); with
/// spinning ones an eighth of that ("Small convolutions of a batch, SiLU
/// after oneDNN, and transposes by register blocks").
inline const int64_t kParallelGrain = parallelWork(int64_t(1) << 16);

/// Multiply-adds below which a matrix product, or a batch of them, runs on
/// one thread: about 20 us on one core, as for kParallelGrain, with
/// sleeping threads.
inline const int64_t kParallelProductWork = parallelWork(int64_t(1) << 19);

/// Whether a kernel of `threads` threads should fork a team for a loop it
/// judged worth splitting (`worth`). Where it should not, the loop must run
/// outside any OpenMP region, not in one of one thread: libgomp allocates
/// and frees a team at every region it enters, a team of one (a false `if`
/// clause, `num_threads(1)`) included, about 0.4 us a time here, which a
/// program of small steps pays at every step.
inline bool forkTeam(int threads, bool worth) { return threads > 1 && worth; }

/// body(i) for every i in [0, n): split statically over a team of `threads`
/// where forkTeam(threads, worth), on the calling thread alone otherwise.
template <typename Body>
void parallelFor(int threads, bool worth, int64_t n, const Body &body) {
  if (forkTeam(threads, worth) && n > 1) {
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t i = 0; i < n; ++i)
      body(i);
    return;
  }
  for (int64_t i = 0; i < n; ++i)
    body(i);
}

/// share() on a team of `threads` where forkTeam(threads, worth), else once
/// on the calling thread. `share` splits its loops with `#pragma omp for`,
/// which outside a region runs every iteration on the one thread.
template <typename Share>
void parallelRegion(int threads, bool worth, const Share &share) {
  if (forkTeam(threads, worth)) {
#pragma omp parallel num_threads(threads)
    share();
    return;
  }
  share();
}

} // namespace cleave::cpu

#endif // CLEAVE_KERNELS_CPU_KERNELSUPPORT_H
