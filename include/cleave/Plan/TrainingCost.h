//===- TrainingCost.h - the cost of a training step -------------*- C++ -*-===//
//
// What a training step adds to the forward pass the planner costs for
// inference, per device:
//
//   - time: a backward phase (each op's vector-Jacobian products, from its
//     forward work by the factors of `getBackwardFactors`), the forward
//     again before the backward of a segment that recomputes its
//     activations, and once per step an update phase: what the data-parallel
//     gradient reduction does not hide behind the last backward, the
//     optimizer's pass over its parameters, gradients and state, and under
//     ZeRO the all-gather of the updated weights;
//   - memory: besides the weights, their gradients and the optimizer's state
//     (fp32 master weights for half-precision weights, fp32 moments), divided
//     over the data-parallel group as the ZeRO stage says, and the
//     activations each microbatch keeps for its backward.
//
// The search (Planner.cpp) and the stage split (StagePartitioner.h) read the
// formulas from here; docs/plan-format.md states them.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_PLAN_TRAININGCOST_H
#define CLEAVE_PLAN_TRAININGCOST_H

#include "cleave/Analysis/Cost/CostModel.h"

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>

namespace cleave {

//===----------------------------------------------------------------------===//
// Options
//===----------------------------------------------------------------------===//

/// The optimizer a step updates the weights with.
enum class Optimizer { SGD, Momentum, Adam, AdamW };

/// `sgd`, `momentum`, `adam`, `adamw`.
llvm::StringRef stringifyOptimizer(Optimizer optimizer);

/// How far ZeRO (Rajbhandari et al., 2020) shards the training state over
/// the data-parallel group.
enum class ZeroStage {
  /// Every replica holds all of it; gradients are all-reduced.
  None,
  /// Stage 1: the optimizer state (with the master weights) is sharded;
  /// gradients are reduce-scattered and the updated weights all-gathered.
  OptimizerState,
  /// Stage 2: the gradients are sharded too.
  Gradients,
};

/// `0`, `1`, `2`.
llvm::StringRef stringifyZeroStage(ZeroStage stage);

/// Which segments drop the activations their backward needs and compute
/// them again just before it.
enum class RecomputePolicy {
  /// None: every segment keeps what its backward reads.
  None,
  /// Every segment keeps only its outputs (the next segment's inputs).
  Segments,
  /// Every segment recomputes, and a segment of a class that is always
  /// followed by another (a transformer layer's attention, followed by its
  /// MLP) does not keep its outputs either: the next segment's backward
  /// recomputes them, so each layer keeps only its input.
  Layers,
};

/// `none`, `segments`, `layers`.
llvm::StringRef stringifyRecomputePolicy(RecomputePolicy policy);

/// `fp32`, `bf16`, `fp16`: the spellings of `--precision` for `F32`, `BF16`,
/// `F16`.
llvm::StringRef stringifyTrainingPrecision(Precision precision);

/// What `cleave plan --train` is told about the step. Unset choices are
/// searched.
struct TrainingPlanOptions {
  /// Plan a training step instead of inference.
  bool enabled = false;
  Optimizer optimizer = Optimizer::AdamW;
  std::optional<ZeroStage> zero;
  /// Unset: each segment recomputes or not, whichever the plan needs.
  std::optional<RecomputePolicy> recompute;
  /// Whether an unpinned ZeRO stage shards the state only where the whole
  /// state does not fit (a compile's default), rather than wherever it is
  /// predicted faster.
  bool zeroOnlyToFit = false;
  /// A regular expression of the initializers the step does not train
  /// (`cleave compile --freeze`): they take no gradients, no optimizer state
  /// and no gradient reductions. Empty: every float weight is trained.
  std::string freeze;
};

//===----------------------------------------------------------------------===//
// Time
//===----------------------------------------------------------------------===//

/// The backward of an op relative to its forward.
struct BackwardFactors {
  double flops = 0;
  double bytes = 0;
};

/// An op on matrix units (a matrix product, a convolution) computes two
/// products of its forward's size, the gradients of its two operands: twice
/// the FLOPs and the bytes. Any other op reads the gradient of its result
/// and the values it saved and writes the gradients of its operands: about
/// twice the forward's memory traffic over about as much arithmetic.
BackwardFactors getBackwardFactors(bool usesMatrixUnits);

/// The collective of the backward pass that answers a forward one over the
/// tensor-parallel group (the gradient of an all-reduce is an all-reduce,
/// of an all-gather a reduce-scatter, and the other way round), with the
/// same bytes.
CollectiveKind getConjugateCollective(CollectiveKind kind);

/// A data-parallel group: `size` replicas of one device, `perNode` of them
/// on each node it spans.
struct DataParallelGroup {
  int64_t size = 1;
  int64_t perNode = 1;
};

/// The reduction of a device's gradients over its data-parallel group, in
/// buckets of `kGradientBucketBytes` that start as the last microbatch's
/// backward produces them.
struct GradientReduction {
  int64_t buckets = 0;
  /// Seconds each bucket's collective takes.
  double bucketTime = 0;
  /// All buckets, one after another.
  double totalTime = 0;
  /// What outlasts the backward: with `b` buckets of `t` seconds ready at
  /// even intervals over a backward of `T` seconds, the last ends `max(t,
  /// b t - T (b - 1) / b)` after the backward does.
  double exposedTime = 0;
};

/// Gradient buckets (as PyTorch DDP's default 25 MiB).
inline constexpr int64_t kGradientBucketBytes = 25 << 20;

/// The reduction of `gradientBytes` over `group` overlapped with a backward
/// of `backwardTime`: all-reduce under ZeRO 0, reduce-scatter above.
GradientReduction reduceGradients(int64_t gradientBytes, double backwardTime,
                                  ZeroStage zero,
                                  const DataParallelGroup &group,
                                  const TargetDescription &target);

//===----------------------------------------------------------------------===//
// Parameters and memory
//===----------------------------------------------------------------------===//

/// The trainable weights a device holds (per device: split weights count
/// their shard).
struct TrainableParameters {
  int64_t elements = 0;
  /// As held (in the compute precision): the gradients take as many.
  int64_t bytes = 0;
  /// fp32 master copies of the weights held in a half precision.
  int64_t masterBytes = 0;

