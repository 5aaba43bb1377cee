//===- Planner.h - the auto-parallel planner --------------------*- C++ -*-===//
//
// `planModel` searches every device mesh `pp × tp × dp` that uses all the
// devices (tensor parallelism inside a node unless pinned otherwise), every
// microbatch count that divides a replica's batch, the tensor-parallel layout
// of each distinct segment (ShardingSearch.h) and the stage split
// (StagePartitioner.h), and returns the best plan under the objective with
// the alternatives it weighed. With `PlanOptions::training` it plans a
// training step (TrainingCost.h), searching the ZeRO stage and the
// recomputation of each segment too. `annotateModule` writes the plan's
// contract for the partitioner onto the IR.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_PLAN_PLANNER_H
#define CLEAVE_PLAN_PLANNER_H

#include "cleave/Analysis/Cost/Target.h"
#include "cleave/Plan/Plan.h"

#include "mlir/IR/BuiltinOps.h"

namespace cleave {

/// Plans function `options.functionName` of `module` for `target`. Fails,
/// with an error on the function, when options contradict each other or the
/// model, when an op cannot be costed, and when no configuration fits in
/// memory (the error names the stage and ranks that overflow, by how many
/// bytes, and what would fit).
mlir::FailureOr<Plan> planModel(mlir::ModuleOp module,
                                const TargetDescription &target,
                                const PlanOptions &options);

/// Writes `plan` onto `module` for the partitioner: module attributes
/// `cleave.mesh = {pp, tp, dp}`, `cleave.microbatches` (i64) and
/// `cleave.schedule` (the schedule as `--schedule` spells it), and on
/// every op of the planned function but its terminator `cleave.stage` (i64)
/// and, when the op splits a loop over the tensor-parallel group,
/// `cleave.tp_loop` (i64, the loop number of its `ShardingInterface`).
/// Parameters (weights, constants) take the stage of their first user.
/// Fails when the function's ops are not those the plan was made for.
mlir::LogicalResult annotateModule(mlir::ModuleOp module, const Plan &plan);

/// Marks the ops of the segments that training plan `plan` recomputes
/// (`cleave.recompute`), and nothing else: a step that runs whole on each
/// device (one device, or data-parallel replicas) recomputes what the plan
/// chose. Fails when the function's ops are not those the plan was made
/// for.
mlir::LogicalResult annotateRecompute(mlir::ModuleOp module, const Plan &plan);

} // namespace cleave

#endif // CLEAVE_PLAN_PLANNER_H
