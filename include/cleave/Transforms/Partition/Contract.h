//===- Contract.h - the plan attributes the partitioner reads ---*- C++ -*-===//
//
// The planner records its decisions as attributes on the IR (the cleave
// dialect's, cleave/Dialect/Cleave/IR/CleaveAttributes.h); the partitioner
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

#include "cleave/Dialect/Cleave/IR/CleaveAttributes.h"
#include "cleave/Plan/PipelineSchedule.h"
#include "cleave/rt/Mesh.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <cstdint>
#include <optional>

namespace cleave {

/// The name of the tensor-parallel mesh axis, and of its grid.
inline constexpr llvm::StringLiteral kTpAxisName = "tp";
/// The grid axis that cuts the batch into the blocks of the data-parallel
/// replicas and their microbatches (dp x microbatches blocks); present only
/// when there is more than one block. No data crosses it.
inline constexpr llvm::StringLiteral kBatchAxisName = "batch";

/// The module-level part of a plan.
struct PlanContract {
  int64_t pp = 1;
  int64_t tp = 1;
  int64_t dp = 1;
  int64_t microbatches = 1;
  ScheduleChoice schedule;

  rt::MeshShape getMesh() const { return rt::MeshShape{pp, dp, tp}; }
  /// Model chunks per device (above 1 only for the interleaved schedule).
  int64_t getNumChunks() const { return schedule.virtualStages; }
  /// Pipeline stages times chunks: the stage functions of the partition.
  int64_t getNumVirtualStages() const { return pp * getNumChunks(); }
  /// The order of an inference step's microbatches on each pipeline stage;
  /// with `training`, of a training step's phases (forward and backward
  /// per microbatch, then the update).
  PipelineSchedule getSchedule(bool training = false) const;
  /// The size of mesh axis `axis` ("pp", "tp" or "dp"), if it is one.
  std::optional<int64_t> axisSize(llvm::StringRef axis) const;
};

/// Reads `cleave.mesh`, `cleave.microbatches` and `cleave.schedule` from
/// `module`. The first two are required; every size must be positive; the
/// schedule must accept the microbatch count (the interleaved schedule's
/// model chunks are virtual stages: `cleave.stage` of an op ranges over
/// pp x chunks, and virtual stage v runs on the devices of stage v mod pp).
/// Emits an error on the module and fails otherwise.
mlir::FailureOr<PlanContract> readPlanContract(mlir::ModuleOp module);

/// The function `entry` of `module` that carries the plan, with one block;
/// emits an error and fails when it is missing, external or has several.
mlir::FailureOr<mlir::func::FuncOp> getPlannedFunction(mlir::ModuleOp module,
                                                       llvm::StringRef entry);

} // namespace cleave

#endif // CLEAVE_TRANSFORMS_PARTITION_CONTRACT_H
