//===- StagePartitioner.h - contiguous pipeline stages ----------*- C++ -*-===//
//
// Splits a sequence of segments into pipeline stages by dynamic programming
// over the order: each stage is a contiguous range, the ranges may be
// uneven, and every stage must fit in a device's memory. A stage's time per
// microbatch is the time of its segments plus the send of its last
// segment's outputs to the next stage (in a training step, every phase of a
// microbatch: the backward, with the gradients sent back, and the
// recomputation too; the update, once per step, is costed for each split
// but not balanced).
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_PLAN_STAGEPARTITIONER_H
#define CLEAVE_PLAN_STAGEPARTITIONER_H

#include "cleave/Analysis/Cost/CostModel.h"
#include "cleave/Plan/PipelineSchedule.h"
#include "cleave/Plan/Plan.h"
#include "cleave/Plan/TrainingCost.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

namespace cleave {

/// What a segment adds to a training step besides its forward, per device
/// (all zero for inference).
struct SegmentTrainingCost {
  /// Seconds per microbatch of the recompute and backward phases.
  double recomputeTime = 0;
  double backwardTime = 0;
  /// Its gradients and optimizer state, as ZeRO shards them.
  int64_t gradientBytes = 0;
  int64_t optimizerStateBytes = 0;
  /// What each microbatch keeps for the backward until it runs.
  int64_t savedActivationBytes = 0;
  TrainableParameters trainable;
  /// Whether it recomputes its activations before its backward.
  bool recomputes = false;
};

/// One segment under one sharding, per microbatch and device.
struct SegmentCandidate {
  /// Seconds per microbatch: the forward, and in a training step the
  /// recompute and backward too, with the data in the caches.
  double time = 0;
  int64_t weightBytes = 0;
  int64_t peakActivationBytes = 0;
  int64_t largestMessageBytes = 0;
  SegmentTrainingCost training;
  /// What `time` grows by with all of the data out of the caches
  /// (`SegmentCost::missTime`); the stage adds the share its footprint
  /// makes miss.
  double missTime = 0;

  /// Bytes it holds through a step when `held` microbatches wait for their
  /// backward: what a leaner candidate saves.
  int64_t footprint(int64_t held) const {
    return weightBytes + training.gradientBytes + training.optimizerStateBytes +
           held * training.savedActivationBytes;
  }
};

/// What the stage split needs to know about the segments at one tensor-
/// parallel degree and microbatch size.
struct StageSplitProblem {
  /// Per segment, its shardings (in a training step, each with and without
  /// recomputation) from the fastest to the one of least memory: the lower
  /// convex hull of (time, footprint), so that each step saves bytes at a
  /// higher price in time than the one before. A stage that does not fit
  /// with the fastest moves segments down the list, the cheapest steps
  /// first.
  std::vector<std::vector<SegmentCandidate>> candidates;
  /// Per segment, its class: segments of a class have equal candidates.
  /// Empty: every segment is its own class.
  std::vector<int64_t> segmentClass;
  /// Per segment: per-device bytes of the activations it passes on.
  std::vector<int64_t> outputBytes;
  /// Per-device bytes of the model's inputs (what stage 0 receives).
  int64_t inputBytes = 0;
  /// The caches a device keeps its data in from step to step
  /// (`DeviceCalibration::cacheBytes`; 0: the miss times do not count).
  int64_t cacheBytes = 0;
  /// Per segment: seconds to send its outputs to the next stage inside a
  /// node and across nodes (in a training step, also the seconds the next
  /// stage takes to send their gradients back).
  std::vector<double> sendTimeIntraNode;
  std::vector<double> sendTimeInterNode;

