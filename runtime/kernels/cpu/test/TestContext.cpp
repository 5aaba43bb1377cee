//===- TestContext.cpp - cleave_rt_* services for the kernel tests --------===//
//
// The runtime (runtime/src) defines these for real programs; the kernel
// tests link this stand-in instead, which records failures in the context
// and keeps scratch memory in the context's buffer.
//
//===----------------------------------------------------------------------===//

#include "cleave/rt/Context.h"

#include <cstdlib>

extern "C" int32_t cleave_rt_fail(CleaveContext *ctx, const char *kernel,
                                  const char *message) {
  if (ctx->error.empty()) {
    ctx->failedKernel = kernel ? kernel : "";
    ctx->error = message ? message : "";
  }
  return 1;
}

extern "C" void *cleave_rt_scratch(CleaveContext *ctx, size_t bytes) {
  if (bytes <= ctx->scratchBytes)
    return ctx->scratch;
  std::free(ctx->scratch);
  size_t rounded = (bytes + 63) / 64 * 64;
  ctx->scratch = std::aligned_alloc(64, rounded);
  ctx->scratchBytes = ctx->scratch ? rounded : 0;
  if (!ctx->scratch)
    cleave_rt_fail(ctx, "scratch", "out of memory");
  return ctx->scratch;
}

extern "C" int32_t cleave_rt_num_threads(CleaveContext *ctx) {
  return ctx->numThreads;
}

extern "C" int32_t cleave_rt_cpu_level(CleaveContext *ctx) {
  return ctx->cpuLevel;
}

extern "C" int32_t cleave_rt_constant_weights(CleaveContext *ctx,
                                              const void *data, size_t bytes) {
  return ctx->holdsConstantWeights(data, bytes);
}

extern "C" const void *cleave_rt_find_packed_weights(CleaveContext *ctx,
                                                     const void *weights,
                                                     const void *layout,
                                                     size_t layoutBytes,
                                                     size_t bytes) {
  return ctx->findPackedWeights(weights, layout, layoutBytes, bytes);
}

extern "C" void cleave_rt_packed_weights(CleaveContext *ctx,
                                         const void *weights,
                                         const void *layout, size_t layoutBytes,
                                         const void *data, size_t bytes) {
  ctx->reportPackedWeights(weights, layout, layoutBytes, data, bytes);
}

extern "C" void *cleave_rt_kernel_cache(CleaveContext *ctx,
                                        void *(*create)(void),
                                        void (*destroy)(void *)) {
  void *cache = ctx->getKernelCache(create, destroy);
  if (!cache)
    cleave_rt_fail(ctx, "", "cannot create the kernels' cache");
  return cache;
}

extern "C" void *cleave_rt_cuda_stream(CleaveContext *ctx) {
  return ctx->cudaStream;
}
extern "C" void *cleave_rt_cublas(CleaveContext *ctx) { return ctx->cublas; }
extern "C" void *cleave_rt_cublaslt(CleaveContext *ctx) {
  return ctx->cublasLt;
}
extern "C" void *cleave_rt_cudnn(CleaveContext *ctx) { return ctx->cudnn; }

extern "C" void cleave_rt_step(CleaveContext *ctx, int32_t step,
                               const char *node) {
  ctx->step = step;
  ctx->node = node;
}
