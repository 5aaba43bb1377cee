//===- Planner.cpp - the auto-parallel planner ------------------*- C++ -*-===//
//
// The search is layered so that each level is costed once per distinct
// input: the sharding of a segment class per (tp, microbatch size), the
// stage split per (mesh, microbatch count), the choice over all meshes and
// microbatch counts last.
//
//===----------------------------------------------------------------------===//

#include "cleave/Plan/Planner.h"

#include "cleave/Analysis/Cost/CostInterface.h"
#include "cleave/Dialect/Cleave/IR/CleaveOps.h"
#include "cleave/Plan/Segmentation.h"
#include "cleave/Plan/ShardingSearch.h"
#include "cleave/Plan/StagePartitioner.h"
#include "cleave/Support/Progress.h"
#include "cleave/Transforms/Partition/Contract.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <tuple>

using namespace mlir;
using namespace cleave;

/// The name an op's location gives it (the ONNX node name, for imported
/// models), or `op-name#index` when it has none.
static std::string getOpLocationName(Operation *op, int64_t index) {
  std::string name = getNodeName(op->getLoc());
  if (name.empty())
    name = (op->getName().getStringRef() + "#" + llvm::Twine(index)).str();
  return name;
}

/// Bytes in a short human form (decimal units, as device memory is quoted).
static std::string formatBytes(int64_t bytes) {
  double value = static_cast<double>(bytes);
  const char *units[] = {"B", "kB", "MB", "GB", "TB"};
  int unit = 0;
  while (std::abs(value) >= 1000 && unit < 4) {
    value /= 1000;
    ++unit;
  }
  return llvm::formatv("{0:f1} {1}", value, units[unit]).str();
}

/// "1 device", "8 devices".
static std::string devicesText(int64_t count) {
  return std::to_string(count) + (count == 1 ? " device" : " devices");
}

static std::string formatRanks(ArrayRef<int64_t> ranks) {
  if (ranks.size() == 1)
    return std::to_string(ranks.front());
  return std::to_string(ranks.front()) + "-" + std::to_string(ranks.back());
}

namespace {

/// The shardings of a segment class at one (tp, microbatch size): the
/// trade-off between time and weight bytes, fastest first.
struct ClassSharding {
  std::vector<SegmentSharding> candidates;
  std::vector<SegmentCandidate> summaries;
};

/// A candidate of a segment class in a training step: one of its shardings,
/// with or without recomputation; `joined`: recomputing, and keeping not
/// even its outputs (the next segment's backward recomputes them).
struct TrainingChoice {
  int64_t sharding = 0;
  bool recompute = false;
  bool joined = false;
};

/// The candidates of a segment class in a training step at one (tp,
/// microbatch size, data-parallel setting): non-recomputing ones first,
/// fastest first.
struct ClassTrainingCandidates {
  std::vector<TrainingChoice> choices;
  std::vector<SegmentCandidate> summaries;
};

/// One (mesh, microbatch count) as costed.
struct Evaluation {
  DeviceMesh mesh;
  int64_t microbatches = 0;
  int64_t microbatchSize = 0;
  PipelineSchedule schedule;
  /// The schedule's place in the search's order (`PlanOptions::
  /// searchedSchedules`): between equal predictions the earlier wins.
  int64_t scheduleRank = 0;
  /// In a training step, how ZeRO shards the state.
  ZeroStage zero = ZeroStage::None;
  /// Why the mesh cannot run at all; empty when it can.
  std::string invalidReason;
  bool feasible = false;
  StageSplit split;
  double stepTime = 0;
  double latency = 0;
  double throughput = 0;
  int64_t peakMemory = 0;
  /// For a configuration that does not fit: the split of least memory and
  /// its excess over the usable memory.
  std::optional<StageSplit> memorySplit;
  int64_t overflowBytes = std::numeric_limits<int64_t>::max();
  /// When the search weighs several schedules: the best of each other
  /// schedule on the same mesh, and the schedules every count of which the
  /// lower bound ruled out.
  std::vector<Evaluation> otherSchedules;
  std::vector<ScheduleChoice> boundedSchedules;
};

/// A mesh as the search goes: per schedule (in the order of the search's
/// schedules) its best, whether a count ran it and whether the lower bound
/// ruled one out.
struct MeshSearch {
  DeviceMesh mesh;
  std::string invalidReason;
  int64_t replicaBatch = 1;
  /// The microbatch counts, in the order they are weighed.
  SmallVector<int64_t> counts;
  std::vector<std::optional<Evaluation>> best;
  std::vector<bool> runs;
  std::vector<bool> bounded;
  /// The fastest step that fits, under any schedule.
  std::optional<double> bestStepTime;
};

/// The values of `PlanOptions` that pin the mesh.
struct MeshPins {
  std::optional<int64_t> pp, tp, dp, microbatches;
};

class AutoParallelPlanner {
public:
  AutoParallelPlanner(SegmentedModel &model, const TargetDescription &target,
                      const PlanOptions &options)
      : model(model), target(target), options(options) {
    if (options.searchesSchedule())
      schedules = options.searchedSchedules;
    else
      schedules = {options.getSchedule()};
  }

  LogicalResult initialize();
  FailureOr<Plan> run();

private:
  /// Errors go to the function's location without printing the function
  /// (which would be the whole model).
  InFlightDiagnostic emitError() {
    return mlir::emitError(model.function.getLoc());
  }

  LogicalResult checkPins(int64_t numDevices);
  std::vector<Evaluation>
  searchConfigurations(int64_t numDevices, const MeshPins &pins,
                       ProgressReporter *reporter = nullptr);
  std::vector<DeviceMesh> enumerateMeshes(int64_t numDevices,
                                          const MeshPins &pins) const;
  std::string invalidReason(const DeviceMesh &mesh) const;
  /// Whether the global batch may be cut into blocks: when the model's ops
  /// keep the samples apart, or when each block is the model's own batch
  /// (a training step's function, run once per microbatch and replica).
  bool isBatchSplittable() const {
    return model.batchSplittable || options.modelBatchScale > 1 ||
           options.microbatchIsModelBatch;
  }
  /// Why the batch cannot be split (`model.batchSplittable` is false).
  std::string describeBatchBarrier() const;
  /// A mesh's search: why it is invalid, or the counts to weigh.
  MeshSearch beginMesh(const DeviceMesh &mesh, const MeshPins &pins) const;
  /// Weighs schedule `rank` over the counts of `search`, leaving out the
  /// counts whose lower bound is above the best of the mesh or
  /// `incumbent`.
  void searchSchedule(MeshSearch &search, size_t rank,
                      std::optional<double> incumbent);
  /// The mesh's best over its schedules, with the others'.
  Evaluation finishMesh(MeshSearch &search) const;
  /// Costs `mesh` under `schedule`; `explainOverflow`: when nothing fits,
  /// find the split of least memory and by how much it overflows.
  Evaluation evaluate(const DeviceMesh &mesh, PipelineSchedule schedule,
                      ZeroStage zero = ZeroStage::None,
                      bool explainOverflow = true);
  /// A bound below the step time of a training step on `mesh` under
  /// `schedule`, whatever the split (see the definition).
  double getStepLowerBound(const DeviceMesh &mesh,
                           const PipelineSchedule &schedule);
  /// A feasible ZeRO 2 evaluation as ZeRO 1 (unsharded gradients), when its
  /// split still fits.
  std::optional<Evaluation>
  withWholeGradients(const Evaluation &evaluation) const;
  bool isBetter(const Evaluation &a, const Evaluation &b) const;
  void findJoinableClasses();

  const ClassSharding &getClassSharding(int64_t segmentClass, int64_t tp,
                                        int64_t microbatchSize);
  ShardingContext makeContext(int64_t tp, int64_t microbatchSize) const;
  /// The problem of the stage split; in a training step, with the
  /// candidates of `training`.
  StageSplitProblem buildProblem(int64_t tp, int64_t microbatchSize,
                                 const TrainingStepCost *training = nullptr);
  const ClassTrainingCandidates &
  getTrainingCandidates(int64_t segmentClass, int64_t tp,
                        int64_t microbatchSize,
                        const TrainingStepCost &training);
  /// The data-parallel group of `mesh` on the target's nodes.
  DataParallelGroup getDataParallelGroup(const DeviceMesh &mesh) const;
  /// The ZeRO stages the search weighs on `mesh`.
  llvm::SmallVector<ZeroStage, 3> getZeroStages(const DeviceMesh &mesh) const;
  /// The schedule `choice` of `mesh` with `microbatches`, or an error saying
  /// why it cannot run them.
  llvm::Expected<PipelineSchedule> buildSchedule(const DeviceMesh &mesh,
                                                 int64_t microbatches,
                                                 ScheduleChoice choice) const;
  /// Whether the search weighs `choice` on `mesh`: the model cuts into its
  /// stages, and a searched interleaved schedule has stages to interleave.
  bool isScheduleWeighed(const DeviceMesh &mesh,
                         const ScheduleChoice &choice) const;
  StageSplitOptions buildSplitOptions(const DeviceMesh &mesh,
                                      const PipelineSchedule &schedule) const;
  /// The devices of pipeline stage `stage mod pp`: under the interleaved
  /// schedule stage (virtual stage) `stage` runs there.
  int64_t getDeviceStage(const DeviceMesh &mesh, int64_t stage) const {
    return stage % mesh.pp;
  }
  /// What a segment passes on, per microbatch: bytes of the values held
  /// whole, and each device's share of those that sequence parallelism
  /// holds split.
  struct BoundaryBytes {
    int64_t whole = 0;
    int64_t splitShare = 0;
    int64_t perDevice() const { return whole + splitShare; }
  };
  BoundaryBytes getBoundaryBytes(const ModelSegment &segment, int64_t tp,
                                 int64_t microbatchSize) const;
  /// Seconds to send `bytes` to the next stage: a split value's shards go
  /// shard to shard; a whole one is sent whole by each shard or, when
  /// faster (`scatterGather`), sliced and all-gathered by the receivers.
  double boundarySendTime(const BoundaryBytes &bytes, bool crossesNodes,
                          int64_t tp, bool *scatterGather = nullptr) const;
  bool tpGroupCrossesNodes(int64_t tp) const {
    return tp > target.devicesPerNode || target.devicesPerNode % tp != 0;
  }
  double batchScale(int64_t microbatchSize) const {
    return static_cast<double>(microbatchSize) /
           static_cast<double>(model.batchSize);
  }
  int64_t scaledBytes(Value value, int64_t microbatchSize) const;

