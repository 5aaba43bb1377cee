//===- TrainingOptions.cpp - check the training options ---------*- C++ -*-===//

#include "cleave/Transforms/Autodiff/TrainingOptions.h"

#include "llvm/ADT/Twine.h"

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

} // namespace

llvm::Error cleave::validateTrainingOptions(const TrainingOptions &options,
                                            llvm::StringRef prefix) {
  OptionSpeller spell(prefix);
  if (!options.gradients) {
    for (auto [flag, value] : {std::pair{"loss", &options.loss},
                               {"logits", &options.logits},
                               {"labels", &options.labels},
                               {"freeze", &options.freeze}})
      if (!value->empty())
        return fail(spell.name(flag) + " applies only with " +
                    spell.name("gradients"));
    if (options.ignoreIndex)
      return fail(spell.name("ignore-index") + " applies only with " +
                  spell.name("gradients"));
    return llvm::Error::success();
  }
  if (options.loss.empty())
    return fail(spell.name("gradients") + " needs " +
                spell.withValue("loss", "NAME") +
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
