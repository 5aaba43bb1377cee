//===- TrainingOptions.cpp - check the training options ---------*- C++ -*-===//

#include "cleave/Transforms/Autodiff/TrainingOptions.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/Twine.h"

#include <cmath>

using namespace cleave;

namespace {

/// Spells options as one front end does: `--flag VALUE` or `flag=<value>`.
class OptionSpeller {
public:
  explicit OptionSpeller(llvm::StringRef prefix) : prefix(prefix) {}

  /// The option alone: `--loss` or `loss`.
  std::string name(llvm::StringRef flag) const { return (prefix + flag).str(); }
  /// The option with a placeholder for its value.
  std::string withValue(llvm::StringRef flag, llvm::StringRef value) const {
    if (prefix.empty())
      return (flag + "=<" + value.lower() + ">").str();
    return (prefix + flag + " " + value).str();
  }
  /// The option with the value given.
  std::string given(llvm::StringRef flag, llvm::StringRef value) const {
    return (prefix + flag + (prefix.empty() ? "=" : " ") + value).str();
  }

private:
  llvm::StringRef prefix;
};

llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(message);
}

std::optional<std::pair<double, double>> parseBetas(llvm::StringRef text) {
  auto [first, second] = text.split(',');
  double beta1, beta2;
  if (first.trim().getAsDouble(beta1) || second.trim().getAsDouble(beta2))
    return std::nullopt;
  auto inRange = [](double beta) { return beta >= 0 && beta < 1; };
  if (!inRange(beta1) || !inRange(beta2))
    return std::nullopt;
  return std::pair{beta1, beta2};
}

std::string number(double value) {
  std::string text = std::to_string(value);
  // 0.100000 -> 0.1
  if (text.find('.') != std::string::npos) {
    text.erase(text.find_last_not_of('0') + 1);
    if (text.back() == '.')
      text.pop_back();
  }
  return text;
}

/// The loss: a graph output, or one to attach.
llvm::Error validateLoss(const TrainingOptions &options,
                         const OptionSpeller &spell,
                         llvm::StringRef differentiate) {
  if (options.loss.empty())
    return fail(differentiate + " needs " + spell.withValue("loss", "NAME") +
                ", the graph output to differentiate (or, with " +
                spell.withValue("logits", "NAME") +
                ", the loss to attach: cross-entropy or mse)");
  if (!options.attachesLoss()) {
    if (options.ignoreIndex)
      return fail(spell.name("ignore-index") + " applies only with " +
                  spell.given("loss", kCrossEntropyLoss) + " " +
                  spell.withValue("logits", "NAME"));
    if (!options.labels.empty())
      return fail(spell.name("labels") + " applies only with " +
                  spell.withValue("logits", "NAME") +
                  ", the graph output an attached loss reads");
    return llvm::Error::success();
  }
  if (options.loss != kCrossEntropyLoss &&
      options.loss != kMeanSquaredErrorLoss)
    return fail(spell.given("loss", options.loss) + ": with " +
                spell.name("logits") +
                " the loss to attach is cross-entropy or mse");
  if (options.ignoreIndex && options.loss != kCrossEntropyLoss)
    return fail(spell.name("ignore-index") + " applies only with " +
                spell.given("loss", kCrossEntropyLoss));
  if (options.labels.empty())
    return fail(spell.name("logits") + " needs " +
                spell.withValue("labels", "NAME") +
                ", the graph input of the targets");
  return llvm::Error::success();
}

