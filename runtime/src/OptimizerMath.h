//===- OptimizerMath.h - optimizer updates, host and device -----*- C++ -*-===//
//
// The arithmetic of the sgd_update and adam_update kernels (KernelList.def)
// for one element and the learning-rate schedule, written once for the CPU
// kernels and the CUDA ones. Scalars are computed in double, elements in
// float, as PyTorch computes a float32 parameter's update.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_RT_OPTIMIZERMATH_H
#define CLEAVE_RT_OPTIMIZERMATH_H

#include <cstdint>
#include <math.h>

#ifdef __CUDACC__
#define CLEAVE_HOST_DEVICE __host__ __device__
#else
#define CLEAVE_HOST_DEVICE
#endif

namespace cleave::rt::optimizer {

/// The learning rate of step `step` (counted from 0): linear warm-up over
/// `warmupSteps`, then a cosine down to `minLrRatio * learningRate` at
/// `decaySteps` when it lies beyond the warm-up, else constant.
CLEAVE_HOST_DEVICE inline double
learningRateAt(double learningRate, int64_t step, int64_t warmupSteps,
               int64_t decaySteps, double minLrRatio) {
  if (step < warmupSteps)
    return learningRate * static_cast<double>(step + 1) /
           static_cast<double>(warmupSteps);
  if (decaySteps <= warmupSteps)
    return learningRate;
  double progress = static_cast<double>(step - warmupSteps) /
                    static_cast<double>(decaySteps - warmupSteps);
  if (progress > 1)
    progress = 1;
  const double pi = 3.14159265358979323846;
  return learningRate *
         (minLrRatio + (1 - minLrRatio) * 0.5 * (1 + cos(pi * progress)));
}

/// Whether an update skips its step: a gradient scale that is not finite
/// marks gradients that hold an inf or a NaN (dynamic loss scaling adds a
/// NaN to the scale of such a step), and the parameter, its state and the
/// step count stay as they are.
CLEAVE_HOST_DEVICE inline bool skipsStep(float scale) {
  return !isfinite(scale);
}

/// The scalars of one SGD step.
struct SgdStep {
  float learningRate, momentum, dampening, weightDecay, scale;
  bool nesterov, firstStep;
};

/// `buffer` is read and written only with momentum (null without).
CLEAVE_HOST_DEVICE inline void sgdElement(const SgdStep &s, float gradient,
                                          float &parameter, float *buffer) {
  float g = gradient * s.scale;
  if (s.weightDecay != 0)
    g += s.weightDecay * parameter;
  if (s.momentum != 0) {
    *buffer = s.firstStep ? g : s.momentum * *buffer + (1 - s.dampening) * g;
    g = s.nesterov ? g + s.momentum * *buffer : *buffer;
  }
  parameter -= s.learningRate * g;
}

/// The scalars of one Adam step (`step` counted from 1).
struct AdamStep {
  float learningRate, beta1, beta2, epsilon, weightDecay, scale;
  bool decoupled;
  /// lr / (1 - beta1^step) and sqrt(1 - beta2^step).
  float stepSize, secondCorrectionRoot;
};

CLEAVE_HOST_DEVICE inline AdamStep
makeAdamStep(double learningRate, double beta1, double beta2, double epsilon,
             double weightDecay, double scale, bool decoupled, double step) {
  AdamStep s;
  s.learningRate = static_cast<float>(learningRate);
  s.beta1 = static_cast<float>(beta1);
  s.beta2 = static_cast<float>(beta2);
  s.epsilon = static_cast<float>(epsilon);
  s.weightDecay = static_cast<float>(weightDecay);
  s.scale = static_cast<float>(scale);
  s.decoupled = decoupled;
  s.stepSize = static_cast<float>(learningRate / (1 - pow(beta1, step)));
  s.secondCorrectionRoot = static_cast<float>(sqrt(1 - pow(beta2, step)));
  return s;
}

CLEAVE_HOST_DEVICE inline void adamElement(const AdamStep &s, float gradient,
                                           float &parameter, float &first,
                                           float &second) {
  float g = gradient * s.scale;
  if (s.weightDecay != 0) {
    if (s.decoupled)
      parameter *= 1 - s.learningRate * s.weightDecay;
    else
      g += s.weightDecay * parameter;
  }
  first += (g - first) * (1 - s.beta1);
  second = s.beta2 * second + (1 - s.beta2) * g * g;
  float denominator = sqrtf(second) / s.secondCorrectionRoot + s.epsilon;
  parameter -= s.stepSize * first / denominator;
}

} // namespace cleave::rt::optimizer

#undef CLEAVE_HOST_DEVICE

#endif // CLEAVE_RT_OPTIMIZERMATH_H
