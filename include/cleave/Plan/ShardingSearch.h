//===- ShardingSearch.h - tensor-parallel layout of one segment -*- C++ -*-===//
//
// Within a segment every op either runs replicated on each device of the
// tensor-parallel group or splits one of its shardable loops over the group
// (the loops and the layouts they imply come from the partitioner's sharding
// rules, cleave/Transforms/Partition/Sharding.h). Between a producer and a
// consumer that disagree, the value is resharded:
//
//   partial  -> replicated   all-reduce
//   split    -> replicated   all-gather
//   partial  -> split        reduce-scatter (with sequence parallelism;
//                            otherwise all-reduce, then a local slice)
//   split    -> other split  all-gather, then a local slice
//   replicated -> split      free (each device keeps its slice)
//   replicated -> partial    free (one device contributes the value)
//
// Split work costs 1/tp of the op's roofline time. In a training step each
// op also runs its backward (TrainingCost.h's factors) and each collective
// is answered by its conjugate in the backward; a trainable parameter held
// whole but read by an op that splits a loop (a norm's scale under sequence
// parallelism) has its gradient all-reduced over the group. The search
// weighs both passes.
//
// Tensor parallelism, as Megatron-LM defines it, splits the model's feature
// dimensions between contractions and keeps the residual stream whole on
// every device. So unless sequence parallelism is asked for, no strategy
// splits a token dimension (batch, sequence: left to data parallelism and
// microbatching), the ops that compute a segment's outputs from its last
// contractions (the chain of ops without reduction loops or matrix units
// that ends in an output: bias and residual adds) run replicated, and
// segment inputs arrive replicated and outputs leave replicated.
//
// Sequence parallelism (Megatron-LM's `--sequence-parallel`) holds the
// activations between segments split along their sequence dimension
// (`SegmentedModel::getSequenceDim`): segment inputs arrive split and outputs
// leave split, so that the norms, residual adds and pipeline sends between
// two layers' contractions each handle 1/tp of the tokens, and a layer's
// all-reduces can become a reduce-scatter and an all-gather. Either way
// every segment agrees with its neighbours on the layout of what they pass,
// so segments compose without knowing each other.
//
// `searchSegmentSharding` finds the assignment of minimal time (plus a
// weight-memory penalty) by dynamic programming over the ops in order, with
// the layouts of the live activations as the state: it is exact over that
// space unless the state bound is hit.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_PLAN_SHARDINGSEARCH_H
#define CLEAVE_PLAN_SHARDINGSEARCH_H

#include "cleave/Analysis/Cost/CostModel.h"
#include "cleave/Plan/Segmentation.h"
#include "cleave/Plan/TrainingCost.h"
#include "cleave/Transforms/Partition/Sharding.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Regex.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace cleave {

//===----------------------------------------------------------------------===//
// Resharding
//===----------------------------------------------------------------------===//

/// What it takes to make a value laid out as `from` available as `to`.
struct ReshardStep {
  /// The collective that moves the data; none when a local slice (or
  /// nothing) suffices.
  std::optional<CollectiveKind> collective;
  /// The layout the value is held in afterwards (a value that becomes
  /// replicated stays replicated: every later layout is a free slice of it).
  ValueSharding result;
};

/// The reshard from `from` to `to`. Reduce-scatter is used for partial to
/// split only with `allowReduceScatter`.
ReshardStep getReshardStep(const ValueSharding &from, const ValueSharding &to,
                           bool allowReduceScatter);

//===----------------------------------------------------------------------===//
// A segment as the search sees it
//===----------------------------------------------------------------------===//

/// An activation of a segment.
struct SegmentValue {
  mlir::Value value;
  llvm::SmallVector<int64_t> shape;
  /// Bytes of the whole tensor at the model's batch size.
  int64_t bytes = 0;
  /// The dimension holding the batch, or -1.
  int64_t batchDim = -1;
  /// The value whose buffer it shares (itself unless it is a view).
  int64_t bufferRoot = 0;
  /// The dimension sequence parallelism splits it along when it is an
  /// input or output of the segment (`SegmentedModel::getSequenceDim`), or
  /// -1.
  int64_t sequenceDim = -1;
  /// Step (op offset in the segment) that defines it; -1 for inputs.
  int64_t definition = -1;
  /// Last step that reads it; `numOps` for outputs.
  int64_t lastUse = -1;
  bool isOutput = false;
};

/// A parameter (weight or constant) read by a segment.
struct SegmentParameter {
  mlir::Value value;
  llvm::SmallVector<int64_t> shape;
  /// As held (`getHeldTensorBytes`).
  int64_t bytes = 0;
  int64_t elements = 0;
  /// Whether a training step updates it: a floating-point weight (a
  /// constant is not trained) that is not frozen.
  bool trainable = false;
};