  void emitCannotFit(const std::vector<Evaluation> &evaluations,
                     int64_t numDevices);
  Plan buildPlan(const Evaluation &best,
                 const std::vector<Evaluation> &evaluations,
                 int64_t numDevices);
  void addStage(Plan &plan, const Evaluation &best, int64_t stage);
  /// The training step's cost model of `evaluation`; none for inference.
  std::optional<TrainingStepCost>
  makeTrainingCost(const Evaluation &evaluation) const;
  PlanStageUpdate describeUpdate(const Evaluation &best, int64_t stage,
                                 const TrainingStepCost &training) const;
  PlanTraining describeTraining(const Plan &plan, const Evaluation &best);

  SegmentedModel &model;
  const TargetDescription &target;
  const PlanOptions &options;
  /// The schedules the search weighs, in the order that breaks ties: the
  /// pinned one, or for a training step without one the searched ones.
  std::vector<ScheduleChoice> schedules;
  int64_t globalBatch = 1;
  int64_t usableMemory = 0;
  std::vector<SegmentShardingModel> classModels;
  /// Per class: the classes of the segments right after its instances, and
  /// whether it may recompute joined to them (`findJoinableClasses`).
  std::vector<llvm::SmallVector<int64_t, 2>> nextClasses;
  std::vector<bool> joinable;
  std::map<std::tuple<int64_t, int64_t, int64_t>, ClassSharding> classCache;
  /// Per (class, tp, microbatch size, ZeRO stage, dp).
  std::map<std::tuple<int64_t, int64_t, int64_t, int, int64_t>,
           ClassTrainingCandidates>
      trainingCache;
  std::vector<std::string> opNames;
  /// Weights (name, window, layout, stage) already in the plan.
  llvm::StringSet<> weightKeys;
};

} // namespace

LogicalResult AutoParallelPlanner::initialize() {
  std::optional<llvm::Regex> frozen;
  if (options.training.enabled && !options.training.freeze.empty()) {
    frozen.emplace(options.training.freeze);
    std::string error;
    if (!frozen->isValid(error))
      return model.function.emitError()
             << "freeze=" << options.training.freeze
             << ": not a valid regular expression: " << error;
  }
  for (const SegmentClass &segmentClass : model.classes) {
    FailureOr<SegmentShardingModel> classModel = buildSegmentShardingModel(
        model, segmentClass.representative, target, options.costOptions,
        frozen ? &*frozen : nullptr, options.training.enabled);
    if (failed(classModel))
      return failure();
    classModels.push_back(std::move(*classModel));
  }
  findJoinableClasses();
  for (auto [index, op] : llvm::enumerate(model.ops))
    opNames.push_back(getOpLocationName(op, index));
  globalBatch =
      options.globalBatch.value_or(model.batchSize * options.modelBatchScale);
  usableMemory =
      static_cast<int64_t>(static_cast<double>(target.device.memoryBytes) *
                           options.usableMemoryFraction);
  return success();
}

/// A recomputing segment may leave its outputs to the next segment's
/// backward to recompute, so that the two recompute from one stash (one
/// per transformer layer, as Megatron-LM checkpoints, rather than two).
/// Joined segments must not be neighbours, or a chain of them would
/// recompute from one stash and hold all of its activations at once; so a
/// class joins only if every instance has a next segment, and neither that
/// segment nor the one before is of a joining class. The most repeated
/// classes choose first (a layer's attention half, before the embedding
/// that precedes the first one).
void AutoParallelPlanner::findJoinableClasses() {
  auto numClasses = static_cast<int64_t>(model.classes.size());
  auto numSegments = static_cast<int64_t>(model.segments.size());
  nextClasses.assign(numClasses, {});
  joinable.assign(numClasses, false);
  for (int64_t i = 0; i + 1 < numSegments; ++i) {
    llvm::SmallVector<int64_t, 2> &next =
        nextClasses[model.segments[i].segmentClass];
    int64_t nextClass = model.segments[i + 1].segmentClass;
    if (!llvm::is_contained(next, nextClass))
      next.push_back(nextClass);
  }
  auto classes = llvm::seq<int64_t>(0, numClasses);
  llvm::SmallVector<int64_t> order(classes.begin(), classes.end());
  llvm::stable_sort(order, [&](int64_t a, int64_t b) {
    return model.classes[a].numInstances > model.classes[b].numInstances;
  });
  for (int64_t c : order) {
    bool allowed = true;
    for (int64_t i = 0; i < numSegments && allowed; ++i) {
      if (model.segments[i].segmentClass != c)
        continue;
      allowed = i + 1 < numSegments &&
                model.segments[i + 1].segmentClass != c &&
                !joinable[model.segments[i + 1].segmentClass] &&
                (i == 0 || !joinable[model.segments[i - 1].segmentClass]);
    }
    joinable[c] = allowed;
  }
}

ShardingContext AutoParallelPlanner::makeContext(int64_t tp,
                                                 int64_t microbatchSize) const {
  ShardingContext context;
  context.target = &target;
  context.tp = tp;
  context.crossesNodes = tpGroupCrossesNodes(tp);
  context.batchScale = batchScale(microbatchSize);
  context.sequenceParallel = options.sequenceParallel;
  context.collectivePenalty = options.collectivePenalty;
  context.training = options.training.enabled;
  return context;
}

/// What the stage split reads of a sharding.
static SegmentCandidate summarize(const SegmentSharding &sharding) {
  SegmentCandidate candidate;
  candidate.time = sharding.cost.time();
  candidate.missTime = sharding.cost.missTime;
  candidate.weightBytes = sharding.cost.weightBytes;
  candidate.peakActivationBytes = sharding.cost.peakActivationBytes;
  candidate.largestMessageBytes = sharding.cost.largestMessageBytes;
  return candidate;
}

const ClassSharding &
AutoParallelPlanner::getClassSharding(int64_t segmentClass, int64_t tp,
                                      int64_t microbatchSize) {
  auto key = std::make_tuple(segmentClass, tp, microbatchSize);
  auto it = classCache.find(key);
  if (it != classCache.end())
    return it->second;
  ShardingContext context = makeContext(tp, microbatchSize);
  const SegmentShardingModel &classModel = classModels[segmentClass];
  // Fastest first, down to the one of least weight memory.
  std::vector<SegmentSharding> front = searchSegmentShardingFront(
      classModel, context, options.maxShardingStates);
  ClassSharding sharding;
  for (SegmentSharding &candidate : front) {
    sharding.summaries.push_back(summarize(candidate));
    sharding.candidates.push_back(std::move(candidate));
  }
  return classCache.emplace(key, std::move(sharding)).first->second;
}

int64_t AutoParallelPlanner::scaledBytes(Value value,
                                         int64_t microbatchSize) const {
  double bytes = static_cast<double>(
      getHeldTensorBytes(value.getType(), options.costOptions));
  if (model.getBatchDim(value) >= 0)
    bytes *= batchScale(microbatchSize);
  return static_cast<int64_t>(std::llround(bytes));
}

AutoParallelPlanner::BoundaryBytes
AutoParallelPlanner::getBoundaryBytes(const ModelSegment &segment, int64_t tp,
                                      int64_t microbatchSize) const {
  ShardingContext context = makeContext(tp, microbatchSize);
  BoundaryBytes bytes;
  for (Value value : segment.liveAfter) {
    int64_t valueBytes = scaledBytes(value, microbatchSize);
    auto type = dyn_cast<RankedTensorType>(value.getType());
    if (type &&
        getBoundaryLayout(type.getShape(), model.getSequenceDim(value), context)
            .isSplit())
      bytes.splitShare += valueBytes / tp;
    else
      bytes.whole += valueBytes;
  }
  return bytes;
}

double AutoParallelPlanner::boundarySendTime(const BoundaryBytes &bytes,
                                             bool crossesNodes, int64_t tp,
                                             bool *scatterGather) const {
  if (scatterGather)
    *scatterGather = false;
  double shards =
      bytes.splitShare > 0
          ? collectiveTime(CollectiveKind::SendRecv, bytes.splitShare, 2,
                           crossesNodes, target)
          : 0.0;
  if (bytes.whole == 0 && bytes.splitShare > 0)
    return shards;
  double direct = collectiveTime(CollectiveKind::SendRecv, bytes.whole, 2,
                                 crossesNodes, target);
  if (tp <= 1)
    return shards + direct;
  // Each shard sends its slice; the receiving group all-gathers them.
  double sliced =
      collectiveTime(CollectiveKind::SendRecv, (bytes.whole + tp - 1) / tp, 2,
                     crossesNodes, target) +
      collectiveTime(CollectiveKind::AllGather, bytes.whole, tp,
                     tpGroupCrossesNodes(tp), target);
  if (sliced < direct) {
    if (scatterGather)
      *scatterGather = true;
    return shards + sliced;
  }
  return shards + direct;
}