  TrainableParameters &operator+=(const TrainableParameters &other) {
    elements += other.elements;
    bytes += other.bytes;
    masterBytes += other.masterBytes;
    return *this;
  }
};

/// What a device's trainable parameters take besides the weights.
struct TrainingStateBytes {
  int64_t gradients = 0;
  /// The optimizer's moments and the master weights.
  int64_t optimizerState = 0;
};

/// The time the update phase takes on one device, per step.
struct UpdateCost {
  /// The gradient reduction that the last backward does not hide.
  double exposedReduction = 0;
  /// The optimizer's pass over its share of the parameters.
  double optimizer = 0;
  /// Under ZeRO: the all-gather of the updated weights.
  double weightGather = 0;

  double total() const { return exposedReduction + optimizer + weightGather; }
};

/// The training step's cost model for one data-parallel setting.
class TrainingStepCost {
public:
  TrainingStepCost(const TargetDescription &target, Optimizer optimizer,
                   ZeroStage zero, DataParallelGroup group)
      : target(&target), optimizer(optimizer), zero(zero), group(group) {}

  ZeroStage getZeroStage() const { return zero; }
  Optimizer getOptimizer() const { return optimizer; }
  const DataParallelGroup &getGroup() const { return group; }

  /// Gradients (in the weights' precision) and optimizer state (fp32
  /// moments: SGD none, momentum one, Adam and AdamW two; plus the master
  /// weights), each divided over the data-parallel group from the ZeRO
  /// stage that shards it.
  TrainingStateBytes getStateBytes(const TrainableParameters &parameters) const;

  /// The update phase of a device holding `parameters`, whose last backward
  /// takes `backwardTime`.
  UpdateCost getUpdateCost(const TrainableParameters &parameters,
                           double backwardTime) const;

  /// The buffers the gradient reduction stages through: two buckets (one
  /// reducing while the next fills), no more than the gradients; none
  /// without data parallelism.
  int64_t getCommunicationBytes(const TrainableParameters &parameters) const;

  /// The optimizer's arithmetic per parameter (SGD 2, momentum 4, Adam 10,
  /// AdamW 12); its pass is memory-bound on any device.
  static double getOptimizerFlopsPerElement(Optimizer optimizer);
  /// fp32 moments per parameter: 0, 1 or 2.
  static int64_t getMomentsPerElement(Optimizer optimizer);

private:
  /// The share of the state a device keeps: 1 / dp from `from` on.
  int64_t shard(int64_t bytes, ZeroStage from) const;

  const TargetDescription *target;
  Optimizer optimizer;
  ZeroStage zero;
  DataParallelGroup group;
};

} // namespace cleave

#endif // CLEAVE_PLAN_TRAININGCOST_H
