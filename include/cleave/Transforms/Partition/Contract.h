//===- Contract.h - the plan attributes the partitioner reads ---*- C++ -*-===//
//
// The planner records its decisions as attributes on the IR; the partitioner
// applies them. docs/partitioning.md is the reference:
//
//   module attributes {cleave.mesh = {pp = P : i64, tp = T : i64,
//                                     dp = D : i64},
//                      cleave.microbatches = M : i64,
//                      cleave.schedule = "gpipe"}   (optional, gpipe)
//   on every op of @main:  cleave.stage = S : i64     (contiguous ranges)
//   optionally:            cleave.tp_loop = L : i64   (ShardingInterface loop
//                                                      L split over tp)
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_TRANSFORMS_PARTITION_CONTRACT_H
#define CLEAVE_TRANSFORMS_PARTITION_CONTRACT_H

#include "cleave/Plan/PipelineSchedule.h"
#include "cleave/rt/Mesh.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <cstdint>
#include <optional>

namespace cleave {

/// Module attribute: the device mesh, a dictionary `{pp, tp, dp}` of i64.
inline constexpr llvm::StringLiteral kMeshAttrName = "cleave.mesh";
/// Module attribute: microbatches per step (i64).
inline constexpr llvm::StringLiteral kMicrobatchesAttrName =
    "cleave.microbatches";
/// Module attribute (optional): the pipeline schedule, as `--schedule`
/// spells it (`gpipe`, `1f1b`, `interleaved:V`); absent means `gpipe`.
inline constexpr llvm::StringLiteral kScheduleAttrName = "cleave.schedule";
/// Module attribute (optional): the target the plan was made for, a preset
/// name or a path.
inline constexpr llvm::StringLiteral kTargetAttrName = "cleave.target";
/// Op attribute: the pipeline stage of the op (i64). On a stage function:
/// the stage it runs.
inline constexpr llvm::StringLiteral kStageAttrName = "cleave.stage";
/// Op attribute (optional): the loop of the op's `ShardingInterface` that is
/// split over the tp axis (i64).
inline constexpr llvm::StringLiteral kTpLoopAttrName = "cleave.tp_loop";
/// Stage function argument attribute: the index of the entry argument it is.
inline constexpr llvm::StringLiteral kInputAttrName = "cleave.input";
/// Stage function result attribute: the index of the entry result it is.
inline constexpr llvm::StringLiteral kOutputAttrName = "cleave.output";
/// Grid attribute: the mesh axis name of each grid axis (array of strings).
inline constexpr llvm::StringLiteral kGridAxesAttrName = "cleave.axes";
/// The name of the tensor-parallel mesh axis, and of its grid.
inline constexpr llvm::StringLiteral kTpAxisName = "tp";
/// The grid axis that cuts the batch into the blocks of the data-parallel
/// replicas and their microbatches (dp x microbatches blocks); present only
/// when there is more than one block. No data crosses it.
inline constexpr llvm::StringLiteral kBatchAxisName = "batch";
/// Entry function argument and result attribute: the dimension that holds
/// the batch, when the batch is cut into blocks (i64).
inline constexpr llvm::StringLiteral kBatchDimAttrName = "cleave.batch_dim";

/// The module-level part of a plan.
struct PlanContract {
  int64_t pp = 1;
  int64_t tp = 1;
  int64_t dp = 1;
  int64_t microbatches = 1;
  ScheduleChoice schedule;

  rt::MeshShape getMesh() const { return rt::MeshShape{pp, dp, tp}; }
  /// The order of an inference step's microbatches on each pipeline stage.
  PipelineSchedule getSchedule() const;
  /// The size of mesh axis `axis` ("pp", "tp" or "dp"), if it is one.
  std::optional<int64_t> axisSize(llvm::StringRef axis) const;
};

/// Reads `cleave.mesh`, `cleave.microbatches` and `cleave.schedule` from
/// `module`. The first two are required; every size must be positive; the
/// schedule must be one the partitioner compiles (one model chunk per
/// device) and accept the microbatch count. Emits an error on the module and
/// fails otherwise.
mlir::FailureOr<PlanContract> readPlanContract(mlir::ModuleOp module);

/// The `cleave.stage` of `op`, if it has one.
std::optional<int64_t> getStage(mlir::Operation *op);

} // namespace cleave

#endif // CLEAVE_TRANSFORMS_PARTITION_CONTRACT_H
