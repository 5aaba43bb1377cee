//===- Optimizer.cu - optimizer updates on the GPU --------------*- C++ -*-===//
//
// sgd_update and adam_update: one grid-stride pass over a float32
// parameter and its state (none for SGD without momentum), in place, with the
// arithmetic of the CPU kernels (OptimizerMath.h). The step count and the
// gradient scale live on the device: every thread reads them, and a one-thread
// kernel queued after the update advances the count. A step whose gradient
// scale is not finite writes nothing (every thread reads the scale before it
// writes).
//
//===----------------------------------------------------------------------===//

#include "CudaCommon.h"
#include "OptimizerMath.h"

#include <initializer_list>

using namespace cleave::cuda;
namespace optimizer = cleave::rt::optimizer;

namespace {

/// The learning-rate schedule and the hyperparameters the kernels share.
struct Schedule {
  double learningRate;
  int64_t warmupSteps, decaySteps;
  double minLrRatio;

  __device__ double at(int64_t step) const {
    return optimizer::learningRateAt(learningRate, step, warmupSteps,
                                     decaySteps, minLrRatio);
  }
};

__global__ void sgdKernel(const float *gradient, const float *scale,
                          float *parameter, float *buffer, const float *step,
                          int64_t n, Schedule schedule, float momentum,
                          float dampening, float weightDecay, bool nesterov) {
  if (optimizer::skipsStep(*scale))
    return;
  auto count = static_cast<int64_t>(*step);
  optimizer::SgdStep s;
  s.learningRate = static_cast<float>(schedule.at(count));
  s.momentum = momentum;
  s.dampening = dampening;
  s.weightDecay = weightDecay;
  s.scale = *scale;
  s.nesterov = nesterov;
  s.firstStep = count == 0;
  CLEAVE_GRID_LOOP(i, n)
  optimizer::sgdElement(s, gradient[i], parameter[i],
                        buffer ? &buffer[i] : nullptr);
}

__global__ void adamKernel(const float *gradient, const float *scale,
                           float *parameter, float *first, float *second,
                           const float *step, int64_t n, Schedule schedule,
                           double beta1, double beta2, double epsilon,
                           double weightDecay, bool decoupled) {
  if (optimizer::skipsStep(*scale))
    return;
  auto count = static_cast<int64_t>(*step);
  optimizer::AdamStep s = optimizer::makeAdamStep(
      schedule.at(count), beta1, beta2, epsilon, weightDecay, *scale, decoupled,
      static_cast<double>(count + 1));
  CLEAVE_GRID_LOOP(i, n)
  optimizer::adamElement(s, gradient[i], parameter[i], first[i], second[i]);
}

__global__ void advanceStepKernel(const float *scale, float *step) {
  if (!optimizer::skipsStep(*scale))
    *step += 1;
}

/// Every tensor float32 and the state as large as the parameter (a null
/// state is absent).
int32_t checkUpdate(CleaveContext *ctx, const char *kernel,
                    const CleaveTensor &gradient, const CleaveTensor &scale,
                    const CleaveTensor &parameter,
                    std::initializer_list<const CleaveTensor *> state,
                    const CleaveTensor &step) {
  int64_t n = numElements(parameter);
  for (const CleaveTensor *tensor : {&gradient, &scale, &parameter, &step})
    if (tensor->dtype != CLEAVE_F32)
      return fail(ctx, kernel, "every tensor must be float32");
  if (numElements(gradient) != n)
    return fail(ctx, kernel,
                "the gradient has %lld elements, the parameter %lld",
                (long long)numElements(gradient), (long long)n);
  for (const CleaveTensor *tensor : state)
    if (tensor && (tensor->dtype != CLEAVE_F32 || numElements(*tensor) != n))
      return fail(ctx, kernel,
                  "the state must be float32 of the parameter's size");
  if (numElements(scale) != 1 || numElements(step) != 1)
    return fail(ctx, kernel, "the gradient scale and the step must be scalars");
  return 0;
}

float *floats(const CleaveTensor &t) { return static_cast<float *>(t.data); }

} // namespace

int32_t cleave::cuda::kernels::sgd_update(CleaveContext *ctx,
                                          const args::SgdUpdate &args) {
  const char *kernel = "sgd_update";
  CleaveTensor *buffer = args.momentumBuffer();
  if (!buffer && args.momentum() != 0)
    return fail(ctx, kernel, "a momentum of %g needs a momentum buffer",
                args.momentum());
  if (int32_t status =
          checkUpdate(ctx, kernel, args.gradient(), args.gradientScale(),
                      args.parameter(), {buffer}, args.step()))
    return status;
  int64_t n = numElements(args.parameter());
  Schedule schedule{args.learningRate(), args.warmupSteps(), args.decaySteps(),
                    args.minLrRatio()};
  cudaStream_t stream = streamOf(ctx);
  sgdKernel<<<blocksFor(n), kThreads, 0, stream>>>(
      floats(args.gradient()), floats(args.gradientScale()),
      floats(args.parameter()), buffer ? floats(*buffer) : nullptr,
      floats(args.step()), n, schedule, static_cast<float>(args.momentum()),
      static_cast<float>(args.dampening()),
      static_cast<float>(args.weightDecay()), args.nesterov() != 0);
  advanceStepKernel<<<1, 1, 0, stream>>>(floats(args.gradientScale()),
                                         floats(args.step()));
  return checkLaunch(ctx, kernel);
}

int32_t cleave::cuda::kernels::adam_update(CleaveContext *ctx,
                                           const args::AdamUpdate &args) {
  const char *kernel = "adam_update";
  if (int32_t status = checkUpdate(
          ctx, kernel, args.gradient(), args.gradientScale(), args.parameter(),
          {&args.firstMoment(), &args.secondMoment()}, args.step()))
    return status;
  int64_t n = numElements(args.parameter());
  Schedule schedule{args.learningRate(), args.warmupSteps(), args.decaySteps(),
                    args.minLrRatio()};
  cudaStream_t stream = streamOf(ctx);
  adamKernel<<<blocksFor(n), kThreads, 0, stream>>>(
      floats(args.gradient()), floats(args.gradientScale()),
      floats(args.parameter()), floats(args.firstMoment()),
      floats(args.secondMoment()), floats(args.step()), n, schedule,
      args.beta1(), args.beta2(), args.epsilon(), args.weightDecay(),
      args.decoupled() != 0);
  advanceStepKernel<<<1, 1, 0, stream>>>(floats(args.gradientScale()),
                                         floats(args.step()));
  return checkLaunch(ctx, kernel);
}
