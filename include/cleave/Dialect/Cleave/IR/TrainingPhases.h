//===- TrainingPhases.h - the phases of a training step ---------*- C++ -*-===//
//
// A training step (a function that accumulates its loss and gradients with
// `cleave.accumulate`) runs in three phases: the forward and the backward
// once per microbatch, the update once per step. The phases follow from the
// dataflow, with no marks in the IR; the recomputation pass and the device
// program's lowering both read them from here.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_DIALECT_CLEAVE_IR_TRAININGPHASES_H
#define CLEAVE_DIALECT_CLEAVE_IR_TRAININGPHASES_H

#include "mlir/IR/Block.h"
#include "llvm/ADT/DenseMap.h"

namespace cleave {

enum class StepPhase { Forward, Backward, Update };

/// The phase of every op of `block` but its terminator: the update is what
/// reads an accumulated sum (or all-reduces constants: a pipeline stage
/// without parameters in the update's all-reduces along pp) and what only
/// that reads; the forward is the
/// loss's accumulation (`cleave.accumulate {loss}`), on a pipeline stage's
/// function the sends to later stages and the receives from earlier ones
/// (activations; gradients flow the other way; a transfer's stage is its
/// own `cleave.stage`, else its function's), and what those depend on;
/// the backward is the rest (the gradients, their accumulations, running
/// statistics). Empty when the block accumulates nothing (it is not a
/// training step), unless `trainingStep` says it is part of one anyway (a
/// pipeline stage without parameters or loss, between stages that have
/// them).
llvm::DenseMap<mlir::Operation *, StepPhase>
classifyStepPhases(mlir::Block &block, bool trainingStep = false);

/// Whether `module` holds a training step: some function of it accumulates
/// (`cleave.accumulate`).
bool isTrainingStepModule(mlir::Operation *module);

} // namespace cleave

#endif // CLEAVE_DIALECT_CLEAVE_IR_TRAININGPHASES_H