const ClassTrainingCandidates &
AutoParallelPlanner::getTrainingCandidates(int64_t segmentClass, int64_t tp,
                                           int64_t microbatchSize,
                                           const TrainingStepCost &training) {
  auto key = std::make_tuple(segmentClass, tp, microbatchSize,
                             static_cast<int>(training.getZeroStage()),
                             training.getGroup().size);
  auto it = trainingCache.find(key);
  if (it != trainingCache.end())
    return it->second;
  const ClassSharding &sharding =
      getClassSharding(segmentClass, tp, microbatchSize);
  std::optional<RecomputePolicy> policy = options.training.recompute;
  // Searched, a segment keeps or recomputes; joining is only asked for
  // (`layers`): it saves a stash per microbatch held but widens the
  // backward's working set, a trade the per-class candidates cannot weigh
  // (the working set is a maximum over the stage, not a sum).
  enum class Mode { Keep, Recompute, Joined };
  auto weighs = [&](Mode mode) {
    if (!policy)
      return mode != Mode::Joined;
    switch (*policy) {
    case RecomputePolicy::None:
      return mode == Mode::Keep;
    case RecomputePolicy::Segments:
      return mode == Mode::Recompute;
    case RecomputePolicy::Layers:
      return mode == (joinable[segmentClass] ? Mode::Joined : Mode::Recompute);
    }
    llvm_unreachable("unknown recompute policy");
  };
  // What the backward of a segment after this class's holds at most of
  // what it recomputed: a joined segment's recomputation is held beside it.
  int64_t nextDropped = 0;
  if (weighs(Mode::Joined))
    for (int64_t next : nextClasses[segmentClass])
      for (const SegmentSharding &candidate :
           getClassSharding(next, tp, microbatchSize).candidates)
        nextDropped =
            std::max(nextDropped, candidate.cost.definedActivationBytes -
                                      candidate.cost.outputActivationBytes);
  ClassTrainingCandidates result;
  for (Mode mode : {Mode::Keep, Mode::Recompute, Mode::Joined}) {
    if (!weighs(mode))
      continue;
    bool recompute = mode != Mode::Keep;
    for (auto [index, candidate] : llvm::enumerate(sharding.candidates)) {
      const SegmentCost &cost = candidate.cost;
      int64_t dropped =
          cost.definedActivationBytes - cost.outputActivationBytes;
      // Searched, recomputing what takes no memory only costs time.
      if (recompute && !policy && dropped <= 0)
        continue;
      SegmentCandidate summary;
      SegmentTrainingCost &step = summary.training;
      step.recomputes = recompute;
      step.recomputeTime = recompute ? cost.time() : 0.0;
      step.backwardTime = cost.backwardTime();
      summary.time = cost.time() + step.recomputeTime + step.backwardTime;
      summary.missTime =
          cost.missTime * (recompute ? 2 : 1) + cost.backwardMissTime;
      summary.weightBytes = cost.weightBytes;
      // The backward of a recomputing segment holds what it recomputed; a
      // joined one's is held through the next segment's backward too.
      summary.peakActivationBytes =
          cost.peakActivationBytes + (recompute ? dropped : 0) +
          (mode == Mode::Joined ? cost.outputActivationBytes + nextDropped : 0);
      summary.largestMessageBytes = cost.largestMessageBytes;
      step.savedActivationBytes = mode == Mode::Joined ? 0
                                  : mode == Mode::Recompute
                                      ? cost.outputActivationBytes
                                      : cost.definedActivationBytes;
      step.trainable = cost.trainable;
      TrainingStateBytes state = training.getStateBytes(cost.trainable);
      step.gradientBytes = state.gradients;
      step.optimizerStateBytes = state.optimizerState;
      result.choices.push_back(
          {static_cast<int64_t>(index), recompute, mode == Mode::Joined});
      result.summaries.push_back(summary);
    }
  }
  return trainingCache.emplace(key, std::move(result)).first->second;
}

DataParallelGroup
AutoParallelPlanner::getDataParallelGroup(const DeviceMesh &mesh) const {
  DataParallelGroup group;
  group.size = mesh.dp;
  int64_t node = mesh.rank(0, 0, 0) / target.devicesPerNode;
  int64_t perNode = 0;
  for (int64_t replica = 0; replica < mesh.dp; ++replica)
    perNode += mesh.rank(0, replica, 0) / target.devicesPerNode == node;
  // Replicas spread unevenly over nodes run at the inter-node speed.
  group.perNode = mesh.dp % perNode == 0 ? perNode : 1;
  return group;
}

llvm::SmallVector<ZeroStage, 3>
AutoParallelPlanner::getZeroStages(const DeviceMesh &mesh) const {
  if (options.training.zero)
    return {*options.training.zero};
  // Inference has no training state, and without replicas there is nothing
  // to shard. ZeRO 1 comes from ZeRO 2 (`withWholeGradients`); the leanest
  // first, which fits soonest.
  if (!options.training.enabled || mesh.dp == 1)
    return {ZeroStage::None};
  if (options.training.zeroOnlyToFit)
    return {ZeroStage::None, ZeroStage::Gradients};
  return {ZeroStage::Gradients, ZeroStage::None};
}

StageSplitProblem
AutoParallelPlanner::buildProblem(int64_t tp, int64_t microbatchSize,
                                  const TrainingStepCost *training) {
  StageSplitProblem problem;
  if (const std::optional<DeviceCalibration> &calibration =
          target.device.calibration)
    problem.cacheBytes = calibration->cacheBytes;
  for (const ModelSegment &segment : model.segments) {
    problem.segmentClass.push_back(segment.segmentClass);
    if (training)
      problem.candidates.push_back(getTrainingCandidates(segment.segmentClass,
                                                         tp, microbatchSize,
                                                         *training)
                                       .summaries);
    else
      problem.candidates.push_back(
          getClassSharding(segment.segmentClass, tp, microbatchSize).summaries);
    BoundaryBytes bytes = getBoundaryBytes(segment, tp, microbatchSize);
    problem.outputBytes.push_back(bytes.perDevice());
    problem.sendTimeIntraNode.push_back(boundarySendTime(bytes, false, tp));
    problem.sendTimeInterNode.push_back(boundarySendTime(bytes, true, tp));
  }
  for (BlockArgument argument : model.function.getArguments())
    if (isActivation(argument))
      problem.inputBytes += scaledBytes(argument, microbatchSize);
  return problem;
}

llvm::Expected<PipelineSchedule>
AutoParallelPlanner::buildSchedule(const DeviceMesh &mesh, int64_t microbatches,
                                   ScheduleChoice choice) const {
  PipelineScheduleOptions schedule;
  schedule.choice = choice;
  schedule.numStages = mesh.pp;
  schedule.numMicrobatches = microbatches;
  if (options.training.enabled) {
    // Recomputation is a phase of its own; a plan in which no segment
    // recomputes drops it again (`evaluate`).
    if (options.training.recompute != RecomputePolicy::None)
      schedule.phases.push_back(PipelinePhase::Recompute);
    schedule.phases.push_back(PipelinePhase::Backward);
    schedule.phases.push_back(PipelinePhase::Update);
  }
  return PipelineSchedule::create(schedule);
}

bool AutoParallelPlanner::isScheduleWeighed(
    const DeviceMesh &mesh, const ScheduleChoice &choice) const {
  if (mesh.pp * choice.virtualStages >
      static_cast<int64_t>(model.segments.size()))
    return false;
  if (!options.searchesSchedule() || mesh.pp >= 2)
    return true;
  // One stage has nothing to interleave with: the chunks only add sends.
  // Nor does its order matter: GPipe runs 1F1B's steps and holds every
  // microbatch's activations rather than one, so it never does better.
  if (choice.virtualStages > 1)
    return false;
  return choice.kind != ScheduleKind::GPipe ||
         !llvm::is_contained(schedules,
                             ScheduleChoice{ScheduleKind::OneFOneB, 1});
}

StageSplitOptions
AutoParallelPlanner::buildSplitOptions(const DeviceMesh &mesh,
                                       const PipelineSchedule &schedule) const {
  StageSplitOptions split;
  split.numStages = schedule.getNumVirtualStages();
  split.schedule = schedule;
  split.inFlightMicrobatches = schedule.maxActivationsHeld();
  // A training step keeps each microbatch's activations until its backward:
  // as many as the schedule holds on the stage's device (each chunk of an
  // interleaved device is charged the device's count).
  if (options.training.enabled)
    for (int64_t stage = 0; stage < split.numStages; ++stage)
      split.heldMicrobatches.push_back(
          schedule.activationsHeld(getDeviceStage(mesh, stage)));
  // A device holds all its chunks; each may take its share.
  split.memoryLimitBytes = usableMemory / schedule.getNumChunks();
  split.objective = options.objective;
  split.uniform = options.uniformStages;
  int64_t perNode = target.devicesPerNode;
  for (int64_t stage = 0; stage + 1 < split.numStages; ++stage) {
    int64_t from = getDeviceStage(mesh, stage);
    int64_t to = getDeviceStage(mesh, stage + 1);
    bool crosses = false;
    for (int64_t replica = 0; replica < mesh.dp && !crosses; ++replica)
      for (int64_t shard : {int64_t(0), mesh.tp - 1})
        crosses |= mesh.rank(from, replica, shard) / perNode !=
                   mesh.rank(to, replica, shard) / perNode;
    split.sendCrossesNodes.push_back(crosses);
  }
  return split;
}

double
AutoParallelPlanner::getStepLowerBound(const DeviceMesh &mesh,
                                       const PipelineSchedule &schedule) {
  // T: every segment's forward and backward of one microbatch at their
  // fastest, sends and update left out.
  auto m = static_cast<double>(schedule.getNumMicrobatches());
  int64_t microbatchSize =
      globalBatch / (mesh.dp * schedule.getNumMicrobatches());
  int64_t p = schedule.getNumStages();
  double total = 0;
  // S_d: the first d segments' times, for d < p.
  SmallVector<double> prefix;
  for (const ModelSegment &segment : model.segments) {
    if (static_cast<int64_t>(prefix.size()) < p)
      prefix.push_back(total);
    total += getClassSharding(segment.segmentClass, mesh.tp, microbatchSize)
                 .candidates.front()
                 .cost.searchedTime();
  }
  if (schedule.getNumChunks() > 1) {
    // Interleaved: device d starts with its first chunk, virtual stage d, on
    // the first microbatch, after virtual stages 0 to d - 1 have run it
    // forward, and ends with that chunk's backward of the last microbatch,
    // which they then run backward: with its own work W_d the step takes at
    // least S_d + W_d, as those stages hold the first d segments at least.
    // The work adds up to m T; the least step any shares W_d >= 0 allow is
    // the X for which the max(0, X - S_d) add up to m T (S_d rises with d).
    double work = m * total;
    for (int64_t active = static_cast<int64_t>(prefix.size()); active > 0;
         --active) {
      double sum = 0;
      for (int64_t d = 0; d < active; ++d)
        sum += prefix[d];
      double level = (work + sum) / static_cast<double>(active);
      if (level >= prefix[active - 1])
        return level;
    }
    return work / static_cast<double>(p);
  }
  // One chunk per device: stage j starts after the stages before it have
  // run the first microbatch forward, runs m forwards and backwards, and
  // the stages before it run the last one's backward after it, so the step
  // takes max_j (t_0 + ... + t_{j-1} + m t_j) for stage times t_j adding up
  // to T. No split does better than all those equal: T / (1 - (1 - 1/m)^p).
  double bound =
      total / (1.0 - std::pow(1.0 - 1.0 / m, static_cast<double>(p)));
  // GPipe runs two pipelines of the m microbatches, the backward's starting
  // on the last stage after its forwards: each takes the sum of its stage
  // times and m - 1 times its slowest, so the step takes at least
  // T + (m - 1) max_j t_j >= T (m + p - 1) / p.
  if (schedule.getKind() == ScheduleKind::GPipe)
    bound = std::max(bound, total * (m + static_cast<double>(p) - 1) /
                                static_cast<double>(p));
  return bound;
}

