//===- TestServices.cpp - cleave_rt_* services for a kernels-only build ---===//
//
// Linked into cleave-cuda-kernel-tests only when the runtime core
// (libcleave_rt) is not part of the build: the smallest implementation of
// the services the CUDA kernels call, with the core's semantics (the first
// failure wins; scratch grows through the device and stays until the next
// call).
//
//===----------------------------------------------------------------------===//

#include "cleave/rt/Context.h"
#include "cleave/rt/Device.h"

#include <exception>

extern "C" {

int32_t cleave_rt_fail(CleaveContext *ctx, const char *kernel,
                       const char *message) {
  if (ctx->error.empty()) {
    ctx->error = message;
    ctx->failedKernel = kernel;
  }
  return 1;
}

void *cleave_rt_scratch(CleaveContext *ctx, size_t bytes) {
  if (bytes <= ctx->scratchBytes)
    return ctx->scratch;
  try {
    if (ctx->scratch)
      ctx->device->release(ctx->scratch);
    ctx->scratch = nullptr;
    ctx->scratchBytes = 0;
    ctx->scratch = ctx->device->allocate(bytes);
    ctx->scratchBytes = bytes;
    return ctx->scratch;
  } catch (const std::exception &e) {
    cleave_rt_fail(ctx, "scratch", e.what());
    return nullptr;
  }
}

int32_t cleave_rt_num_threads(CleaveContext *ctx) { return ctx->numThreads; }
void *cleave_rt_cuda_stream(CleaveContext *ctx) { return ctx->cudaStream; }
void *cleave_rt_cublas(CleaveContext *ctx) { return ctx->cublas; }
void *cleave_rt_cublaslt(CleaveContext *ctx) { return ctx->cublasLt; }
void *cleave_rt_cudnn(CleaveContext *ctx) { return ctx->cudnn; }

void cleave_rt_step(CleaveContext *ctx, int32_t step, const char *node) {
  ctx->step = step;
  ctx->node = node;
}

} // extern "C"
