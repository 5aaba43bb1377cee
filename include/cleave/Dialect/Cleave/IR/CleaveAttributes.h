//===- CleaveAttributes.h - discardable attributes --------------*- C++ -*-===//
//
// Typed access to the attributes through which the importer, the planner,
// the partitioner and codegen hand the plan on (declared in
// CleaveDialect.td, whose description lists them; the dialect verifies
// their form, so a reader here sees well-formed values or none). Code
// outside the dialect reads and writes them only through these functions;
// diagnostics spell a name with
// `CleaveDialect::<Name>AttrHelper::getNameStr()`.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_DIALECT_CLEAVE_IR_CLEAVEATTRIBUTES_H
#define CLEAVE_DIALECT_CLEAVE_IR_CLEAVEATTRIBUTES_H

#include "cleave/Dialect/Cleave/IR/CleaveDialect.h"
#include "cleave/rt/Mesh.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

#include <cstdint>
#include <optional>
#include <utility>

namespace cleave {

//===----------------------------------------------------------------------===//
// Module: the plan and the model's provenance
//===----------------------------------------------------------------------===//

/// `cleave.mesh`: the device mesh of the plan, if the module has one.
std::optional<rt::MeshShape> getMesh(mlir::Operation *module);
void setMesh(mlir::Operation *module, const rt::MeshShape &mesh);

/// `cleave.microbatches`: microbatches per step.
std::optional<int64_t> getMicrobatches(mlir::Operation *module);
void setMicrobatches(mlir::Operation *module, int64_t microbatches);

/// `cleave.zero`: the ZeRO stage a training step's plan chose (0 to 2).
std::optional<int64_t> getZeroStage(mlir::Operation *module);
void setZeroStage(mlir::Operation *module, int64_t stage);

/// `cleave.schedule`: the pipeline schedule as `--schedule` spells it.
mlir::StringAttr getSchedule(mlir::Operation *module);
void setSchedule(mlir::Operation *module, llvm::StringRef schedule);

/// `cleave.target`: the target the plan was made for.
mlir::StringAttr getTarget(mlir::Operation *module);

/// `cleave.onnx_model`: the path of the imported model.
mlir::StringAttr getOnnxModel(mlir::Operation *module);
/// Records where the module was imported from: `cleave.onnx_model`,
/// `cleave.onnx_producer`, `cleave.onnx_opset`, `cleave.onnx_ir_version`.
void setOnnxProvenance(mlir::Operation *module, llvm::StringRef modelPath,
                       llvm::StringRef producer, int64_t opset,
                       int64_t irVersion);

//===----------------------------------------------------------------------===//
// Ops
//===----------------------------------------------------------------------===//

/// The ONNX node an op came from, as its location names it (through fused
/// and call-site locations); empty when it names none.
std::string getNodeName(mlir::Location loc);

/// `cleave.stage`: the pipeline stage of an op, or the stage a stage
/// function runs.
std::optional<int64_t> getStage(mlir::Operation *op);
void setStage(mlir::Operation *op, int64_t stage);
/// One past the highest `cleave.stage` of the ops nested in `root` (under
/// the interleaved schedule, the virtual stages); 0 when none has one.
int64_t getNumStagesWithin(mlir::Operation *root);
void removeStage(mlir::Operation *op);
/// Gives `stage` to the ops after `mark` in its block, up to the block's
/// terminator, that have none: the ops a pass just built there (a rule's
/// backward, a parameter's update) run where the op they serve runs.
/// Nothing when `stage` is unset (no pipeline plan).
void setStageOfOpsAfter(mlir::Operation *mark, std::optional<int64_t> stage);

/// `cleave.chunk`: the model chunk (of the interleaved schedule's device
/// function) an op belongs to; none means chunk 0.
std::optional<int64_t> getChunk(mlir::Operation *op);
void setChunk(mlir::Operation *op, int64_t chunk);

/// `cleave.tp_loop`: the loop of the op's `ShardingInterface` split over
/// tp. Setting `std::nullopt` removes it.
std::optional<int64_t> getTpLoop(mlir::Operation *op);
void setTpLoop(mlir::Operation *op, std::optional<int64_t> loop);

/// `cleave.batch_dims`: the (operand, result) dimensions through which a
/// reshape carries the batch. Setting `std::nullopt` removes it.
std::optional<std::pair<int64_t, int64_t>> getBatchDims(mlir::Operation *op);
void setBatchDims(mlir::Operation *op,
                  std::optional<std::pair<int64_t, int64_t>> dims);

/// `cleave.writable`: a parameter op (`cleave.weight`, ...) that an update
/// writes, so it lives in persistent memory. `cleave-optimizer-update` sets
/// it on the parameters it updates.
bool isWritable(mlir::Operation *op);
void setWritable(mlir::Operation *op);
/// `cleave.stash`: an op whose result a later entry reads, so it lives in a
/// stash region. A backward phase will set it; until then a test marks it
/// by hand.
bool isStashed(mlir::Operation *op);
/// `cleave.recompute`: a forward op of a segment the training plan chose to
/// recompute; `cleave-recompute from-plan` recomputes its result in the
/// backward.
bool isPlannedRecompute(mlir::Operation *op);
void setPlannedRecompute(mlir::Operation *op);
/// `cleave.recompute_joined`: beside `cleave.recompute`, an op of a
/// segment whose outputs the step does not stash either: the backward of
/// the next segment recomputes them from this segment's inputs, so that
/// the two segments recompute from one stash (a transformer layer's).
bool isRecomputeJoined(mlir::Operation *op);
void setRecomputeJoined(mlir::Operation *op);

/// `cleave.axes`: the mesh axis name of each axis of a `shard.grid`.
mlir::ArrayAttr getGridAxes(mlir::Operation *grid);
void setGridAxes(mlir::Operation *grid, llvm::ArrayRef<llvm::StringRef> axes);

//===----------------------------------------------------------------------===//
// Function arguments and results
//===----------------------------------------------------------------------===//

/// `cleave.name`: the name of the graph input or output.
mlir::StringAttr getArgName(mlir::FunctionOpInterface func, unsigned index);
mlir::StringAttr getResultName(mlir::FunctionOpInterface func, unsigned index);
void setArgName(mlir::FunctionOpInterface func, unsigned index,
                llvm::StringRef name);
void setResultName(mlir::FunctionOpInterface func, unsigned index,
                   llvm::StringRef name);
/// Names every argument (every result) at once: setting them one by one
/// rebuilds the function's attribute list each time, quadratic in a graph
/// of many inputs or outputs.
void setArgNames(mlir::FunctionOpInterface func,
                 llvm::ArrayRef<std::string> names);
void setResultNames(mlir::FunctionOpInterface func,
                    llvm::ArrayRef<std::string> names);

/// `cleave.input` / `cleave.output`: the entry argument or result that an
/// argument or result of a stage function is.
std::optional<int64_t> getInputIndex(mlir::FunctionOpInterface func,
                                     unsigned index);
std::optional<int64_t> getOutputIndex(mlir::FunctionOpInterface func,
                                      unsigned index);
void setInputIndex(mlir::FunctionOpInterface func, unsigned index,
                   int64_t input);
void setOutputIndex(mlir::FunctionOpInterface func, unsigned index,
                    int64_t output);

/// `cleave.batch_dim`: the dimension of an argument or result that holds
/// the batch when it is cut.
std::optional<int64_t> getArgBatchDim(mlir::FunctionOpInterface func,
                                      unsigned index);
std::optional<int64_t> getResultBatchDim(mlir::FunctionOpInterface func,
                                         unsigned index);
void setArgBatchDim(mlir::FunctionOpInterface func, unsigned index,
                    int64_t dim);
void setResultBatchDim(mlir::FunctionOpInterface func, unsigned index,
                       int64_t dim);

/// `cleave.gradient_of`: the parameter (weight name) whose gradient a result
/// is.
mlir::StringAttr getGradientOf(mlir::FunctionOpInterface func, unsigned index);
void setGradientOf(mlir::FunctionOpInterface func, unsigned index,
                   llvm::StringRef weight);

} // namespace cleave

#endif // CLEAVE_DIALECT_CLEAVE_IR_CLEAVEATTRIBUTES_H