/// One operand of a segment op: an activation, a parameter, or neither (a
/// non-tensor value, always replicated).
struct SegmentOperand {
  enum class Kind { Activation, Parameter, Other };
  Kind kind = Kind::Other;
  int64_t index = -1;
};

/// One way to run an op: replicated, or one loop split.
struct ShardingStrategy {
  /// The loop split over the group, as numbered by the op's
  /// `ShardingInterface`; -1 for replicated.
  int64_t loop = -1;
  llvm::SmallVector<ValueSharding> operands;
  llvm::SmallVector<ValueSharding> results;
  /// Whether it splits a token dimension (batch, sequence) of an activation:
  /// sequence parallelism rather than tensor parallelism.
  bool splitsTokenDim = false;
};

/// A segment op with its work and its strategies.
struct SegmentOp {
  mlir::Operation *op = nullptr;
  /// Work at the model's batch size.
  OpCost cost;
  /// Whether `cost.bytesRead` is the plain sum of the distinct operands, so
  /// that a shard reads exactly its operands' shares.
  bool readsWholeOperands = true;
  /// Whether the work grows with the batch.
  bool scalesWithBatch = false;
  /// Whether it runs on matrix units (`CostInterface::usesMatrixUnits`).
  bool usesMatrixUnits = false;
  /// Whether it computes the residual stream: it has no reduction loop and
  /// no matrix units, and its result reaches a segment output through such
  /// ops only.
  bool onResidualStream = false;
  llvm::SmallVector<SegmentOperand> operands;
  /// The activation index of each result.
  llvm::SmallVector<int64_t> results;
  /// Per operand: whether it is fused into this op (`fusePointwise`): not
  /// read from memory.
  llvm::SmallVector<bool> fusedOperands;
  /// Per result: whether its only reader fuses it: not written to memory.
  llvm::SmallVector<bool> fusedResults;
  /// Strategy 0 is replicated; the others split one loop each.
  llvm::SmallVector<ShardingStrategy> strategies;
};

/// Everything the search needs about a segment, independent of the group
/// size and the microbatch.
struct SegmentShardingModel {
  int64_t numOps() const { return static_cast<int64_t>(ops.size()); }

  std::vector<SegmentOp> ops;
  std::vector<SegmentValue> values;
  std::vector<SegmentParameter> parameters;
};

/// Builds the search model of segment `segment` of `model`, for a
/// `training` step or inference (`pricesPointwiseFused`). A float weight
/// is trainable unless its name matches `frozen`. Fails, with an error on
/// the op, for an op the cost model cannot size.
mlir::FailureOr<SegmentShardingModel> buildSegmentShardingModel(
    const SegmentedModel &model, int64_t segment,
    const TargetDescription &target, const CostOptions &costOptions,
    const llvm::Regex *frozen = nullptr, bool training = false);

//===----------------------------------------------------------------------===//
// Costing and searching
//===----------------------------------------------------------------------===//

/// The tensor-parallel setting a segment is costed in.
struct ShardingContext {
  const TargetDescription *target = nullptr;
  /// Devices of the group.
  int64_t tp = 1;
  /// Whether the group spans nodes (its collectives then run on the
  /// inter-node link).
  bool crossesNodes = false;
  /// Microbatch size over the model's batch size.
  double batchScale = 1;
  /// Sequence parallelism: strategies may split token dimensions, partial
  /// sums may be reduce-scattered, and the segment's inputs and outputs are
  /// split along their sequence dimension (`getBoundaryLayout`).
  bool sequenceParallel = false;
  /// Seconds per byte of per-device weight memory in the objective.
  double weightBytePenalty = 0;
  /// Seconds each collective adds to the objective: between layouts of
  /// equal time, the one with fewer collectives (fewer launches and
  /// synchronisations, which the α-β model does not price) wins.
  double collectivePenalty = 0;
  /// A training step: each op also runs its backward (TrainingCost.h's
  /// factors) and each collective its conjugate, and the search weighs
  /// both passes.
  bool training = false;
};

/// A reshard the assignment needs, per microbatch.
struct SegmentCollective {
  CollectiveKind kind = CollectiveKind::AllReduce;
  /// The op that needs it (`numOps` for the segment's outputs).
  int64_t step = 0;
  /// The activation it moves.
  int64_t value = 0;
  /// Bytes of the whole tensor at the microbatch.
  int64_t bytes = 0;
  double time = 0;
};

