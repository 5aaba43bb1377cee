//===- Context.cpp - the services the runtime gives programs
//---------------===//
//
// The cleave_rt_* functions of Kernels.h. Emitted programs and kernels call
// them through the opaque CleaveContext; the state behind it is Context.h.
//
//===----------------------------------------------------------------------===//

#include "Watchdog.h"

#include "cleave/rt/Context.h"
#include "cleave/rt/Device.h"

#include <exception>
#include <string>

extern "C" {

int32_t cleave_rt_fail(CleaveContext *ctx, const char *kernel,
                       const char *message) {
  // The first failure is the cause; later ones are its consequences.
  if (ctx->error.empty()) {
    std::string where;
    if (ctx->step >= 0) {
      where = "step " + std::to_string(ctx->step);
      if (ctx->node && *ctx->node)
        where += " (node '" + std::string(ctx->node) + "')";
    }
    if (kernel && *kernel)
      where += (where.empty() ? "kernel " : ", kernel ") + std::string(kernel);
    std::string reason = message && *message ? message : "failed";
    ctx->error = where.empty() ? reason : where + ": " + reason;
    ctx->failedKernel = kernel ? kernel : "";
  }
  return 1;
}

void *cleave_rt_scratch(CleaveContext *ctx, size_t bytes) {
  if (bytes <= ctx->scratchBytes)
    return ctx->scratch;
  // Grow geometrically so that a program whose steps ask for slowly growing
  // sizes does not reallocate at every step.
  std::size_t size = bytes;
  if (size < 2 * ctx->scratchBytes)
    size = 2 * ctx->scratchBytes;
  try {
    void *fresh = ctx->device->allocate(size);
    if (ctx->scratch)
      ctx->device->release(ctx->scratch);
    ctx->scratch = fresh;
    ctx->scratchBytes = size;
    return fresh;
  } catch (const std::exception &e) {
    std::string message = "cannot allocate " + std::to_string(bytes) +
                          " bytes of scratch memory: " + e.what();
    cleave_rt_fail(ctx, "", message.c_str());
    return nullptr;
  }
}

int32_t cleave_rt_num_threads(CleaveContext *ctx) { return ctx->numThreads; }
int32_t cleave_rt_cpu_level(CleaveContext *ctx) { return ctx->cpuLevel; }

int32_t cleave_rt_constant_weights(CleaveContext *ctx, const void *data,
                                   size_t bytes) {
  return ctx->holdsConstantWeights(data, bytes);
}

const void *cleave_rt_find_packed_weights(CleaveContext *ctx,
                                          const void *weights,
                                          const void *layout,
                                          size_t layoutBytes, size_t bytes) {
  return ctx->findPackedWeights(weights, layout, layoutBytes, bytes);
}

void cleave_rt_packed_weights(CleaveContext *ctx, const void *weights,
                              const void *layout, size_t layoutBytes,
                              const void *data, size_t bytes) {
  ctx->reportPackedWeights(weights, layout, layoutBytes, data, bytes);
}

void *cleave_rt_kernel_cache(CleaveContext *ctx, void *(*create)(void),
                             void (*destroy)(void *)) {
  void *cache = ctx->getKernelCache(create, destroy);
  if (!cache)
    cleave_rt_fail(ctx, "", "cannot create the kernels' cache");
  return cache;
}

void *cleave_rt_cuda_stream(CleaveContext *ctx) { return ctx->cudaStream; }
void *cleave_rt_cublas(CleaveContext *ctx) { return ctx->cublas; }
void *cleave_rt_cublaslt(CleaveContext *ctx) { return ctx->cublasLt; }
void *cleave_rt_cudnn(CleaveContext *ctx) { return ctx->cudnn; }

void cleave_rt_step(CleaveContext *ctx, int32_t step, const char *node) {
  ctx->step = step;
  ctx->node = node;
  if (ctx->watchdog)
    ctx->watchdog->begin("step", node);
  if (ctx->onStep)
    ctx->onStep(ctx, step, node);
}

} // extern "C"
