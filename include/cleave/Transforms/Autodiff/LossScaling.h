//===- LossScaling.h - dynamic loss scaling of a step -----------*- C++ -*-===//
//
// A float16 training step multiplies its loss by a scale before the
// backward, so that small gradients do not vanish in float16, and divides
// the gradients by it before the update. The scale is persistent state: a
// step whose gradients overflowed (an inf or a NaN) is skipped and halves
// it; `growth interval` good steps in a row double it (PyTorch's
// GradScaler). `cleave-autodiff` seeds the backward with the scale;
// `cleave-optimizer-update` unscales, skips and updates the scale.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_TRANSFORMS_AUTODIFF_LOSSSCALING_H
#define CLEAVE_TRANSFORMS_AUTODIFF_LOSSSCALING_H

#include "cleave/Transforms/Autodiff/GradientInterface.h"

#include "llvm/ADT/StringRef.h"

namespace cleave {

/// The persistent states of loss scaling, float32 scalars that start as
/// zeros: the scale (0 until the first step writes it: the initial scale),
/// the good steps since the scale last changed, and the skipped steps.
inline constexpr llvm::StringLiteral kLossScaleState = "loss_scale";
inline constexpr llvm::StringLiteral kLossScaleGoodStepsState =
    "loss_scale.good_steps";
inline constexpr llvm::StringLiteral kLossScaleSkippedStepsState =
    "loss_scale.skipped_steps";

/// The loss scale of this step: the state's, or `initial` before the first
/// step has written it.
mlir::Value buildLossScale(GradientBuilder &b, double initial);

/// A float32 scalar that is 0 when every element of `gradients` is finite
/// and NaN otherwise: the sum of the elements times zero (inf * 0 is NaN),
/// which stays NaN when it is summed over replicas or stages, and which,
/// added to an update's gradient scale, makes the update skip the step.
mlir::Value buildOverflowFlag(GradientBuilder &b,
                              llvm::ArrayRef<mlir::Value> gradients);

/// After the update: writes the next step's scale, `scale` halved on an
/// `overflow` (buildOverflowFlag) or doubled after `growthInterval` good
/// steps in a row, and counts the good and the skipped steps.
void buildLossScaleUpdate(GradientBuilder &b, mlir::Value scale,
                          mlir::Value overflow, int64_t growthInterval);

} // namespace cleave

#endif // CLEAVE_TRANSFORMS_AUTODIFF_LOSSSCALING_H
