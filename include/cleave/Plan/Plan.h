//===- Plan.h - an auto-parallel plan and the options that shape it -*- C++
//-*-===//
//
// The planner decides how a model runs on a cluster: a device mesh of `pp`
// pipeline stages × `tp` tensor-parallel shards × `dp` data-parallel
// replicas, the number of microbatches a step is cut into, which contiguous
// range of the model each stage runs, and how every op of a stage is split
// over its tensor-parallel group. `Plan` is that decision together with the
// predictions that justify it; docs/plan-format.md describes its JSON form.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_PLAN_PLAN_H
#define CLEAVE_PLAN_PLAN_H

#include "cleave/Analysis/Cost/CostModel.h"
#include "cleave/Plan/PipelineSchedule.h"
#include "cleave/Plan/TrainingCost.h"
#include "cleave/rt/Mesh.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cleave {

class OptionBinder;
class ProgressReporter;

/// What the planner optimises.
enum class PlanObjective {
  /// Samples per second of a step that runs the global batch through the
  /// pipeline (the fill and drain bubble included).
  Throughput,
  /// Time one microbatch takes through every stage.
  Latency,
};

llvm::StringRef stringifyPlanObjective(PlanObjective objective);

/// Which of the plan options a front end offers: the planner weighs a model
/// under any global batch, but a compiled bundle computes the model's own.
enum class PlanOptionSet { Planning, Compiling };

/// What the user fixes and how the search is bounded. Unset mesh factors and
/// microbatch counts are searched.
///
/// The options a user sets are declared once, in `bindOptions`: `cleave plan`
/// and `cleave compile` offer them as `--flag`, `cleave-plan` and
/// `cleave-compile-pipeline` as `flag=`, and `validatePlanOptions` checks
/// them. A new option is a field here and one line there.
struct PlanOptions {
  /// Devices to plan for; 0 takes the target's device count.
  int64_t numDevices = 0;
  std::optional<int64_t> pipelineStages;
  std::optional<int64_t> tensorParallel;
  std::optional<int64_t> dataParallel;
  std::optional<int64_t> microbatches;
  /// Samples per step; unset, the batch dimension of the model's inputs
  /// times `modelBatchScale`.
  std::optional<int64_t> globalBatch;
  /// Not a user option: how many of the model's batches a step takes when
  /// `globalBatch` is unset (a training step's function computes one
  /// microbatch of one replica: microbatches x replicas).
  int64_t modelBatchScale = 1;
  /// Not a user option: every candidate's microbatch is the model's batch
  /// (a training step's function computes one microbatch), so the global
  /// batch fixes the microbatch count of each mesh.
  bool microbatchIsModelBatch = false;
  PlanObjective objective = PlanObjective::Throughput;
  /// The pipeline schedule (`--schedule`); interleaved splits the model into
  /// pp x chunks stages, `virtualStages` per device. Unset: a training step
  /// searches `searchedSchedules`, inference takes `getSchedule`.
  std::optional<ScheduleChoice> schedule;
  /// Not a user option: the schedules a training search weighs when
  /// `schedule` is unset, in the order that breaks ties between equal
  /// predictions (the simplest first). A front end that cannot run some
  /// schedules leaves them out (`cleave compile`: the interleaved ones).
  std::vector<ScheduleChoice> searchedSchedules = getSearchableSchedules();
  /// A training step instead of inference (`--train`, `--optimizer`,
  /// `--zero`, `--recompute`; `--precision` is `costOptions`'s).
  TrainingPlanOptions training;
  /// Sequence parallelism (as Megatron-LM's `--sequence-parallel`): the
  /// activations passed between segments are held split along their
  /// sequence dimension over the tensor-parallel group, the group may also
  /// split token dimensions (batch, sequence) inside a segment, and a
  /// partial sum may be reduce-scattered into a split instead of
  /// all-reduced.
  bool sequenceParallel = false;
  /// Plans with and without sequence parallelism and keeps the better (by
  /// the objective; a plan that fits beats one that does not).
  bool weighSequenceParallel = false;
  /// Gives every stage the same number of segments instead of balancing
  /// their time (the naive layer split, for comparison).
  bool uniformStages = false;
  /// Share of each device's memory that the plan may fill; the rest is left
  /// to the runtime, kernel workspaces and fragmentation.
  double usableMemoryFraction = 0.9;
  /// Seconds a collective is worth in the sharding search beyond its
  /// predicted time: between layouts of equal time the one with fewer
  /// collectives wins (an all-reduce over two all-gathers).
  double collectivePenalty = 1e-9;
  /// Bound on the sharding states the per-segment search keeps per op;
  /// beyond it only the cheapest survive and the result is marked inexact.
  int64_t maxShardingStates = 1 << 14;
  /// Microbatch counts above this are not searched (a pinned count is
  /// tried whatever its size).
  int64_t maxMicrobatches = 256;
  CostOptions costOptions;
  /// The function that holds the model.
  std::string functionName = "main";
  /// Where to show the progress of the search; null shows nothing.
  ProgressReporter *progress = nullptr;