std::optional<Evaluation>
AutoParallelPlanner::withWholeGradients(const Evaluation &evaluation) const {
  if (!evaluation.feasible)
    return std::nullopt;
  Evaluation result = evaluation;
  result.zero = ZeroStage::OptimizerState;
  int64_t limit = usableMemory / result.schedule.getNumChunks();
  std::vector<int64_t> deviceMemory(result.mesh.pp, 0);
  for (auto [index, stage] : llvm::enumerate(result.split.stages)) {
    stage.memory.gradients = stage.trainable.bytes;
    if (stage.memory.total() > limit)
      return std::nullopt;
    deviceMemory[getDeviceStage(result.mesh, index)] += stage.memory.total();
  }
  result.peakMemory =
      *std::max_element(deviceMemory.begin(), deviceMemory.end());
  return result;
}

Evaluation AutoParallelPlanner::evaluate(const DeviceMesh &mesh,
                                         PipelineSchedule schedule,
                                         ZeroStage zero, bool explainOverflow) {
  Evaluation evaluation;
  evaluation.mesh = mesh;
  evaluation.microbatches = schedule.getNumMicrobatches();
  evaluation.microbatchSize = globalBatch / (mesh.dp * evaluation.microbatches);
  evaluation.schedule = std::move(schedule);
  evaluation.zero = zero;

  std::optional<TrainingStepCost> training;
  if (options.training.enabled)
    training.emplace(target, options.training.optimizer, zero,
                     getDataParallelGroup(mesh));
  StageSplitProblem problem = buildProblem(mesh.tp, evaluation.microbatchSize,
                                           training ? &*training : nullptr);
  StageSplitOptions split = buildSplitOptions(mesh, evaluation.schedule);
  split.training = training ? &*training : nullptr;
  int64_t chunks = evaluation.schedule.getNumChunks();
  std::optional<StageSplit> stages = splitStages(problem, split);
  if (!stages) {
    if (!explainOverflow)
      return evaluation;
    evaluation.memorySplit = splitStagesForMemory(problem, split);
    if (evaluation.memorySplit) {
      const StageRange &largest =
          evaluation.memorySplit
              ->stages[evaluation.memorySplit->largestStage()];
      evaluation.overflowBytes = largest.memory.total() - usableMemory / chunks;
    }
    return evaluation;
  }
  evaluation.feasible = true;
  evaluation.split = std::move(*stages);
  bool recomputes =
      llvm::any_of(evaluation.split.stages, [](const StageRange &stage) {
        return stage.numRecomputed > 0;
      });
  if (evaluation.schedule.hasPhase(PipelinePhase::Recompute) && !recomputes) {
    PipelineScheduleOptions plain;
    plain.choice = evaluation.schedule.getChoice();
    plain.numStages = evaluation.schedule.getNumStages();
    plain.numMicrobatches = evaluation.microbatches;
    plain.phases = {PipelinePhase::Forward, PipelinePhase::Backward,
                    PipelinePhase::Update};
    evaluation.schedule = cantFail(PipelineSchedule::create(plain));
  }
  evaluation.latency = evaluation.split.sumStageTime();
  evaluation.stepTime =
      evaluation.schedule.stepTime(getStageTimes(evaluation.split));
  evaluation.throughput =
      evaluation.stepTime > 0
          ? static_cast<double>(globalBatch) / evaluation.stepTime
          : std::numeric_limits<double>::infinity();
  // A device holds every chunk it runs.
  std::vector<int64_t> deviceMemory(mesh.pp, 0);
  for (auto [index, stage] : llvm::enumerate(evaluation.split.stages))
    deviceMemory[getDeviceStage(mesh, index)] += stage.memory.total();
  for (int64_t bytes : deviceMemory)
    evaluation.peakMemory = std::max(evaluation.peakMemory, bytes);
  return evaluation;
}

bool AutoParallelPlanner::isBetter(const Evaluation &a,
                                   const Evaluation &b) const {
  if (a.feasible != b.feasible)
    return a.feasible;
  if (!a.feasible)
    return a.overflowBytes < b.overflowBytes;
  double scoreA = options.objective == PlanObjective::Throughput ? -a.throughput
                                                                 : a.latency;
  double scoreB = options.objective == PlanObjective::Throughput ? -b.throughput
                                                                 : b.latency;
  double tolerance = 1e-9 * std::max(std::abs(scoreA), std::abs(scoreB));
  if (std::abs(scoreA - scoreB) > tolerance)
    return scoreA < scoreB;
  // Equal predictions: the simpler configuration.
  return std::make_tuple(a.mesh.pp, a.mesh.tp, a.scheduleRank, a.microbatches,
                         static_cast<int>(a.zero)) <
         std::make_tuple(b.mesh.pp, b.mesh.tp, b.scheduleRank, b.microbatches,
                         static_cast<int>(b.zero));
}

std::string AutoParallelPlanner::describeBatchBarrier() const {
  if (model.batchBarrier)
    return llvm::formatv("op '{0}' mixes samples",
                         opNames[model.opIndex.lookup(model.batchBarrier)]);
  return llvm::formatv("output #{0} does not hold the samples in blocks of a "
                       "dimension (it is computed without the batch, or "
                       "interleaves its samples with another dimension)",
                       model.batchOutput);
}

std::string AutoParallelPlanner::invalidReason(const DeviceMesh &mesh) const {
  auto numSegments = static_cast<int64_t>(model.segments.size());
  if (mesh.pp > numSegments)
    return llvm::formatv("pp={0} exceeds the {1} segments the model cuts "
                         "into",
                         mesh.pp, numSegments);
  // Only a pinned interleaved schedule has no stages to run a mesh with.
  int64_t chunks = schedules.front().virtualStages;
  for (const ScheduleChoice &choice : schedules)
    chunks = std::min(chunks, choice.virtualStages);
  if (mesh.pp * chunks > numSegments)
    return llvm::formatv("pp={0} with {1} model chunks per device needs {2} "
                         "segments, but the model cuts into {3}",
                         mesh.pp, chunks, mesh.pp * chunks, numSegments);
  if (globalBatch % mesh.dp != 0)
    return llvm::formatv("dp={0} does not divide the global batch {1}", mesh.dp,
                         globalBatch);
  if (mesh.dp > 1 && !isBatchSplittable())
    return llvm::formatv("dp={0} splits the batch, which {1}", mesh.dp,
                         describeBatchBarrier());
  if (options.microbatchIsModelBatch &&
      globalBatch % (mesh.dp * model.batchSize) != 0)
    return llvm::formatv("the global batch {0} is not a whole number of "
                         "microbatches of the model's batch {1} on each of "
                         "dp={2} replicas",
                         globalBatch, model.batchSize, mesh.dp);
  return "";
}

std::vector<DeviceMesh>
AutoParallelPlanner::enumerateMeshes(int64_t numDevices,
                                     const MeshPins &pins) const {
  std::vector<DeviceMesh> meshes;
  for (int64_t tp = 1; tp <= numDevices; ++tp) {
    if (numDevices % tp != 0)
      continue;
    if (pins.tp ? *pins.tp != tp
                : tp > target.devicesPerNode || target.devicesPerNode % tp)
      continue;
    for (int64_t pp = 1; pp <= numDevices / tp; ++pp) {
      if ((numDevices / tp) % pp != 0 || (pins.pp && *pins.pp != pp))
        continue;
      int64_t dp = numDevices / (tp * pp);
      if (pins.dp && *pins.dp != dp)
        continue;
      meshes.push_back({pp, tp, dp});
    }
  }
  return meshes;
}

MeshSearch AutoParallelPlanner::beginMesh(const DeviceMesh &mesh,
                                          const MeshPins &pins) const {
  MeshSearch search;
  search.mesh = mesh;
  search.invalidReason = invalidReason(mesh);
  search.replicaBatch = globalBatch / mesh.dp;
  search.best.resize(schedules.size());
  search.runs.assign(schedules.size(), false);
  search.bounded.assign(schedules.size(), false);
  if (!search.invalidReason.empty())
    return search;
  int64_t replicaBatch = search.replicaBatch;
  // A pinned count is tried whatever the search's bound on counts.
  int64_t maxMicrobatches =
      pins.microbatches || options.microbatchIsModelBatch
          ? replicaBatch
          : std::min(replicaBatch, options.maxMicrobatches);
  for (int64_t microbatches = 1; microbatches <= maxMicrobatches;
       ++microbatches) {
    if (replicaBatch % microbatches != 0 ||
        (pins.microbatches && *pins.microbatches != microbatches))
      continue;
    if (options.microbatchIsModelBatch &&
        replicaBatch / microbatches != model.batchSize)
      continue;
    if (microbatches > 1 && !isBatchSplittable())
      break;
    search.counts.push_back(microbatches);
  }
  // A training step tries the most microbatches (the smallest bubble) first,
  // so that the counts that cannot beat it are bounded out unevaluated.
  if (options.training.enabled)
    std::reverse(search.counts.begin(), search.counts.end());
  return search;
}