/// The predicted cost of a segment under one assignment, per microbatch and
/// device.
struct SegmentCost {
  /// The forward pass.
  double computeTime = 0;
  double collectiveTime = 0;
  /// The backward pass, in a training context (0 otherwise).
  double backwardComputeTime = 0;
  double backwardCollectiveTime = 0;
  /// What the forward's and the backward's ops take longer with their data
  /// out of the caches (`Roofline::missTime`); not in the times above. The
  /// stage that runs the segment adds the share its footprint makes miss.
  double missTime = 0;
  double backwardMissTime = 0;
  /// Weight bytes each device holds (a parameter read in two layouts is held
  /// twice).
  int64_t weightBytes = 0;
  /// Most activation bytes live at once while the segment runs.
  int64_t peakActivationBytes = 0;
  /// Bytes of the largest collective message.
  int64_t largestMessageBytes = 0;
  /// The trainable weights it holds (as `weightBytes` counts them).
  TrainableParameters trainable;
  /// Bytes of the buffers its ops define (what its backward reads), and of
  /// those among them that are its outputs (what it keeps when it
  /// recomputes the rest).
  int64_t definedActivationBytes = 0;
  int64_t outputActivationBytes = 0;
  /// `searchedTime() + weightBytePenalty * weightBytes + collectivePenalty *
  /// collectives.size()`.
  double objective = 0;
  llvm::SmallVector<double> opTimes;
  /// Per op, its forward's `missTime`.
  llvm::SmallVector<double> opMissTimes;
  llvm::SmallVector<SegmentCollective> collectives;
  /// In a training context, the all-reduces of the backward that no
  /// forward collective answers: a trainable parameter held whole and read
  /// by an op that splits a loop gets from each device the gradient of that
  /// device's part of the loop (`value` is the index of the parameter
  /// among the op's operands, `bytes` its bytes). Counted in
  /// `backwardCollectiveTime`.
  llvm::SmallVector<SegmentCollective> gradientReductions;

  /// The forward pass.
  double time() const { return computeTime + collectiveTime; }
  double backwardTime() const {
    return backwardComputeTime + backwardCollectiveTime;
  }
  /// What the search minimises: both passes (the backward is 0 outside
  /// training).
  double searchedTime() const { return time() + backwardTime(); }
};

/// The strategy index of every op of a segment.
using SegmentAssignment = llvm::SmallVector<int64_t>;

/// Whether strategy `strategy` of op `op` can run in `context`: every split
/// dimension (at the microbatch) divides by the group size, and unless the
/// context allows sequence parallelism it splits no token dimension and the
/// op is not on the residual stream.
bool isStrategyValid(const SegmentShardingModel &model, int64_t op,
                     int64_t strategy, const ShardingContext &context);

/// The layout in which a value of `shape`, an input or output of a segment
/// with sequence dimension `sequenceDim` (-1: none), passes between
/// segments: split along its sequence dimension under sequence
/// parallelism when the group divides it, replicated otherwise.
ValueSharding getBoundaryLayout(llvm::ArrayRef<int64_t> shape,
                                int64_t sequenceDim,
                                const ShardingContext &context);
inline ValueSharding getBoundaryLayout(const SegmentValue &value,
                                       const ShardingContext &context) {
  return getBoundaryLayout(value.shape, value.sequenceDim, context);
}

/// The cost of `assignment`; fails when a strategy is invalid in `context`.
mlir::FailureOr<SegmentCost>
evaluateSegmentSharding(const SegmentShardingModel &model,
                        const SegmentAssignment &assignment,
                        const ShardingContext &context);

/// The cheapest assignment and its cost.
struct SegmentSharding {
  SegmentAssignment assignment;
  SegmentCost cost;
  /// False when the state bound cut the search.
  bool exact = true;
};

/// The assignment of least objective, by dynamic programming over the ops.
SegmentSharding searchSegmentSharding(const SegmentShardingModel &model,
                                      const ShardingContext &context,
                                      int64_t maxStates = 1 << 14);

/// The trade-off between time and weight memory: the assignments that no
/// other beats in both (at most `maxPoints` of them, spread over the
/// range), fastest first. The same dynamic program, keeping per state every
/// (time, weight bytes) pair that no other dominates (at most 32; beyond
/// that the result is marked inexact).
std::vector<SegmentSharding>
searchSegmentShardingFront(const SegmentShardingModel &model,
                           const ShardingContext &context,
                           int64_t maxStates = 1 << 14, int64_t maxPoints = 12);

} // namespace cleave

#endif // CLEAVE_PLAN_SHARDINGSEARCH_H