  /// Declares the options a user sets (see OptionBinder.h).
  void bindOptions(OptionBinder &binder,
                   PlanOptionSet set = PlanOptionSet::Planning);

  /// The schedule asked for, or by default GPipe for inference and 1F1B for
  /// training (which holds fewer microbatches' activations): the one a
  /// search starts from.
  ScheduleChoice getSchedule() const;

  /// Whether a training search weighs several schedules (`schedule` unset).
  bool searchesSchedule() const {
    return training.enabled && !schedule && !searchedSchedules.empty();
  }

  /// The schedules a training search may choose from: 1F1B, interleaved
  /// 1F1B with 2, 3 and 4 model chunks per device, and GPipe, in the order
  /// that breaks ties (1F1B holds the fewest activations; interleaving adds
  /// sends and chunks; GPipe holds every microbatch's activations).
  static std::vector<ScheduleChoice> getSearchableSchedules();
};

/// Checks what can be checked of `options` without a model or a cluster
/// (pins are positive, the memory fraction is a share, the training options
/// come with `train`); the error names the option as the user spelled it,
/// `<prefix><flag>`. `planModel` checks the rest (pins that divide the
/// devices and the batch).
llvm::Error validatePlanOptions(const PlanOptions &options,
                                llvm::StringRef prefix = "--");

/// `pp × tp × dp` devices, numbered as the runtime numbers them
/// (rt::MeshShape, runtime/include/cleave/rt/Mesh.h): replica-major with
/// the tensor-parallel shards innermost, so a tensor-parallel group is
/// consecutive (inside a node) and a replica's stages are neighbours.
struct DeviceMesh {
  int64_t pp = 1;
  int64_t tp = 1;
  int64_t dp = 1;

  int64_t size() const { return shape().size(); }
  rt::MeshShape shape() const { return rt::MeshShape{pp, dp, tp}; }
  int64_t rank(int64_t stage, int64_t replica, int64_t shard) const {
    return shape().rankOf(rt::MeshCoords{stage, replica, shard});
  }
  bool operator==(const DeviceMesh &other) const {
    return pp == other.pp && tp == other.tp && dp == other.dp;
  }
};

/// How one weight is stored over its stage's tensor-parallel group.
struct PlanWeight {
  std::string name;
  /// The shape the op reads.
  llvm::SmallVector<int64_t> shape;
  /// Where that window starts in the named weight, when the op reads a
  /// window of it (a piece of a fused projection); empty for all of it.
  llvm::SmallVector<int64_t> windowStarts;
  int64_t stage = 0;
  /// The segment whose op reads it.
  int64_t segment = 0;
  /// The dimension split over the group; unset when every shard holds all
  /// of it.
  std::optional<int64_t> splitDim;
  int64_t bytes = 0;
  int64_t bytesPerDevice = 0;
};

/// One communication of a step, per microbatch.
struct PlanCommunication {
  /// all_reduce, all_gather, reduce_scatter or send_recv.
  CollectiveKind kind = CollectiveKind::AllReduce;
  int64_t stage = 0;
  /// Location name of the op that needs it (for a send: the stage's last
  /// op).
  std::string op;
  /// Location name of the op that computed the value it moves.
  std::string producer;
  /// Ranks of replica 0: the tensor-parallel group of a collective, or the
  /// sender and the receiver of shard 0 of a send.
  llvm::SmallVector<int64_t> group;
  /// How many copies run at once across shards and replicas.
  int64_t instances = 1;
  /// Message bytes in the cost model's convention (the full tensor of a
  /// collective; the bytes one shard sends).
  int64_t bytes = 0;
  /// Predicted seconds per microbatch.
  double time = 0;
  /// The interconnect level it runs on.
  bool crossesNodes = false;
  /// The phase that runs it: in a training step the backward answers each
  /// collective of the forward with its conjugate and sends the gradients
  /// back.
  PipelinePhase phase = PipelinePhase::Forward;
  /// For the backward's all-reduce of a parameter's gradient (a parameter
  /// held whole and read by an op that splits a loop): the parameter's
  /// name. Empty for every other communication.
  std::string parameter;
};