/// The optimizer and its hyperparameters, each in its range and given only
/// to an optimizer that reads it.
llvm::Error validateOptimizer(const TrainingOptions &options,
                              const OptionSpeller &spell) {
  std::string optimizer = options.getOptimizer();
  if (optimizer != kSgdOptimizer && optimizer != kAdamOptimizer &&
      optimizer != kAdamWOptimizer)
    return fail(spell.given("optimizer", optimizer) +
                ": the optimizer is sgd, adam or adamw");
  bool sgd = optimizer == kSgdOptimizer;
  auto only = [&](bool given, llvm::StringRef flag, bool applies,
                  llvm::StringRef which) -> llvm::Error {
    if (given && !applies)
      return fail(spell.name(flag) + " applies only with " +
                  spell.given("optimizer", which) + ", not " + optimizer);
    return llvm::Error::success();
  };
  if (llvm::Error error =
          only(options.momentum.has_value(), "momentum", sgd, "sgd"))
    return error;
  if (llvm::Error error =
          only(options.nesterov.has_value(), "nesterov", sgd, "sgd"))
    return error;
  if (llvm::Error error =
          only(options.betas.has_value(), "betas", !sgd, "adam|adamw"))
    return error;
  if (llvm::Error error =
          only(options.epsilon.has_value(), "eps", !sgd, "adam|adamw"))
    return error;

  auto check = [&](const std::optional<double> &value, llvm::StringRef flag,
                   bool ok, llvm::StringRef what) -> llvm::Error {
    if (value && (!std::isfinite(*value) || !ok))
      return fail(spell.given(flag, number(*value)) + ": " + what);
    return llvm::Error::success();
  };
  const std::optional<double> &lr = options.learningRate;
  if (llvm::Error error =
          check(lr, "lr", lr && *lr > 0, "the learning rate must be positive"))
    return error;
  const std::optional<double> &momentum = options.momentum;
  if (llvm::Error error = check(momentum, "momentum",
                                momentum && *momentum >= 0 && *momentum < 1,
                                "the momentum must lie in [0, 1)"))
    return error;
  if (options.nesterov.value_or(false) && momentum.value_or(0) == 0)
    return fail(spell.name("nesterov") + " needs a positive " +
                spell.name("momentum"));
  const std::optional<double> &decay = options.weightDecay;
  if (llvm::Error error = check(decay, "weight-decay", decay && *decay >= 0,
                                "the weight decay must not be negative"))
    return error;
  const std::optional<double> &eps = options.epsilon;
  if (llvm::Error error =
          check(eps, "eps", eps && *eps > 0, "epsilon must be positive"))
    return error;
  if (options.betas && !parseBetas(*options.betas))
    return fail(spell.given("betas", *options.betas) +
                ": the betas are two numbers in [0, 1), as 0.9,0.999");
  const std::optional<double> &clip = options.clipGradNorm;
  if (llvm::Error error =
          check(clip, "clip-grad-norm", clip && *clip > 0,
                "the largest global norm of the gradients must be positive"))
    return error;
  const std::optional<double> &ratio = options.minLrRatio;
  if (llvm::Error error =
          check(ratio, "min-lr-ratio", ratio && *ratio >= 0 && *ratio <= 1,
                "the ratio must lie in [0, 1]"))
    return error;
  for (auto [value, flag] : {std::pair{&options.warmupSteps, "warmup-steps"},
                             {&options.decaySteps, "decay-steps"}})
    if (*value && **value < 0)
      return fail(spell.given(flag, std::to_string(**value)) +
                  ": a count of steps must not be negative");
  int64_t warmup = options.warmupSteps.value_or(0);
  if (options.decaySteps && *options.decaySteps <= warmup)
    return fail(
        spell.given("decay-steps", std::to_string(*options.decaySteps)) +
        ": the cosine decay ends after the " + std::to_string(warmup) +
        " warm-up steps");
  if (ratio && !options.decaySteps)
    return fail(spell.name("min-lr-ratio") + " applies only with " +
                spell.withValue("decay-steps", "N"));
  return llvm::Error::success();
}

/// Dynamic loss scaling's options, given only to a float16 step.
llvm::Error validateLossScaling(const TrainingOptions &options,
                                const OptionSpeller &spell) {
  for (auto [given, flag] :
       {std::pair{options.lossScale.has_value(), "loss-scale"},
        {options.lossScaleGrowthInterval.has_value(),
         "loss-scale-growth-interval"}})
    if (given && !options.scalesLoss())
      return fail(spell.name(flag) + " applies only with " +
                  spell.name("train") + " " +
                  spell.given("precision", kFloat16Precision) +
                  ": the loss scale keeps float16 gradients in range");
  // The scale and its reciprocal are float32 scalars of the step.
  auto isFloat32Scale = [](double scale) {
    auto narrow = static_cast<float>(scale);
    return std::isfinite(narrow) && narrow > 0 && 1.0f / narrow > 0;
  };
  if (options.lossScale && !isFloat32Scale(*options.lossScale))
    return fail(spell.given("loss-scale", number(*options.lossScale)) +
                ": the loss scale must be a positive float32 number");
  if (options.lossScaleGrowthInterval && *options.lossScaleGrowthInterval < 1)
    return fail(spell.given("loss-scale-growth-interval",
                            std::to_string(*options.lossScaleGrowthInterval)) +
                ": the growth interval must be at least one step");
  return llvm::Error::success();
}

/// The precision: fp32, or bf16 or fp16 for a training step.
llvm::Error validatePrecision(const TrainingOptions &options,
                              const OptionSpeller &spell) {
  std::string precision = options.getPrecision();
  if (precision != kFloat32Precision && precision != kBFloat16Precision &&
      precision != kFloat16Precision)
    return fail(spell.given("precision", precision) +
                ": the precision is fp32, bf16 or fp16");
  if (precision == kFloat32Precision)
    return llvm::Error::success();
  if (!options.train)
    return fail(spell.given("precision", precision) + " applies only with " +
                spell.name("train") +
                ": mixed precision is a training step's (its parameters and "
                "their updates stay float32)");
  return llvm::Error::success();
}

