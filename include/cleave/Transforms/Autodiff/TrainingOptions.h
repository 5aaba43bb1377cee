//===- TrainingOptions.h - the options of a training bundle -----*- C++ -*-===//
//
// The options of the training part of `cleave compile` and of the compile
// pipeline: the loss (a graph output, or one attached to an output and new
// labels) and the trainable parameters. Both front ends fill this struct and
// check it with `validateTrainingOptions`, which names the options as each
// spells them.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_TRANSFORMS_AUTODIFF_TRAININGOPTIONS_H
#define CLEAVE_TRANSFORMS_AUTODIFF_TRAININGOPTIONS_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

namespace cleave {

/// The losses `cleave-attach-loss` builds.
inline constexpr llvm::StringLiteral kCrossEntropyLoss = "cross-entropy";
inline constexpr llvm::StringLiteral kMeanSquaredErrorLoss = "mse";
/// The optimizers `cleave-optimizer-update` builds.
inline constexpr llvm::StringLiteral kSgdOptimizer = "sgd";
inline constexpr llvm::StringLiteral kAdamOptimizer = "adam";
inline constexpr llvm::StringLiteral kAdamWOptimizer = "adamw";
/// The precisions of a training step's products (`cleave-mixed-precision`).
inline constexpr llvm::StringLiteral kFloat32Precision = "fp32";
inline constexpr llvm::StringLiteral kBFloat16Precision = "bf16";
inline constexpr llvm::StringLiteral kFloat16Precision = "fp16";
/// The name of the result `cleave-attach-loss` adds.
inline constexpr llvm::StringLiteral kAttachedLossName = "loss";

/// The MiB of gradient sums in one bucket of the overlapped data-parallel
/// reduction, unless --grad-bucket-mb says otherwise (PyTorch DDP's).
inline constexpr double kDefaultGradBucketMb = 25;

struct TrainingOptions {
  /// Differentiate (or `train`): the outputs are the loss and the parameters'
  /// gradients.
  bool gradients = false;
  /// The graph output to differentiate; with `logits`, the loss to attach
  /// (cross-entropy or mse).
  std::string loss;
  /// The graph output an attached loss reads.
  std::string logits;
  /// The graph input of an attached loss's targets.
  std::string labels;
  /// cross-entropy: the label whose targets do not count; unset, -100
  /// (PyTorch's default).
  std::optional<int64_t> ignoreIndex;
  /// Regular expression of the weights that are not trained.
  std::string freeze;

  /// Compile a whole training step: forward, backward and the optimizer's
  /// update of the parameters, which live in the program's persistent
  /// memory with the optimizer state; the bundle's output is the loss.
  bool train = false;
  /// The optimizer options; unset ones take the optimizer's default, as
  /// PyTorch's (AdamW's weight decay 0.01, every other 0).
  std::optional<std::string> optimizer;
  std::optional<double> learningRate, momentum, weightDecay, epsilon,
      clipGradNorm, minLrRatio;
  std::optional<bool> nesterov;
  /// Adam's beta1 and beta2, as `0.9,0.999`.
  std::optional<std::string> betas;
  std::optional<int64_t> warmupSteps, decaySteps;
  /// Recompute the forward's activations in the backward, per segment.
  std::optional<bool> recompute;
  /// Recompute every segment, a transformer layer from its input alone
  /// (the plan's `--recompute layers`).
  std::optional<bool> recomputeLayers;
  /// The ZeRO stage of data-parallel replicas: 1 shards the optimizer
  /// state over them.
  std::optional<int64_t> zero;
  /// Batch statistics over every data-parallel replica's batch.
  std::optional<bool> syncBatchNorm;
  /// When data-parallel replicas reduce their gradient sums: "overlap"
  /// (each starts in the last microbatch's backward as soon as it is
  /// final) or "update" (all in the update).
  std::optional<std::string> gradReduction;
  /// With gradReduction "overlap": the MiB of gradient sums in one bucket,
  /// reduced as one message (0: every gradient its own).
  std::optional<double> gradBucketMb;
  /// The precision of the matrix products, convolutions and attention:
  /// fp32, or bf16 or fp16 (mixed precision; the parameters, the optimizer
  /// state and every other op stay float32).
  std::optional<std::string> precision;
  /// fp16: dynamic loss scaling's initial scale, and the steps without an
  /// overflow after which the scale doubles.
  std::optional<double> lossScale;
  std::optional<int64_t> lossScaleGrowthInterval;

  /// With `validateTrainingOptions` passed: the values, defaults filled in.
  std::string getOptimizer() const {
    return optimizer.value_or(kAdamWOptimizer.str());
  }
  double getLearningRate() const { return learningRate.value_or(1e-3); }
  double getWeightDecay() const {
    return weightDecay.value_or(getOptimizer() == kAdamWOptimizer ? 1e-2 : 0);
  }
  std::pair<double, double> getBetas() const;

  /// The precision given, fp32 when none is.
  std::string getPrecision() const {
    return precision.value_or(kFloat32Precision.str());
  }
  /// Whether the products compute in a lower precision than float32.
  bool isMixedPrecision() const { return getPrecision() != kFloat32Precision; }
  /// Whether the step scales its loss (float16, whose range the gradients
  /// underflow without it); the scale and its growth interval.
  bool scalesLoss() const {
    return train && getPrecision() == kFloat16Precision;
  }
  double getLossScale() const { return lossScale.value_or(65536.0); }
  int64_t getLossScaleGrowthInterval() const {
    return lossScaleGrowthInterval.value_or(2000);
  }

  /// Whether the loss is differentiated (for its gradients, or to train).
  bool differentiates() const { return gradients || train; }
  /// Whether a loss is attached to `logits` (rather than read from `loss`).
  bool attachesLoss() const { return !logits.empty(); }
  int64_t getIgnoreIndex() const { return ignoreIndex.value_or(-100); }
  /// The name of the result to differentiate.
  std::string getLossResult() const {
    return attachesLoss() ? kAttachedLossName.str() : loss;
  }
};

/// Checks that the options fit together; the error names the options as
/// the user spelled them: `--loss NAME` for `prefix` "--", `loss=<name>`
/// for an empty prefix (pass options).
llvm::Error validateTrainingOptions(const TrainingOptions &options,
                                    llvm::StringRef prefix);

} // namespace cleave

#endif // CLEAVE_TRANSFORMS_AUTODIFF_TRAININGOPTIONS_H