/// One interval of a stage's work on one microbatch, in order.
struct PlanStageEvent {
  enum class Kind { Compute, Collective, Send };
  Kind kind = Kind::Compute;
  /// The collective, for `Collective` events.
  CollectiveKind collective = CollectiveKind::AllReduce;
  /// What it is: the first op of a run of compute, the producer of a
  /// communicated value.
  std::string name;
  double duration = 0;
};

/// One segment of the model (a range of ops between two points where a
/// single activation is live, or in a model with no such point the fewest)
/// as its stage runs it.
struct PlanSegment {
  int64_t index = 0;
  /// Segments of equal class are structurally identical (repeated layers).
  int64_t segmentClass = 0;
  int64_t stage = 0;
  /// Ops [firstOp, lastOp] of the planned op sequence, and their location
  /// names.
  int64_t firstOp = 0;
  int64_t lastOp = 0;
  std::string firstOpName;
  std::string lastOpName;
  /// How many of its ops split a loop over the tensor-parallel group (the
  /// rest run replicated on every shard).
  int64_t splitOps = 0;
  /// Whether it takes a leaner layout than its fastest, to fit.
  bool lean = false;
  /// Seconds per microbatch on each device of its stage.
  double computeTime = 0;
  double collectiveTime = 0;
  /// In a training step: whether it recomputes its activations before its
  /// backward, and the backward's seconds per microbatch.
  bool recompute = false;
  /// Recomputing, whether it keeps not even its outputs: the next segment's
  /// backward recomputes them, the two from one stash.
  bool recomputeJoined = false;
  double backwardComputeTime = 0;
  double backwardCollectiveTime = 0;
};

/// A stage's update phase in a training step: the data-parallel gradient
/// reduction, the optimizer and, under ZeRO, the gathering of the updated
/// weights.
struct PlanStageUpdate {
  /// The weights its devices train, per device.
  TrainableParameters trainable;
  /// all_reduce, or reduce_scatter under ZeRO; over `group` (the
  /// data-parallel group of its first rank).
  CollectiveKind reductionKind = CollectiveKind::AllReduce;
  llvm::SmallVector<int64_t> group;
  bool crossesNodes = false;
  GradientReduction reduction;
  UpdateCost cost;
};

/// A contiguous range of the model on `tp` devices of each replica. Under
/// the interleaved schedule each device runs several: stage (virtual stage)
/// `index` runs on the devices of pipeline stage `index mod pp`.
struct PlanStage {
  int64_t index = 0;
  /// Segments [firstSegment, lastSegment] of the model.
  int64_t firstSegment = 0;
  int64_t lastSegment = 0;
  /// Ops [firstOp, lastOp] of the planned op sequence, and their location
  /// names.
  int64_t firstOp = 0;
  int64_t lastOp = 0;
  std::string firstOpName;
  std::string lastOpName;
  /// Ranks of replica 0.
  llvm::SmallVector<int64_t> ranks;
  /// Seconds per microbatch.
  double computeTime = 0;
  double collectiveTime = 0;
  double sendTime = 0;
  double time() const { return computeTime + collectiveTime + sendTime; }
  /// Peak memory of each of its devices.
  DeviceMemory memory;
  /// How many of its segments use the sharding of least weight memory
  /// rather than the fastest one (to fit).
  int64_t leanSegments = 0;
  /// What each of its devices does per microbatch, in order (the forward).
  std::vector<PlanStageEvent> schedule;

  /// In a training step: per microbatch, the forward again for the segments
  /// that recompute, and the backward (its sends: the gradients of the
  /// stage's inputs, back to the stage before); per step, the update.
  double recomputeTime = 0;
  double backwardComputeTime = 0;
  double backwardCollectiveTime = 0;
  double backwardSendTime = 0;
  int64_t recomputedSegments = 0;
  PlanStageUpdate update;