bool anyOptimizerOption(const TrainingOptions &options) {
  return options.optimizer || options.learningRate || options.momentum ||
         options.weightDecay || options.epsilon || options.clipGradNorm ||
         options.minLrRatio || options.nesterov || options.betas ||
         options.warmupSteps || options.decaySteps || options.recompute ||
         options.recomputeLayers || options.zero || options.syncBatchNorm ||
         options.gradReduction || options.gradBucketMb;
}

} // namespace

std::pair<double, double> TrainingOptions::getBetas() const {
  if (betas)
    if (std::optional<std::pair<double, double>> parsed = parseBetas(*betas))
      return *parsed;
  return {0.9, 0.999};
}

llvm::Error cleave::validateTrainingOptions(const TrainingOptions &options,
                                            llvm::StringRef prefix) {
  OptionSpeller spell(prefix);
  if (options.gradients && options.train)
    return fail(spell.name("gradients") + " and " + spell.name("train") +
                " exclude each other: a training step's only output is the "
                "loss");
  if (!options.differentiates()) {
    for (auto [flag, value] : {std::pair{"loss", &options.loss},
                               {"logits", &options.logits},
                               {"labels", &options.labels},
                               {"freeze", &options.freeze}})
      if (!value->empty())
        return fail(spell.name(flag) + " applies only with " +
                    spell.name("gradients") + " or " + spell.name("train"));
    if (options.ignoreIndex)
      return fail(spell.name("ignore-index") + " applies only with " +
                  spell.name("gradients") + " or " + spell.name("train"));
  }
  for (auto [flag, value] :
       {std::pair{"recompute", options.recompute},
        std::pair{"recompute-layers", options.recomputeLayers}})
    if (!options.train && value.value_or(false))
      return fail(spell.name(flag) + " applies only with " +
                  spell.name("train") +
                  ": it recomputes activations for a training step's "
                  "backward");
  if (options.recomputeLayers.value_or(false) && options.recompute)
    return fail(spell.name("recompute-layers") + " and " +
                spell.name("recompute") +
                " exclude each other: the first recomputes every segment, "
                "a layer from its input alone");
  if (options.gradReduction && *options.gradReduction != "overlap" &&
      *options.gradReduction != "update")
    return fail(spell.withValue("grad-reduction", *options.gradReduction) +
                ": the gradient sums are reduced over the replicas with "
                "'overlap' (each as soon as the backward has made it) or "
                "'update' (all in the update)");
  if (options.gradReduction == "overlap" && options.zero.value_or(0) > 0)
    return fail(spell.withValue("grad-reduction", "overlap") + " with " +
                spell.withValue("zero", std::to_string(*options.zero)) +
                ": ZeRO reduce-scatters the gradient sums instead (stage 2 "
                "already in the backward)");
  if (options.gradBucketMb) {
    std::string flag =
        spell.given("grad-bucket-mb", number(*options.gradBucketMb));
    if (!(*options.gradBucketMb >= 0) || *options.gradBucketMb > 1024 * 1024)
      return fail(flag + ": a bucket holds 0 (every gradient its own) to "
                         "1048576 MiB of gradient sums");
    if (options.gradReduction && *options.gradReduction != "overlap")
      return fail(flag + " applies only with " +
                  spell.given("grad-reduction", "overlap") +
                  ": buckets are the reductions that overlap the backward");
  }
  if (options.zero && (*options.zero < 0 || *options.zero > 2))
    return fail(spell.withValue("zero", std::to_string(*options.zero)) +
                ": the ZeRO stage is 0 (nothing sharded), 1 (the optimizer "
                "state sharded over the data-parallel replicas) or 2 (the "
                "gradient sums too)");
  if (llvm::Error error = validatePrecision(options, spell))
    return error;
  if (llvm::Error error = validateLossScaling(options, spell))
    return error;
  if (!options.train && anyOptimizerOption(options))
    return fail("the optimizer options (" + spell.name("optimizer") + ", " +
                spell.name("lr") + ", ...) apply only with " +
                spell.name("train"));
  if (!options.differentiates())
    return llvm::Error::success();
  if (llvm::Error error = validateLoss(
          options, spell, spell.name(options.train ? "train" : "gradients")))
    return error;
  if (options.train)
    return validateOptimizer(options, spell);
  return llvm::Error::success();
}
