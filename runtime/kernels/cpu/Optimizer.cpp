//===- Optimizer.cpp - optimizer updates on the CPU -------------*- C++ -*-===//
//
// sgd_update and adam_update: one pass over a float32 parameter and its
// state (none for SGD without momentum), in place, the arithmetic shared with
// the CUDA kernels (OptimizerMath.h). A step whose gradient scale is not finite
// writes nothing.
//
//===----------------------------------------------------------------------===//

#include "KernelSupport.h"

#include "../../src/OptimizerMath.h"

#include <initializer_list>
#include <utility>

using namespace cleave::cpu;
namespace optimizer = cleave::rt::optimizer;

namespace {

const float *floats(const CleaveTensor &t) {
  return static_cast<const float *>(t.data);
}
float *floats(CleaveTensor &t) { return static_cast<float *>(t.data); }

/// Every tensor float32, the state as large as the parameter (a null state
/// is absent), the scale and the step one element each.
int32_t checkUpdate(CleaveContext *ctx, const char *kernel,
                    const CleaveTensor &gradient, const CleaveTensor &scale,
                    const CleaveTensor &parameter,
                    std::initializer_list<const CleaveTensor *> state,
                    const CleaveTensor &step) {
  for (auto [tensor, what] : {std::pair{&gradient, "gradient"},
                              {&scale, "gradient scale"},
                              {&parameter, "parameter"},
                              {&step, "step"}})
    if (int32_t status = checkF32(ctx, kernel, *tensor, what))
      return status;
  int64_t n = numElements(parameter);
  if (numElements(gradient) != n)
    return fail(ctx, kernel,
                "the gradient has %lld elements, the parameter %lld",
                (long long)numElements(gradient), (long long)n);
  for (const CleaveTensor *tensor : state) {
    if (!tensor)
      continue;
    if (int32_t status = checkF32(ctx, kernel, *tensor, "state"))
      return status;
    if (numElements(*tensor) != n)
      return fail(ctx, kernel,
                  "the state has %lld elements, the parameter %lld",
                  (long long)numElements(*tensor), (long long)n);
  }
  if (numElements(scale) != 1 || numElements(step) != 1)
    return fail(ctx, kernel, "the gradient scale and the step must be scalars");
  return 0;
}

} // namespace

int32_t cleave::cpu::kernels::sgd_update(CleaveContext *ctx,
                                         const args::SgdUpdate &args) {
  const char *kernel = "sgd_update";
  CleaveTensor &parameter = args.parameter(), &step = args.step();
  CleaveTensor *buffer = args.momentumBuffer();
  if (!buffer && args.momentum() != 0)
    return fail(ctx, kernel, "a momentum of %g needs a momentum buffer",
                args.momentum());
  if (int32_t status =
          checkUpdate(ctx, kernel, args.gradient(), args.gradientScale(),
                      parameter, {buffer}, step))
    return status;
  if (optimizer::skipsStep(*floats(args.gradientScale())))
    return 0;
  auto count = static_cast<int64_t>(*floats(step));
  optimizer::SgdStep s;
  s.learningRate = static_cast<float>(
      optimizer::learningRateAt(args.learningRate(), count, args.warmupSteps(),
                                args.decaySteps(), args.minLrRatio()));
  s.momentum = static_cast<float>(args.momentum());
  s.dampening = static_cast<float>(args.dampening());
  s.weightDecay = static_cast<float>(args.weightDecay());
  s.scale = *floats(args.gradientScale());
  s.nesterov = args.nesterov() != 0;
  s.firstStep = count == 0;
  const float *g = floats(args.gradient());
  float *p = floats(parameter), *b = buffer ? floats(*buffer) : nullptr;
  int64_t n = numElements(parameter);
  parallelFor(numThreads(ctx), n > 65536, n, [&](int64_t i) {
    optimizer::sgdElement(s, g[i], p[i], b ? &b[i] : nullptr);
  });
  *floats(step) += 1;
  return 0;
}

int32_t cleave::cpu::kernels::adam_update(CleaveContext *ctx,
                                          const args::AdamUpdate &args) {
  const char *kernel = "adam_update";
  CleaveTensor &parameter = args.parameter(), &first = args.firstMoment(),
               &second = args.secondMoment(), &step = args.step();
  if (int32_t status =
          checkUpdate(ctx, kernel, args.gradient(), args.gradientScale(),
                      parameter, {&first, &second}, step))
    return status;
  if (optimizer::skipsStep(*floats(args.gradientScale())))
    return 0;
  auto count = static_cast<int64_t>(*floats(step));
  double learningRate =
      optimizer::learningRateAt(args.learningRate(), count, args.warmupSteps(),
                                args.decaySteps(), args.minLrRatio());
  optimizer::AdamStep s = optimizer::makeAdamStep(
      learningRate, args.beta1(), args.beta2(), args.epsilon(),
      args.weightDecay(), *floats(args.gradientScale()), args.decoupled() != 0,
      static_cast<double>(count + 1));
  const float *g = floats(args.gradient());
  float *p = floats(parameter), *m = floats(first), *v = floats(second);
  int64_t n = numElements(parameter);
  parallelFor(numThreads(ctx), n > 65536, n, [&](int64_t i) {
    optimizer::adamElement(s, g[i], p[i], m[i], v[i]);
  });
  *floats(step) += 1;
  return 0;
}