  double backwardTime() const {
    return backwardComputeTime + backwardCollectiveTime + backwardSendTime;
  }
  /// Its phases as the schedule reads them (inference: the forward only).
  PhaseTimes phaseTimes() const {
    PhaseTimes times = PhaseTimes::forward(time());
    times[PipelinePhase::Recompute] = recomputeTime;
    times[PipelinePhase::Backward] = backwardTime();
    times[PipelinePhase::Update] = update.cost.total();
    return times;
  }
};

/// A configuration the search weighed.
struct PlanAlternative {
  DeviceMesh mesh;
  /// Best microbatch count for the mesh; 0 when none is valid.
  int64_t microbatches = 0;
  /// The pipeline schedule it was costed under; unset when the mesh is
  /// invalid.
  std::optional<ScheduleChoice> schedule;
  bool feasible = false;
  double throughput = 0;
  double stepTime = 0;
  double latency = 0;
  int64_t peakMemoryBytes = 0;
  /// `chosen`, or why it lost.
  std::string verdict;
};

/// What a training plan adds.
struct PlanTraining {
  Optimizer optimizer = Optimizer::AdamW;
  /// The precision floating-point tensors are computed and held in; unset:
  /// the model's own.
  std::optional<Precision> precision;
  ZeroStage zero = ZeroStage::None;
  /// Whether the user fixed the ZeRO stage and the recomputation, or the
  /// search chose them.
  bool zeroSearched = true;
  bool recomputeSearched = true;
  int64_t recomputedSegments = 0;
  /// Of those, the ones joined to the next (`PlanSegment::recomputeJoined`).
  int64_t joinedSegments = 0;
  /// The step's arithmetic, every sample once (an op replicated over a
  /// tensor-parallel group counts once): the forward, the backward and the
  /// recomputation.
  double forwardFlops = 0;
  double backwardFlops = 0;
  double recomputeFlops = 0;

  double totalFlops() const {
    return forwardFlops + backwardFlops + recomputeFlops;
  }
};

/// The planner's decision and its predictions.
struct Plan {
  std::string functionName;
  std::string targetName;
  int64_t numDevices = 0;
  int64_t devicesPerNode = 0;
  int64_t memoryCapacityBytes = 0;
  int64_t usableMemoryBytes = 0;

  DeviceMesh mesh;
  int64_t microbatches = 1;
  int64_t microbatchSize = 1;
  int64_t globalBatch = 1;
  PlanObjective objective = PlanObjective::Throughput;
  bool sequenceParallel = false;
  /// Whether the planner weighed the plan without sequence parallelism
  /// against the plan with it (`PlanOptions::weighSequenceParallel`).
  bool sequenceParallelWeighed = false;
  /// The order each pipeline stage runs the microbatches in; `stages` holds
  /// one entry per virtual stage of it.
  PipelineSchedule schedule;
  /// Set for a plan of a training step.
  std::optional<PlanTraining> training;

  std::vector<PlanStage> stages;
  std::vector<PlanSegment> segments;
  std::vector<PlanWeight> weights;
  std::vector<PlanCommunication> communications;

  /// Seconds per step, microbatch latency, samples per second.
  double stepTime = 0;
  double latency = 0;
  double throughput = 0;
  /// Share of the step each device idles in pipeline fill and drain.
  double bubbleFraction = 0;
  int64_t peakMemoryBytes = 0;

  std::vector<PlanAlternative> alternatives;

  /// The model as the planner saw it.
  int64_t numOps = 0;
  int64_t numSegments = 0;
  int64_t numDistinctSegments = 0;
  /// The class (index of its first instance's kind) of every segment:
  /// segments with equal classes are structurally identical.
  std::vector<int64_t> segmentClasses;
  /// Whether every per-segment sharding search was exact.
  bool shardingExact = true;

  /// Per planned op (the non-parameter ops of the function, in order): its
  /// stage and the loop split over the tensor-parallel group (-1: none).
  std::vector<int64_t> opStage;
  std::vector<int64_t> opTensorParallelLoop;
};

} // namespace cleave

#endif // CLEAVE_PLAN_PLAN_H
