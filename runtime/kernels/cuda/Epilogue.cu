//===- Epilogue.cu - a kernel's bias and activation in one pass -----------===//
//
// One grid-stride kernel per activation, as the CPU's Epilogue.cpp has one
// loop per activation, so that each compiles to straight-line code.
//
//===----------------------------------------------------------------------===//

#include "CudaCommon.h"
#include "Epilogue.h"

#include "cleave/rt/Scalar.h"

using namespace cleave::cuda;

namespace {

/// The activations, as rt/Scalar.h computes them in the program's loops.
struct Relu {
  __device__ float operator()(float v) const { return cl::relu(v); }
};
/// A clamp that keeps a NaN (as the CPU's clip epilogue does).
struct Clamp {
  float lo, hi;
  __device__ float operator()(float v) const {
    v = v != v ? v : (lo > v ? lo : v);
    return v != v ? v : (hi < v ? hi : v);
  }
};
struct Silu {
  __device__ float operator()(float v) const { return v * cl::sigmoid(v); }
};
struct GeluErf {
  __device__ float operator()(float v) const { return cl::gelu_erf(v); }
};
struct GeluTanh {
  __device__ float operator()(float v) const { return cl::gelu_tanh(v); }
};
struct Identity {
  __device__ float operator()(float v) const { return v; }
};

template <typename Activation>
__global__ void epilogueKernel(float *y, int64_t n, const float *bias,
                               int64_t inner, int64_t count,
                               Activation activation) {
  CLEAVE_GRID_LOOP(i, n) {
    float v = y[i];
    if (bias)
      v += bias[(i / inner) % count];
    y[i] = activation(v);
  }
}

template <typename Activation>
void launch(cudaStream_t stream, float *y, int64_t n, const float *bias,
            int64_t inner, int64_t count, Activation activation) {
  epilogueKernel<<<blocksFor(n), kThreads, 0, stream>>>(y, n, bias, inner,
                                                        count, activation);
}

} // namespace

int32_t Epilogue::read(CleaveContext *ctx, const char *kernel, int64_t kind,
                       double min, double max) {
  if (cleave::rt::args::checkEpilogue(ctx, kernel, kind, min, max))
    return 1;
  this->kind = kind;
  this->min = static_cast<float>(min);
  this->max = static_cast<float>(max);
  return 0;
}

int32_t cleave::cuda::checkEpilogueInputs(
    CleaveContext *ctx, const char *kernel, int32_t dtype,
    const Epilogue &epilogue, const CleaveTensor *bias, int64_t count,
    const CleaveTensor *residual, int64_t outputs) {
  if (dtype != CLEAVE_F32 && (bias || residual || !epilogue.none()))
    return fail(ctx, kernel,
                "a bias, residual or epilogue applies to float32 results "
                "only, not element type %d",
                dtype);
  if (bias && bias->dtype != CLEAVE_F32)
    return fail(ctx, kernel, "the bias has element type %d, not float32",
                bias->dtype);
  if (bias && numElements(*bias) != count)
    return fail(ctx, kernel, "the bias has %lld elements, expected %lld",
                static_cast<long long>(numElements(*bias)),
                static_cast<long long>(count));
  if (residual && residual->dtype != CLEAVE_F32)
    return fail(ctx, kernel, "R has element type %d, not float32",
                residual->dtype);
  if (residual && numElements(*residual) != outputs)
    return fail(ctx, kernel, "R has %lld elements, Y %lld",
                static_cast<long long>(numElements(*residual)),
                static_cast<long long>(outputs));
  return 0;
}

int32_t cleave::cuda::applyEpilogue(CleaveContext *ctx, const char *kernel,
                                    const Epilogue &epilogue, float *y,
                                    int64_t n, const float *bias, int64_t inner,
                                    int64_t count) {
  if (n == 0 || (!bias && epilogue.none()))
    return 0;
  cudaStream_t stream = streamOf(ctx);
  switch (epilogue.kind) {
  case CLEAVE_EPILOGUE_RELU:
    launch(stream, y, n, bias, inner, count, Relu());
    break;
  case CLEAVE_EPILOGUE_CLIP:
    launch(stream, y, n, bias, inner, count, Clamp{epilogue.min, epilogue.max});
    break;
  case CLEAVE_EPILOGUE_SILU:
    launch(stream, y, n, bias, inner, count, Silu());
    break;
  case CLEAVE_EPILOGUE_GELU:
    launch(stream, y, n, bias, inner, count, GeluErf());
    break;
  case CLEAVE_EPILOGUE_GELU_TANH:
    launch(stream, y, n, bias, inner, count, GeluTanh());
    break;
  default:
    launch(stream, y, n, bias, inner, count, Identity());
  }
  return checkLaunch(ctx, kernel);
}

int32_t cleave::cuda::copyResidual(CleaveContext *ctx, const char *kernel,
                                   const void *from, void *to, size_t bytes) {
  if (from == to || bytes == 0)
    return 0;
  if (cudaMemcpyAsync(to, from, bytes, cudaMemcpyDeviceToDevice,
                      streamOf(ctx)) != cudaSuccess)
    return fail(ctx, kernel, "copying the residual: cudaMemcpyAsync failed");
  return 0;
}
