//===- KernelSupport.cpp - what the CPU kernels share ---------------------===//
//
// Failure formatting, argument checks and the thread count.
//
//===----------------------------------------------------------------------===//

#include "KernelSupport.h"

#include <atomic>
#include <cstdarg>
#include <cstdio>

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

int32_t checkArity(CleaveContext *ctx, const char *kernel, int32_t numIn,
                   int32_t minIn, int32_t numOut, int32_t minOut) {
  if (numIn < minIn)
    return fail(ctx, kernel, "expected at least %d inputs, got %d", minIn,
                numIn);
  if (numOut < minOut)
    return fail(ctx, kernel, "expected at least %d outputs, got %d", minOut,
                numOut);
  return 0;
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
  int threads = cleave_rt_num_threads(ctx);
  return threads > 0 ? threads : 1;
}

void setBlasThreads(int threads) {
  static std::atomic<int> current{0};
  if (current.exchange(threads) != threads)
    openblas_set_num_threads(threads);
}

void rowMajorStrides(const int64_t *shape, int32_t rank, int64_t *strides) {
  int64_t stride = 1;
  for (int32_t i = rank - 1; i >= 0; --i) {
    strides[i] = stride;
    stride *= shape[i];
  }
}

} // namespace cleave::cpu