  int64_t numSegments() const {
    return static_cast<int64_t>(candidates.size());
  }
};

/// How to split.
struct StageSplitOptions {
  int64_t numStages = 1;
  /// Per stage but the last: whether its sends cross nodes.
  std::vector<bool> sendCrossesNodes;
  /// The order the stages run the microbatches of a step in, over
  /// `numStages` (virtual) stages: it gives the step time of a split.
  PipelineSchedule schedule;
  /// Microbatches whose inputs a stage buffers at once (the schedule's
  /// `maxActivationsHeld`: one bound for every stage keeps a range's cost
  /// independent of its stage).
  int64_t inFlightMicrobatches = 1;
  /// Per stage, the microbatches whose activations it holds for their
  /// backward (the schedule's `activationsHeld` of its device); empty:
  /// `inFlightMicrobatches` for every stage.
  std::vector<int64_t> heldMicrobatches;
  /// A training step's gradients, optimizer and update; null for inference.
  const TrainingStepCost *training = nullptr;
  /// Bytes a device may hold.
  int64_t memoryLimitBytes = 0;
  PlanObjective objective = PlanObjective::Throughput;
  /// Equal segment counts instead of balanced time.
  bool uniform = false;
};

/// One stage of a split.
struct StageRange {
  int64_t firstSegment = 0;
  int64_t lastSegment = 0;
  /// Per segment of the range, the index of its candidate.
  std::vector<int64_t> level;
  /// Seconds per microbatch of its segments (all phases) and its sends (in a
  /// training step, the gradients' too).
  double segmentTime = 0;
  double sendTime = 0;
  /// The share of its data out of the caches at each step
  /// (`getCacheMissFraction` of its memory): `segmentTime` includes that
  /// share of its segments' miss times.
  double missFraction = 0;
  DeviceMemory memory;
  /// In a training step: per microbatch, the part of `segmentTime` that
  /// recomputes and the part that runs the backward, and the part of
  /// `sendTime` that sends gradients back; per step, the update.
  double recomputeTime = 0;
  double backwardTime = 0;
  double backwardSendTime = 0;
  UpdateCost update;
  TrainableParameters trainable;
  /// Segments that recompute.
  int64_t numRecomputed = 0;

  double time() const { return segmentTime + sendTime; }
  /// The phases as the schedule reads them: the sends of each direction
  /// belong to its phase.
  PhaseTimes phaseTimes() const;
  /// Segments that do not take their fastest sharding.
  int64_t numLean() const {
    return static_cast<int64_t>(std::count_if(
        level.begin(), level.end(), [](int64_t index) { return index > 0; }));
  }
};

/// A split into stages.
struct StageSplit {
  std::vector<StageRange> stages;
  bool fits = false;

  double maxStageTime() const;
  double sumStageTime() const;
  /// The stage with the most memory per device.
  int64_t largestStage() const;
};

/// The stage range [first, last] as `options` would run it: every segment
/// with its fastest sharding when that fits; otherwise segments step down
/// their candidates, the steps that cost the least time per byte saved
/// first, until the stage fits. `fits` says whether it does.
StageRange evaluateStageRange(const StageSplitProblem &problem,
                              const StageSplitOptions &options, int64_t stage,
                              int64_t first, int64_t last, bool &fits);

/// The stage times of `split` as the schedule reads them.
std::vector<PhaseTimes> getStageTimes(const StageSplit &split);

/// The best split that fits, or none when no split fits or there are fewer
/// segments than stages. For latency, and for throughput with one
/// microbatch: the least sum of stage times (exact; among equal sums a small
/// largest stage is preferred). For throughput with m > 1 microbatches: the
/// least step time of the schedule over the split of least max (exact) and
/// the splits of least sum under a few larger bounds on the max (the best of
/// those; exact as m grows for GPipe, whose step is `sum + (m - 1) * max`).
std::optional<StageSplit> splitStages(const StageSplitProblem &problem,
                                      const StageSplitOptions &options);

/// The split with the least memory on its fullest device, fitting or not:
/// what explains a model that does not fit.
std::optional<StageSplit>
splitStagesForMemory(const StageSplitProblem &problem,
                     const StageSplitOptions &options);

} // namespace cleave

#endif // CLEAVE_PLAN_STAGEPARTITIONER_H