void AutoParallelPlanner::searchSchedule(MeshSearch &search, size_t rank,
                                         std::optional<double> incumbent) {
  const DeviceMesh &mesh = search.mesh;
  const ScheduleChoice &choice = schedules[rank];
  if (!search.invalidReason.empty() || !isScheduleWeighed(mesh, choice))
    return;
  std::optional<Evaluation> &current = search.best[rank];
  // The ZeRO stages under which a count did not fit. A schedule beside the
  // first is not weighed under them at fewer microbatches: each is larger,
  // and the activations a device holds, the microbatches held times their
  // size, do not shrink (1F1B holds min(m, p - s), GPipe m, interleaved at
  // most m V), so neither does any split's memory.
  llvm::SmallVector<ZeroStage, 3> tooLarge;
  for (int64_t microbatches : search.counts) {
    // Counts the schedule cannot run (interleaved: not a multiple of pp)
    // are not tried.
    llvm::Expected<PipelineSchedule> schedule =
        buildSchedule(mesh, microbatches, choice);
    if (!schedule) {
      llvm::consumeError(schedule.takeError());
      continue;
    }
    search.runs[rank] = true;
    std::optional<double> bound = search.bestStepTime;
    if (incumbent && (!bound || *incumbent < *bound))
      bound = incumbent;
    if (options.training.enabled && bound &&
        getStepLowerBound(mesh, *schedule) > *bound * (1 + 1e-9)) {
      search.bounded[rank] = true;
      continue;
    }
    auto consider = [&](Evaluation evaluation) {
      evaluation.scheduleRank = static_cast<int64_t>(rank);
      if (evaluation.feasible &&
          (!search.bestStepTime || evaluation.stepTime < *search.bestStepTime))
        search.bestStepTime = evaluation.stepTime;
      if (!current || isBetter(evaluation, *current))
        current = std::move(evaluation);
    };
    for (ZeroStage zero : getZeroStages(mesh)) {
      if (llvm::is_contained(tooLarge, zero))
        continue;
      // Once the mesh runs, what does not fit loses whatever it overflows
      // by: a training search does not work out by how much.
      bool explain = !options.training.enabled || !search.bestStepTime;
      Evaluation evaluation = evaluate(mesh, *schedule, zero, explain);
      if (rank > 0 && options.training.enabled && !evaluation.feasible)
        tooLarge.push_back(zero);
      // Sharding only to fit: the whole state comes first, and when it
      // fits no stage is tried.
      bool wholeStateFits = options.training.zeroOnlyToFit &&
                            zero == ZeroStage::None && evaluation.feasible;
      // ZeRO 1 costs what ZeRO 2 does and holds more: the split ZeRO 2
      // finds is ZeRO 1's too when it fits with whole gradients.
      std::optional<Evaluation> wholeGradients;
      if (zero == ZeroStage::Gradients && !options.training.zero)
        wholeGradients = withWholeGradients(evaluation);
      consider(std::move(evaluation));
      if (wholeGradients)
        consider(std::move(*wholeGradients));
      if (wholeStateFits)
        break;
    }
  }
}

Evaluation AutoParallelPlanner::finishMesh(MeshSearch &search) const {
  Evaluation best;
  best.mesh = search.mesh;
  best.invalidReason = search.invalidReason;
  if (!best.invalidReason.empty())
    return best;
  std::optional<size_t> bestRank;
  for (size_t rank = 0; rank < schedules.size(); ++rank)
    if (search.best[rank] &&
        (!bestRank || isBetter(*search.best[rank], *search.best[*bestRank])))
      bestRank = rank;
  if (!bestRank) {
    bool interleavedOnly =
        llvm::all_of(schedules, [](const ScheduleChoice &choice) {
          return choice.kind == ScheduleKind::Interleaved;
        });
    best.invalidReason =
        interleavedOnly
            ? llvm::formatv("no multiple of pp={0} microbatches (the "
                            "interleaved schedule's groups) divides the "
                            "replica batch {1}",
                            search.mesh.pp, search.replicaBatch)
                  .str()
            : llvm::formatv("no microbatch count divides the replica batch "
                            "{0}",
                            search.replicaBatch)
                  .str();
    return best;
  }
  best = std::move(*search.best[*bestRank]);
  for (size_t rank = 0; rank < schedules.size(); ++rank) {
    if (rank == *bestRank)
      continue;
    if (search.best[rank])
      best.otherSchedules.push_back(std::move(*search.best[rank]));
    else if (search.runs[rank] && search.bounded[rank])
      best.boundedSchedules.push_back(schedules[rank]);
  }
  return best;
}

std::vector<Evaluation> AutoParallelPlanner::searchConfigurations(
    int64_t numDevices, const MeshPins &pins, ProgressReporter *reporter) {
  std::vector<DeviceMesh> meshes = enumerateMeshes(numDevices, pins);
  std::vector<MeshSearch> searches;
  for (const DeviceMesh &mesh : meshes)
    searches.push_back(beginMesh(mesh, pins));
  // Each mesh under the first schedule, bounded by its own best (each
  // mesh's best is exact under it); then under the others, bounded by the
  // best of any mesh, since only a step faster than that can be chosen.
  {
    ProgressStep progress =
        beginProgress(reporter, "planning for " + devicesText(numDevices),
                      static_cast<int64_t>(meshes.size()), "meshes");
    for (MeshSearch &search : searches) {
      searchSchedule(search, 0, std::nullopt);
      progress.advance();
    }
  }
  if (schedules.size() > 1) {
    ProgressStep progress = beginProgress(
        reporter, "weighing the other schedules for " + devicesText(numDevices),
        static_cast<int64_t>(meshes.size()), "meshes");
    std::optional<double> incumbent;
    for (const MeshSearch &search : searches)
      if (search.bestStepTime &&
          (!incumbent || *search.bestStepTime < *incumbent))
        incumbent = search.bestStepTime;
    for (MeshSearch &search : searches) {
      for (size_t rank = 1; rank < schedules.size(); ++rank) {
        searchSchedule(search, rank, incumbent);
        if (search.bestStepTime &&
            (!incumbent || *search.bestStepTime < *incumbent))
          incumbent = search.bestStepTime;
      }
      progress.advance();
    }
  }
  std::vector<Evaluation> evaluations;
  for (MeshSearch &search : searches)
    evaluations.push_back(finishMesh(search));
  return evaluations;
}

LogicalResult AutoParallelPlanner::checkPins(int64_t numDevices) {
  struct Pin {
    const char *flag;
    std::optional<int64_t> value;
  };
  for (Pin pin :
       {Pin{"pp", options.pipelineStages}, Pin{"tp", options.tensorParallel},
        Pin{"dp", options.dataParallel},
        Pin{"microbatches", options.microbatches}}) {
    if (!pin.value)
      continue;
    if (llvm::StringRef(pin.flag) != "microbatches" &&
        numDevices % *pin.value != 0)
      return emitError() << "--" << pin.flag << "=" << *pin.value
                         << " does not divide the " << devicesText(numDevices);
  }
  int64_t pinned = options.pipelineStages.value_or(1) *
                   options.tensorParallel.value_or(1) *
                   options.dataParallel.value_or(1);
  if (numDevices % pinned != 0 ||
      (options.pipelineStages && options.tensorParallel &&
       options.dataParallel && pinned != numDevices))
    return emitError() << "pp=" << options.pipelineStages.value_or(1)
                       << " x tp=" << options.tensorParallel.value_or(1)
                       << " x dp=" << options.dataParallel.value_or(1)
                       << " does not make the " << devicesText(numDevices);
  if (globalBatch < 1)
    return emitError() << "the global batch must be positive, got "
                       << globalBatch;
  if (options.dataParallel && globalBatch % *options.dataParallel != 0)
    return emitError() << "--dp=" << *options.dataParallel
                       << " does not divide the global batch " << globalBatch;
  if (options.microbatches) {
    int64_t replicas = options.dataParallel.value_or(1);
    if (globalBatch % (replicas * *options.microbatches) != 0)
      return emitError() << "--microbatches=" << *options.microbatches
                         << " does not divide the batch of a replica ("
                         << globalBatch << " samples over " << replicas
                         << " replica" << (replicas == 1 ? "" : "s") << ")";
  }
  auto numSegments = static_cast<int64_t>(model.segments.size());
  if (options.pipelineStages && *options.pipelineStages > numSegments)
    return emitError() << "--pp=" << *options.pipelineStages << " exceeds the "
                       << numSegments << " segments the model cuts into";
  // A pinned schedule must run the pinned stages and microbatches (a
  // searched one is weighed where it can).
  ScheduleChoice pinnedSchedule = options.getSchedule();
  if (options.pipelineStages &&
      *options.pipelineStages * pinnedSchedule.virtualStages > numSegments)
    return emitError() << "--schedule=" << pinnedSchedule.str()
                       << " with --pp=" << *options.pipelineStages << " needs "
                       << *options.pipelineStages * pinnedSchedule.virtualStages
                       << " segments, but the model cuts into " << numSegments;
  if (options.pipelineStages && options.microbatches)
    if (llvm::Expected<PipelineSchedule> schedule =
            buildSchedule({*options.pipelineStages, 1, 1},
                          *options.microbatches, pinnedSchedule);
        !schedule)
      return emitError() << "--schedule=" << pinnedSchedule.str() << ": "
                         << llvm::toString(schedule.takeError());
  return success();
}

void AutoParallelPlanner::emitCannotFit(
    const std::vector<Evaluation> &evaluations, int64_t numDevices) {
  const Evaluation *closest = nullptr;
  for (const Evaluation &evaluation : evaluations)
    if (evaluation.invalidReason.empty() && evaluation.memorySplit &&
        (!closest || evaluation.overflowBytes < closest->overflowBytes))
      closest = &evaluation;

  InFlightDiagnostic diagnostic = emitError();
  if (!closest) {
    bool pinned = options.pipelineStages || options.tensorParallel ||
                  options.dataParallel || options.microbatches;
    diagnostic << "no mesh of " << devicesText(numDevices)
               << (pinned ? " with the pinned options" : "")
               << " can run the model";
    for (const Evaluation &evaluation : evaluations)
      if (!evaluation.invalidReason.empty())
        diagnostic.attachNote()
            << "pp=" << evaluation.mesh.pp << " tp=" << evaluation.mesh.tp
            << " dp=" << evaluation.mesh.dp << ": " << evaluation.invalidReason;
    return;
  }

  const StageSplit &split = *closest->memorySplit;
  int64_t stage = split.largestStage();
  int64_t needed = split.stages[stage].memory.total();
  SmallVector<int64_t> ranks;
  for (int64_t shard = 0; shard < closest->mesh.tp; ++shard)
    ranks.push_back(
        closest->mesh.rank(getDeviceStage(closest->mesh, stage), 0, shard));
  diagnostic << "the model does not fit on " << devicesText(numDevices)
             << " of " << target.name
             << ": with the least memory per device (pp=" << closest->mesh.pp
             << ", tp=" << closest->mesh.tp << ", dp=" << closest->mesh.dp
             << ", microbatches=" << closest->microbatches
             << (options.training.enabled
                     ? (", zero=" + stringifyZeroStage(closest->zero)).str()
                     : std::string())
             << "), stage " << stage << " (rank"
             << (ranks.size() > 1 ? "s " : " ") << formatRanks(ranks)
             << ") needs " << needed << " bytes (" << formatBytes(needed)
             << ") per device, " << closest->overflowBytes << " bytes ("
             << formatBytes(closest->overflowBytes) << ") over the "
             << usableMemory << " usable (" << formatBytes(usableMemory) << ")";

  auto describe = [&](const Evaluation &evaluation) {
    std::string text =
        llvm::formatv("pp={0}, tp={1}, dp={2}", evaluation.mesh.pp,
                      evaluation.mesh.tp, evaluation.mesh.dp);
    if (!options.training.enabled)
      return text;
    int64_t recomputed = 0;
    for (const StageRange &stage : evaluation.split.stages)
      recomputed += stage.numRecomputed;
    return text + llvm::formatv(", zero={0}, {1} of {2} segments recompute",
                                stringifyZeroStage(evaluation.zero), recomputed,
                                model.segments.size())
                      .str();
  };
  auto bestOf =
      [&](const std::vector<Evaluation> &candidates) -> const Evaluation * {
    const Evaluation *best = nullptr;
    for (const Evaluation &candidate : candidates)
      if (candidate.feasible && (!best || isBetter(candidate, *best)))
        best = &candidate;
    return best;
  };
  bool pinned = options.pipelineStages || options.tensorParallel ||
                options.dataParallel || options.microbatches;
  if (options.training.zero || options.training.recompute) {
    // The same mesh pins, with the ZeRO stage and recomputation left to the
    // search.
    PlanOptions relaxed = options;
    relaxed.training.zero.reset();
    relaxed.training.recompute.reset();
    relaxed.progress = nullptr;
    AutoParallelPlanner planner(model, target, relaxed);
    if (succeeded(planner.initialize())) {
      std::vector<Evaluation> searched = planner.searchConfigurations(
          numDevices, {options.pipelineStages, options.tensorParallel,
                       options.dataParallel, options.microbatches});
      if (const Evaluation *fit = bestOf(searched)) {
        diagnostic << "; with the ZeRO stage and recomputation searched it "
                      "fits as "
                   << describe(*fit);
        return;
      }
    }
  }
  if (pinned) {
    std::vector<Evaluation> free = searchConfigurations(numDevices, {});
    if (const Evaluation *fit = bestOf(free)) {
      diagnostic << "; without the pinned options it fits as "
                 << describe(*fit);
      return;
    }
  }
  constexpr int64_t kMaxGrowth = 1 << 12;
  for (int64_t factor = 2; factor <= kMaxGrowth; factor *= 2) {
    std::vector<Evaluation> larger =
        searchConfigurations(numDevices * factor, {});
    if (const Evaluation *fit = bestOf(larger)) {
      diagnostic << "; it fits on " << devicesText(numDevices * factor) << " ("
                 << describe(*fit) << ")";
      return;
    }
    bool anyValid = llvm::any_of(larger, [](const Evaluation &evaluation) {
      return evaluation.invalidReason.empty();
    });
    if (!anyValid)
      break;
  }
  diagnostic << "; no larger cluster of this target fits it either (a stage "
                "holds at least one segment)";
}

FailureOr<Plan> AutoParallelPlanner::run() {
  int64_t numDevices =
      options.numDevices > 0 ? options.numDevices : target.numDevices;
  if (numDevices < 1)
    return emitError() << "planning needs at least one device, got "
                       << numDevices;
  if (failed(checkPins(numDevices)))
    return failure();
  if (!isBatchSplittable() && (options.dataParallel.value_or(1) > 1 ||
                               options.microbatches.value_or(1) > 1))
    return emitError() << "the batch cannot be split: "
                       << describeBatchBarrier();

  MeshPins pins{options.pipelineStages, options.tensorParallel,
                options.dataParallel, options.microbatches};
  std::vector<Evaluation> evaluations =
      searchConfigurations(numDevices, pins, options.progress);
  if (options.progress)
    options.progress->remark(llvm::formatv(
        "planned @{0}: {1} ops in {2} segments ({3} distinct), {4} meshes "
        "weighed, {5} (class, tp, microbatch size) sharding searches",
        model.function.getName(), model.ops.size(), model.segments.size(),
        model.classes.size(), evaluations.size(), classCache.size()));
  if (evaluations.empty())
    return emitError() << "no mesh of " << devicesText(numDevices)
                       << " matches the pinned options";
  const Evaluation *best = nullptr;
  for (const Evaluation &evaluation : evaluations)
    if (evaluation.feasible && (!best || isBetter(evaluation, *best)))
      best = &evaluation;
  if (!best) {
    emitCannotFit(evaluations, numDevices);
    return failure();
  }
  return buildPlan(*best, evaluations, numDevices);
}

//===----------------------------------------------------------------------===//
// Building the plan
//===----------------------------------------------------------------------===//

/// The weight (or window of a weight) an operand reads, without its layout;
/// none for constants and computed values.
static std::optional<PlanWeight>
describeWeight(Value operand, const CostOptions &costOptions) {
  Operation *def = getBufferRoot(operand).getDefiningOp();
  PlanWeight entry;
  if (auto weight = dyn_cast_or_null<WeightOp>(def)) {
    entry.name = weight.getName().str();
  } else if (auto slice = dyn_cast_or_null<WeightSliceOp>(def)) {
    entry.name = slice.getName().str();
    entry.windowStarts.assign(slice.getStarts().begin(),
                              slice.getStarts().end());
  } else {
    return std::nullopt;
  }
  auto type = cast<RankedTensorType>(operand.getType());
  entry.shape.assign(type.getShape().begin(), type.getShape().end());
  entry.bytes = getHeldTensorBytes(type, costOptions);
  return entry;
}

std::optional<TrainingStepCost>
AutoParallelPlanner::makeTrainingCost(const Evaluation &evaluation) const {
  if (!options.training.enabled)
    return std::nullopt;
  return TrainingStepCost(target, options.training.optimizer, evaluation.zero,
                          getDataParallelGroup(evaluation.mesh));
}

PlanStageUpdate
AutoParallelPlanner::describeUpdate(const Evaluation &best, int64_t stageIndex,
                                    const TrainingStepCost &training) const {
  const StageRange &range = best.split.stages[stageIndex];
  const DeviceMesh &mesh = best.mesh;
  PlanStageUpdate update;
  update.trainable = range.trainable;
  update.reductionKind = best.zero == ZeroStage::None
                             ? CollectiveKind::AllReduce
                             : CollectiveKind::ReduceScatter;
  for (int64_t replica = 0; replica < mesh.dp; ++replica)
    update.group.push_back(
        mesh.rank(getDeviceStage(mesh, stageIndex), replica, 0));
  update.crossesNodes = training.getGroup().perNode < mesh.dp;
  update.reduction = reduceGradients(range.trainable.bytes, range.backwardTime,
                                     best.zero, training.getGroup(), target);
  update.cost = range.update;
  return update;
}

PlanTraining AutoParallelPlanner::describeTraining(const Plan &plan,
                                                   const Evaluation &best) {
  PlanTraining training;
  training.optimizer = options.training.optimizer;
  training.precision = options.costOptions.computePrecision;
  training.zero = best.zero;
  training.zeroSearched = !options.training.zero;
  training.recomputeSearched = !options.training.recompute;
  // The model's arithmetic per microbatch, replicated ops once, times the
  // microbatches of every replica.
  double scale = static_cast<double>(best.microbatches * best.mesh.dp);
  for (const PlanSegment &segment : plan.segments) {
    const SegmentShardingModel &classModel = classModels[segment.segmentClass];
    double forward = 0, backward = 0;
    for (const SegmentOp &op : classModel.ops) {
      double flops =
          static_cast<double>(op.cost.flops) *
          (op.scalesWithBatch ? batchScale(best.microbatchSize) : 1.0);
      forward += flops;
      backward += flops * getBackwardFactors(op.usesMatrixUnits).flops;
    }
    training.forwardFlops += scale * forward;
    training.backwardFlops += scale * backward;
    if (segment.recompute) {
      training.recomputeFlops += scale * forward;
      ++training.recomputedSegments;
      training.joinedSegments += segment.recomputeJoined;
    }
  }
  return training;
}

void AutoParallelPlanner::addStage(Plan &plan, const Evaluation &best,
                                   int64_t stageIndex) {
  const StageRange &range = best.split.stages[stageIndex];
  const DeviceMesh &mesh = best.mesh;
  PlanStage stage;
  stage.index = stageIndex;
  stage.firstSegment = range.firstSegment;
  stage.lastSegment = range.lastSegment;
  stage.firstOp = model.segments[range.firstSegment].firstOp;
  stage.lastOp = model.segments[range.lastSegment].lastOp;
  stage.firstOpName = opNames[stage.firstOp];
  stage.lastOpName = opNames[stage.lastOp];
  int64_t device = getDeviceStage(mesh, stageIndex);
  int64_t nextDevice = getDeviceStage(mesh, stageIndex + 1);
  for (int64_t shard = 0; shard < mesh.tp; ++shard)
    stage.ranks.push_back(mesh.rank(device, 0, shard));
  stage.sendTime = range.sendTime - range.backwardSendTime;
  stage.memory = range.memory;
  stage.leanSegments = range.numLean();
  std::optional<TrainingStepCost> training = makeTrainingCost(best);
  if (training) {
    stage.leanSegments = 0;
    stage.backwardSendTime = range.backwardSendTime;
    stage.recomputedSegments = range.numRecomputed;
    stage.update = describeUpdate(best, stageIndex, *training);
  }

  bool tpCrosses = tpGroupCrossesNodes(mesh.tp);
  // A collective of the stage's tensor-parallel group, needed by op `op`.
  auto groupCommunication = [&](const SegmentCollective &collective,
                                const std::string &op) {
    PlanCommunication communication;
    communication.kind = collective.kind;
    communication.stage = stageIndex;
    communication.op = op;
    communication.group = stage.ranks;
    communication.instances = mesh.dp;
    communication.bytes = collective.bytes;
    communication.time = collective.time;
    communication.crossesNodes = tpCrosses;
    return communication;
  };
  for (int64_t segmentIndex = range.firstSegment;
       segmentIndex <= range.lastSegment; ++segmentIndex) {
    const ModelSegment &segment = model.segments[segmentIndex];
    const ClassSharding &classSharding =
        getClassSharding(segment.segmentClass, mesh.tp, best.microbatchSize);
    int64_t level = range.level[segmentIndex - range.firstSegment];
    TrainingChoice choice{level, false};
    if (training)
      choice = getTrainingCandidates(segment.segmentClass, mesh.tp,
                                     best.microbatchSize, *training)
                   .choices[level];
    const SegmentSharding &sharding = classSharding.candidates[choice.sharding];
    const SegmentShardingModel &classModel = classModels[segment.segmentClass];
    // The share of the ops' data that the stage's footprint keeps out of
    // the caches takes the streamed rates.
    double missTime = range.missFraction * sharding.cost.missTime;
    stage.computeTime += sharding.cost.computeTime + missTime;
    stage.collectiveTime += sharding.cost.collectiveTime;
    plan.shardingExact &= sharding.exact;
    if (training) {
      stage.leanSegments += choice.sharding > 0;
      stage.recomputeTime +=
          choice.recompute ? sharding.cost.time() + missTime : 0.0;
      stage.backwardComputeTime +=
          sharding.cost.backwardComputeTime +
          range.missFraction * sharding.cost.backwardMissTime;
      stage.backwardCollectiveTime += sharding.cost.backwardCollectiveTime;
    }

    PlanSegment summary;
    summary.index = segmentIndex;
    summary.segmentClass = segment.segmentClass;
    summary.stage = stageIndex;
    summary.firstOp = segment.firstOp;
    summary.lastOp = segment.lastOp;
    summary.firstOpName = opNames[segment.firstOp];
    summary.lastOpName = opNames[segment.lastOp];
    summary.lean = choice.sharding > 0;
    summary.computeTime = sharding.cost.computeTime + missTime;
    summary.collectiveTime = sharding.cost.collectiveTime;
    summary.recompute = choice.recompute;
    // The stage's last segment keeps what it sends: the next stage's
    // backward reads it there.
    summary.recomputeJoined =
        choice.joined && segmentIndex != range.lastSegment;
    summary.backwardComputeTime =
        sharding.cost.backwardComputeTime +
        range.missFraction * sharding.cost.backwardMissTime;
    summary.backwardCollectiveTime = sharding.cost.backwardCollectiveTime;

    // Per op: stage, loop and weights.
    for (int64_t step = 0; step < segment.numOps(); ++step) {
      int64_t opIndex = segment.firstOp + step;
      const ShardingStrategy &strategy =
          classModel.ops[step].strategies[sharding.assignment[step]];
      plan.opStage[opIndex] = stageIndex;
      plan.opTensorParallelLoop[opIndex] = strategy.loop;
      if (strategy.loop >= 0)
        ++summary.splitOps;
      Operation *op = model.ops[opIndex];
      for (auto [operandIndex, operand] : llvm::enumerate(op->getOperands())) {
        std::optional<PlanWeight> entry =
            describeWeight(operand, options.costOptions);
        if (!entry)
          continue;
        const ValueSharding &layout = strategy.operands[operandIndex];
        entry->stage = stageIndex;
        entry->segment = segmentIndex;
        if (layout.isSplit())
          entry->splitDim = layout.dim;
        entry->bytesPerDevice =
            layout.isSplit() ? entry->bytes / mesh.tp : entry->bytes;
        std::string key =
            llvm::formatv("{0}@{1}:{2}:{3}", entry->name,
                          llvm::make_range(entry->windowStarts.begin(),
                                           entry->windowStarts.end()),
                          entry->splitDim.value_or(-1), entry->stage);
        if (weightKeys.insert(key).second)
          plan.weights.push_back(std::move(*entry));
      }
    }

    // Collectives and the per-microbatch schedule, in program order.
    auto producerName = [&](int64_t value) -> std::string {
      const SegmentValue &info = classModel.values[value];
      if (info.definition >= 0)
        return opNames[segment.firstOp + info.definition];
      // Inputs come first among a segment's values, in the same order.
      Value input = segment.inputs[value];
      if (Operation *def = input.getDefiningOp())
        if (auto it = model.opIndex.find(def); it != model.opIndex.end())
          return opNames[it->second];
      return "argument";
    };
    PlanStageEvent compute;
    auto flushCompute = [&]() {
      if (compute.duration > 0)
        stage.schedule.push_back(compute);
      compute = PlanStageEvent();
    };
    size_t next = 0;
    const auto &collectives = sharding.cost.collectives;
    for (int64_t step = 0; step <= segment.numOps(); ++step) {
      for (; next < collectives.size() && collectives[next].step == step;
           ++next) {
        const SegmentCollective &collective = collectives[next];
        flushCompute();
        PlanCommunication communication = groupCommunication(
            collective, opNames[segment.firstOp +
                                std::min<int64_t>(step, segment.numOps() - 1)]);
        communication.producer = producerName(collective.value);
        plan.communications.push_back(communication);
        if (training) {
          // The backward answers it with its conjugate.
          communication.kind = getConjugateCollective(collective.kind);
          communication.time = collectiveTime(
              communication.kind, collective.bytes, mesh.tp, tpCrosses, target);
          communication.phase = PipelinePhase::Backward;
          plan.communications.push_back(communication);
        }
        PlanStageEvent event;
        event.kind = PlanStageEvent::Kind::Collective;
        event.collective = collective.kind;
        event.name = communication.producer;
        event.duration = collective.time;
        stage.schedule.push_back(event);
      }
      if (step == segment.numOps())
        break;
      if (compute.duration == 0 && compute.name.empty())
        compute.name = opNames[segment.firstOp + step];
      compute.duration += sharding.cost.opTimes[step] +
                          range.missFraction * sharding.cost.opMissTimes[step];
    }
    flushCompute();
    // The gradients of whole parameters that split ops read.
    for (const SegmentCollective &reduction :
         sharding.cost.gradientReductions) {
      PlanCommunication communication = groupCommunication(
          reduction, opNames[segment.firstOp + reduction.step]);
      communication.phase = PipelinePhase::Backward;
      communication.producer = communication.op;
      Value parameter = model.ops[segment.firstOp + reduction.step]->getOperand(
          reduction.value);
      if (std::optional<PlanWeight> weight =
              describeWeight(parameter, options.costOptions))
        communication.parameter = weight->name;
      plan.communications.push_back(communication);
    }
    plan.segments.push_back(std::move(summary));
  }

  if (stageIndex + 1 < best.schedule.getNumVirtualStages()) {
    const ModelSegment &last = model.segments[range.lastSegment];
    BoundaryBytes boundary =
        getBoundaryBytes(last, mesh.tp, best.microbatchSize);
    int64_t bytes = boundary.whole;
    bool crosses =
        buildSplitOptions(mesh, best.schedule).sendCrossesNodes[stageIndex];
    bool scatterGather = false;
    boundarySendTime(boundary, crosses, mesh.tp, &scatterGather);
    PlanCommunication send;
    send.kind = CollectiveKind::SendRecv;
    send.stage = stageIndex;
    send.op = stage.lastOpName;
    send.producer = stage.lastOpName;
    send.group = {mesh.rank(device, 0, 0), mesh.rank(nextDevice, 0, 0)};
    send.instances = mesh.tp * mesh.dp;
    send.bytes = boundary.splitShare +
                 (scatterGather ? (bytes + mesh.tp - 1) / mesh.tp : bytes);
    send.time = collectiveTime(CollectiveKind::SendRecv, send.bytes, 2, crosses,
                               target);
    send.crossesNodes = crosses;
    plan.communications.push_back(send);
    if (scatterGather) {
      PlanCommunication gather;
      gather.kind = CollectiveKind::AllGather;
      gather.stage = stageIndex + 1;
      gather.op = opNames[model.segments[range.lastSegment + 1].firstOp];
      gather.producer = stage.lastOpName;
      for (int64_t shard = 0; shard < mesh.tp; ++shard)
        gather.group.push_back(mesh.rank(nextDevice, 0, shard));
      gather.instances = mesh.dp;
      gather.bytes = bytes;
      gather.time = stage.sendTime - send.time;
      gather.crossesNodes = tpCrosses;
      plan.communications.push_back(gather);
      if (training) {
        // The gradients come back the same way.
        gather.phase = PipelinePhase::Backward;
        gather.stage = stageIndex;
        gather.op = stage.lastOpName;
        gather.group = stage.ranks;
        plan.communications.push_back(gather);
      }
    }
    if (training) {
      send.phase = PipelinePhase::Backward;
      send.stage = stageIndex + 1;
      send.op = opNames[model.segments[range.lastSegment + 1].firstOp];
      std::swap(send.group[0], send.group[1]);
      plan.communications.push_back(send);
    }
    PlanStageEvent event;
    event.kind = PlanStageEvent::Kind::Send;
    event.name = "send to stage " + std::to_string(stageIndex + 1) +
                 (scatterGather ? " (sliced, then all-gathered)" : "");
    event.duration = stage.sendTime;
    stage.schedule.push_back(event);
  }
  plan.stages.push_back(std::move(stage));
}

Plan AutoParallelPlanner::buildPlan(const Evaluation &best,
                                    const std::vector<Evaluation> &evaluations,
                                    int64_t numDevices) {
  Plan plan;
  plan.functionName = model.function.getName().str();
  plan.targetName = target.name;
  plan.numDevices = numDevices;
  plan.devicesPerNode = target.devicesPerNode;
  plan.memoryCapacityBytes = target.device.memoryBytes;
  plan.usableMemoryBytes = usableMemory;
  plan.mesh = best.mesh;
  plan.microbatches = best.microbatches;
  plan.microbatchSize = best.microbatchSize;
  plan.globalBatch = globalBatch;
  plan.objective = options.objective;
  plan.sequenceParallel = options.sequenceParallel;
  plan.schedule = best.schedule;
  plan.stepTime = best.stepTime;
  plan.latency = best.latency;
  plan.throughput = best.throughput;
  plan.peakMemoryBytes = best.peakMemory;
  plan.numOps = static_cast<int64_t>(model.ops.size());
  plan.numSegments = static_cast<int64_t>(model.segments.size());
  plan.numDistinctSegments = static_cast<int64_t>(model.classes.size());
  for (const ModelSegment &segment : model.segments)
    plan.segmentClasses.push_back(segment.segmentClass);
  plan.opStage.assign(model.ops.size(), 0);
  plan.opTensorParallelLoop.assign(model.ops.size(), -1);

  for (int64_t stage = 0; stage < best.schedule.getNumVirtualStages(); ++stage)
    addStage(plan, best, stage);

  std::vector<PhaseTimes> times;
  for (const PlanStage &stage : plan.stages)
    times.push_back(stage.phaseTimes());
  plan.bubbleFraction = plan.schedule.bubbleFraction(times, plan.stepTime);
  if (options.training.enabled)
    plan.training = describeTraining(plan, best);

  // Best first, then the ones that did not fit, then the ones the bound
  // ruled out, then the invalid.
  enum Rank { Chosen, Fits, DoesNotFit, Bounded, Invalid };
  std::vector<std::pair<Rank, PlanAlternative>> alternatives;
  auto add = [&](const Evaluation &evaluation, bool chosen) {
    PlanAlternative alternative;
    alternative.mesh = evaluation.mesh;
    alternative.microbatches = evaluation.microbatches;
    alternative.schedule = evaluation.schedule.getChoice();
    alternative.feasible = evaluation.feasible;
    alternative.throughput = evaluation.throughput;
    alternative.stepTime = evaluation.stepTime;
    alternative.latency = evaluation.latency;
    alternative.peakMemoryBytes = evaluation.peakMemory;
    Rank rank = Fits;
    if (chosen) {
      alternative.verdict = "chosen";
      rank = Chosen;
    } else if (!evaluation.invalidReason.empty()) {
      alternative.verdict = "invalid: " + evaluation.invalidReason;
      alternative.microbatches = 0;
      alternative.schedule.reset();
      rank = Invalid;
    } else if (!evaluation.feasible) {
      rank = DoesNotFit;
      if (evaluation.memorySplit) {
        const StageSplit &split = *evaluation.memorySplit;
        int64_t stage = split.largestStage();
        int64_t needed = split.stages[stage].memory.total();
        alternative.peakMemoryBytes = needed;
        alternative.verdict = llvm::formatv(
            "does not fit: stage {0} needs {1} per device, {2} over the {3} "
            "usable",
            stage, formatBytes(needed), formatBytes(evaluation.overflowBytes),
            formatBytes(usableMemory));
      } else {
        alternative.verdict = "does not fit";
      }
    } else if (options.objective == PlanObjective::Throughput) {
      alternative.verdict = llvm::formatv(
          "slower: {0:f1}% less throughput",
          100.0 * (1.0 - evaluation.throughput / best.throughput));
    } else {
      alternative.verdict =
          llvm::formatv("slower: {0:f1}% more latency",
                        100.0 * (evaluation.latency / best.latency - 1.0));
    }
    alternatives.emplace_back(rank, std::move(alternative));
  };
  for (const Evaluation &evaluation : evaluations)
    add(evaluation, &evaluation == &best);
  // The chosen mesh under the schedules that lost: their best, or that no
  // microbatch count of theirs could beat the chosen step.
  for (const Evaluation &evaluation : best.otherSchedules)
    add(evaluation, false);
  for (const ScheduleChoice &choice : best.boundedSchedules) {
    PlanAlternative alternative;
    alternative.mesh = best.mesh;
    alternative.schedule = choice;
    alternative.verdict = "slower: no microbatch count can beat the chosen "
                          "step (its lower bound is above it)";
    alternatives.emplace_back(Bounded, std::move(alternative));
  }
  std::stable_sort(alternatives.begin(), alternatives.end(),
                   [&](const auto &a, const auto &b) {
                     if (a.first != b.first)
                       return a.first < b.first;
                     if (a.first == Fits)
                       return options.objective == PlanObjective::Throughput
                                  ? a.second.throughput > b.second.throughput
                                  : a.second.latency < b.second.latency;
                     return false;
                   });
  for (auto &entry : alternatives)
    plan.alternatives.push_back(std::move(entry.second));
  return plan;
}

//===----------------------------------------------------------------------===//
// Entry points
//===----------------------------------------------------------------------===//

static func::FuncOp lookupFunction(ModuleOp module, llvm::StringRef name) {
  auto function = module.lookupSymbol<func::FuncOp>(name);
  if (!function)
    module.emitError() << "no function '" << name << "' to plan";
  return function;
}

/// Whether plan `a` is better than plan `b` by the objective.
static bool isBetterPlan(const Plan &a, const Plan &b) {
  return a.objective == PlanObjective::Throughput ? a.throughput > b.throughput
                                                  : a.latency < b.latency;
}

/// Plans without sequence parallelism and with it, and keeps the better;
/// the one that fits when only one does. When neither does, reports why
/// the plan without it does not.
static FailureOr<Plan>
planWeighingSequenceParallel(ModuleOp module, const TargetDescription &target,
                             const PlanOptions &options) {
  PlanOptions without = options;
  without.weighSequenceParallel = false;
  without.sequenceParallel = false;
  PlanOptions with = without;
  with.sequenceParallel = true;
  FailureOr<Plan> plain = failure(), parallel = failure();
  {
    // What does not fit is weighed, not reported.
    ScopedDiagnosticHandler quiet(module.getContext(),
                                  [](Diagnostic &) { return success(); });
    plain = planModel(module, target, without);
    with.progress = nullptr;
    parallel = planModel(module, target, with);
  }
  if (failed(plain) && failed(parallel)) {
    without.progress = nullptr;
    (void)planModel(module, target, without);
    return failure();
  }
  FailureOr<Plan> best =
      failed(plain) || (succeeded(parallel) && isBetterPlan(*parallel, *plain))
          ? std::move(parallel)
          : std::move(plain);
  best->sequenceParallelWeighed = true;
  return best;
}

FailureOr<Plan> cleave::planModel(ModuleOp module,
                                  const TargetDescription &target,
                                  const PlanOptions &options) {
  func::FuncOp function = lookupFunction(module, options.functionName);
  if (!function)
    return failure();
  if (target.device.memoryBytes <= 0 || target.devicesPerNode < 1)
    return mlir::emitError(function.getLoc())
           << "target '" << target.name
           << "' has no device memory or node size";
  if (llvm::Error error = validatePlanOptions(options))
    return mlir::emitError(function.getLoc())
           << llvm::toString(std::move(error));
  // Stages asked for need as many segments (a chunk each). A training
  // step's segments are also what recomputes, one by one: it is cut where
  // the fewest activations are live when no point has a single one (a loss
  // whose labels' view lives from the first op to the last).
  int64_t minSegments =
      options.pipelineStages
          ? *options.pipelineStages * options.getSchedule().virtualStages
          : 1;
  if (options.training.enabled)
    minSegments = std::max<int64_t>(minSegments, 2);
  if (options.weighSequenceParallel)
    return planWeighingSequenceParallel(module, target, options);
  FailureOr<SegmentedModel> model = segmentModel(function, minSegments);
  if (failed(model))
    return failure();
  AutoParallelPlanner planner(*model, target, options);
  if (failed(planner.initialize()))
    return failure();
  return planner.run();
}

/// The planned function of `module` cut as the plan cut it; fails, naming
/// both counts, when its ops are not those the plan was made for.
static FailureOr<SegmentedModel> segmentPlanned(ModuleOp module,
                                                const Plan &plan) {
  func::FuncOp function = lookupFunction(module, plan.functionName);
  if (!function)
    return failure();
  FailureOr<SegmentedModel> model = segmentModel(function);
  if (failed(model))
    return failure();
  if (model->ops.size() != plan.opStage.size())
    return mlir::emitError(function.getLoc())
           << "the plan was made for " << plan.opStage.size()
           << " ops, but the function has " << model->ops.size();
  return model;
}

/// Marks the ops of the segments the plan recomputes.
static void markRecomputedSegments(const SegmentedModel &model,
                                   const Plan &plan) {
  for (const PlanSegment &segment : plan.segments)
    if (segment.recompute)
      for (int64_t index = segment.firstOp; index <= segment.lastOp; ++index) {
        setPlannedRecompute(model.ops[index]);
        if (segment.recomputeJoined)
          setRecomputeJoined(model.ops[index]);
      }
}

LogicalResult cleave::annotateRecompute(ModuleOp module, const Plan &plan) {
  FailureOr<SegmentedModel> model = segmentPlanned(module, plan);
  if (failed(model))
    return failure();
  markRecomputedSegments(*model, plan);
  return success();
}

LogicalResult cleave::annotateModule(ModuleOp module, const Plan &plan) {
  FailureOr<SegmentedModel> model = segmentPlanned(module, plan);
  if (failed(model))
    return failure();
  func::FuncOp function = model->function;

  setMesh(module, plan.mesh.shape());
  setMicrobatches(module, plan.microbatches);
  setSchedule(module, plan.schedule.getChoice().str());
  if (plan.training)
    setZeroStage(module, static_cast<int64_t>(plan.training->zero));
  markRecomputedSegments(*model, plan);

  for (auto [index, op] : llvm::enumerate(model->ops)) {
    setStage(op, plan.opStage[index]);
    int64_t tpLoop = plan.opTensorParallelLoop[index];
    setTpLoop(op, tpLoop >= 0 ? std::optional<int64_t>(tpLoop) : std::nullopt);
  }
  // Parameters take the stage of their first user; walking backwards
  // settles a view before the weight it views.
  Block &body = function.getBody().front();
  llvm::DenseMap<Operation *, int64_t> stages;
  for (auto [index, op] : llvm::enumerate(model->ops))
    stages[op] = plan.opStage[index];
  for (Operation &op : llvm::reverse(body.without_terminator())) {
    if (model->opIndex.count(&op))
      continue;
    int64_t stage = -1;
    for (Operation *user : op.getUsers()) {
      Operation *ancestor = body.findAncestorOpInBlock(*user);
      auto it = ancestor ? stages.find(ancestor) : stages.end();
      if (it != stages.end())
        stage = stage < 0 ? it->second : std::min(stage, it->second);
    }
    stage = std::max<int64_t>(stage, 0);
    stages[&op] = stage;
    setStage(&op, stage);
  }
  return success();
}
