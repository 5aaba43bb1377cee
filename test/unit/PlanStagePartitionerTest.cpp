//===- PlanStagePartitionerTest.cpp - contiguous pipeline stages -*- C++
//-*-===//
//
// The stage split against brute force over every composition of the
// segments, on segment costs drawn at random (uneven, with memory limits
// that bind), and on cases whose answer is known by hand.
//
//===----------------------------------------------------------------------===//

#include "cleave/Plan/StagePartitioner.h"

#include "gtest/gtest.h"

#include <functional>
#include <limits>
#include <random>

using namespace cleave;

namespace {

/// Segments with a fast sharding and, unless `withLean` is false, a lean
/// one that holds half the weights and runs 1.5x slower.
StageSplitProblem makeProblem(const std::vector<double> &times,
                              const std::vector<int64_t> &weights,
                              double sendTime = 0, bool withLean = true) {
  StageSplitProblem problem;
  for (size_t i = 0; i < times.size(); ++i) {
    problem.candidates.push_back({{times[i], weights[i], 10, 0}});
    if (withLean)
      problem.candidates.back().push_back(
          {1.5 * times[i], weights[i] / 2, 10, 0});
    problem.outputBytes.push_back(4);
    problem.sendTimeIntraNode.push_back(sendTime);
    problem.sendTimeInterNode.push_back(2 * sendTime);
  }
  problem.inputBytes = 4;
  return problem;
}

StageSplitOptions makeOptions(int64_t stages, int64_t memoryLimit,
                              PlanObjective objective,
                              int64_t microbatches = 8) {
  StageSplitOptions options;
  options.numStages = stages;
  PipelineScheduleOptions schedule;
  schedule.numStages = stages;
  schedule.numMicrobatches = microbatches;
  options.schedule = llvm::cantFail(PipelineSchedule::create(schedule));
  options.memoryLimitBytes = memoryLimit;
  options.objective = objective;
  options.inFlightMicrobatches = 2;
  for (int64_t k = 0; k + 1 < stages; ++k)
    options.sendCrossesNodes.push_back(k % 2 == 1);
  return options;
}

/// What the split minimises: the step (throughput) or the sum (latency).
double costOf(const StageSplit &split, const StageSplitOptions &options) {
  if (options.objective == PlanObjective::Latency)
    return split.sumStageTime();
  return split.sumStageTime() +
         static_cast<double>(options.schedule.getNumMicrobatches() - 1) *
             split.maxStageTime();
}

/// The least cost over every composition, or none.
std::optional<double> bruteForce(const StageSplitProblem &problem,
                                 const StageSplitOptions &options) {
  int64_t n = problem.numSegments();
  std::optional<double> best;
  std::vector<int64_t> firsts;
  std::function<void(int64_t, int64_t)> visit = [&](int64_t first,
                                                    int64_t stage) {
    if (stage == options.numStages) {
      if (first != n)
        return;
      StageSplit split;
      for (int64_t k = 0; k < options.numStages; ++k) {
        int64_t last = (k + 1 < options.numStages ? firsts[k + 1] : n) - 1;
        bool fits = false;
        split.stages.push_back(
            evaluateStageRange(problem, options, k, firsts[k], last, fits));
        if (!fits)
          return;
      }
      double cost = costOf(split, options);
      if (!best || cost < *best)
        best = cost;
      return;
    }
    for (int64_t next = first + 1; next <= n - (options.numStages - stage - 1);
         ++next) {
      firsts.push_back(first);
      visit(next, stage + 1);
      firsts.pop_back();
    }
  };
  visit(0, 0);
  return best;
}

TEST(PlanStagePartitioner, BalancesUnevenSegments) {
  // Times 1 1 1 1 4 4 over two stages: the balanced split is [1 1 1 1 4 | 4]
  // (8 vs 4) or [1 1 1 1 | 4 4] (4 vs 8); the best max is 8 either way, and
  // with three stages [1 1 1 1 | 4 | 4] brings it to 4.
  StageSplitProblem problem =
      makeProblem({1, 1, 1, 1, 4, 4}, {1, 1, 1, 1, 1, 1});
  std::optional<StageSplit> two =
      splitStages(problem, makeOptions(2, 1000, PlanObjective::Throughput));
  ASSERT_TRUE(two);
  EXPECT_DOUBLE_EQ(two->maxStageTime(), 8);
  std::optional<StageSplit> three =
      splitStages(problem, makeOptions(3, 1000, PlanObjective::Throughput));
  ASSERT_TRUE(three);
  EXPECT_DOUBLE_EQ(three->maxStageTime(), 4);
  EXPECT_EQ(three->stages[0].firstSegment, 0);
  EXPECT_EQ(three->stages[0].lastSegment, 3);
  EXPECT_EQ(three->stages[1].firstSegment, 4);
  EXPECT_EQ(three->stages[2].firstSegment, 5);
}

TEST(PlanStagePartitioner, MemoryLimitForcesUnevenSplit) {
  // Equal times, but segment 0 is heavy: it must be alone in its stage.
  StageSplitProblem problem =
      makeProblem({1, 1, 1, 1}, {90, 10, 10, 10}, 0, /*withLean=*/false);
  // 90 + 10 (activations) + 2 * 4 (inputs in flight) + 4 (send buffer).
  std::optional<StageSplit> split =
      splitStages(problem, makeOptions(2, 112, PlanObjective::Throughput));
  ASSERT_TRUE(split);
  EXPECT_EQ(split->stages[0].lastSegment, 0);
  EXPECT_EQ(split->stages[0].numLean(), 0);
  EXPECT_DOUBLE_EQ(split->maxStageTime(), 3);
}

TEST(PlanStagePartitioner, LeanShardingWhenFastDoesNotFit) {
  // Two segments of 100 weight bytes (50 lean), 18 bytes of activations.
  StageSplitProblem problem = makeProblem({1, 1}, {100, 100});
  std::optional<StageSplit> split =
      splitStages(problem, makeOptions(1, 130, PlanObjective::Throughput));
  ASSERT_TRUE(split);
  EXPECT_EQ(split->stages[0].numLean(), 2);
  EXPECT_DOUBLE_EQ(split->maxStageTime(), 3);
  EXPECT_EQ(split->stages[0].memory.weights, 100);

  // With room for 150 bytes of weights, one segment stays fast.
  split = splitStages(problem, makeOptions(1, 170, PlanObjective::Throughput));
  ASSERT_TRUE(split);
  EXPECT_EQ(split->stages[0].numLean(), 1);
  EXPECT_DOUBLE_EQ(split->maxStageTime(), 2.5);
  EXPECT_EQ(split->stages[0].memory.weights, 150);
}

TEST(PlanStagePartitioner, LeanFirstWhereItCostsLeast) {
  // Segment 0 saves 60 bytes for 0.5 s, segment 1 saves 60 for 0.1 s: to
  // save 60 the second goes lean.
  StageSplitProblem problem = makeProblem({1, 1}, {120, 120});
  problem.candidates[0][1].time = 1.5;
  problem.candidates[1][1].time = 1.1;
  std::optional<StageSplit> split =
      splitStages(problem, makeOptions(1, 200, PlanObjective::Throughput));
  ASSERT_TRUE(split);
  EXPECT_EQ(split->stages[0].level, (std::vector<int64_t>{0, 1}));
  EXPECT_DOUBLE_EQ(split->maxStageTime(), 2.1);
}

TEST(PlanStagePartitioner, ReportsWhatDoesNotFit) {
  StageSplitProblem problem = makeProblem({1, 1, 1}, {100, 100, 100});
  StageSplitOptions options = makeOptions(2, 60, PlanObjective::Throughput);
  EXPECT_FALSE(splitStages(problem, options));
  std::optional<StageSplit> least = splitStagesForMemory(problem, options);
  ASSERT_TRUE(least);
  // Two lean segments (50 + 50) on the fuller stage.
  EXPECT_EQ(least->stages[least->largestStage()].memory.weights, 100);
  EXPECT_FALSE(
      splitStages(problem, makeOptions(4, 1000, PlanObjective::Throughput)));
}

TEST(PlanStagePartitioner, StagesThatFitTheCachesMissNothing) {
  // Four segments of 1 s, 100 weight bytes and 1 s more with their data
  // out of caches of 250 bytes. One stage holds 400 + 10 + 2 * 4 = 418
  // bytes: 1 - 250 / 418 of the miss time counts.
  StageSplitProblem problem =
      makeProblem({1, 1, 1, 1}, {100, 100, 100, 100}, 0, /*withLean=*/false);
  for (std::vector<SegmentCandidate> &candidates : problem.candidates)
    candidates[0].missTime = 1;
  problem.cacheBytes = 250;
  StageSplitOptions one = makeOptions(1, 1000, PlanObjective::Throughput);
  bool fits = false;
  StageRange whole = evaluateStageRange(problem, one, 0, 0, 3, fits);
  ASSERT_TRUE(fits);
  EXPECT_EQ(whole.memory.total(), 418);
  EXPECT_DOUBLE_EQ(whole.missFraction, 1 - 250.0 / 418);
  EXPECT_DOUBLE_EQ(whole.segmentTime, 4 + 4 * (1 - 250.0 / 418));

  // Two stages hold 200 + 10 + 8 bytes, the first 4 more to send: they fit
  // the caches, and each takes 2 s, less than half of the one stage.
  std::optional<StageSplit> two =
      splitStages(problem, makeOptions(2, 1000, PlanObjective::Throughput));
  ASSERT_TRUE(two);
  ASSERT_EQ(two->stages.size(), 2u);
  EXPECT_EQ(two->stages[0].memory.total(), 222);
  EXPECT_EQ(two->stages[1].memory.total(), 218);
  for (const StageRange &stage : two->stages)
    EXPECT_EQ(stage.missFraction, 0);
  EXPECT_DOUBLE_EQ(two->maxStageTime(), 2);

  // Without caches described, the miss times do not count.
  problem.cacheBytes = 0;
  whole = evaluateStageRange(problem, one, 0, 0, 3, fits);
  EXPECT_EQ(whole.missFraction, 0);
  EXPECT_DOUBLE_EQ(whole.segmentTime, 4);
}

TEST(PlanStagePartitioner, UniformSplitIgnoresTime) {
  StageSplitProblem problem = makeProblem({5, 1, 1, 1}, {1, 1, 1, 1});
  StageSplitOptions options = makeOptions(2, 1000, PlanObjective::Throughput);
  options.uniform = true;
  std::optional<StageSplit> split = splitStages(problem, options);
  ASSERT_TRUE(split);
  EXPECT_EQ(split->stages[0].lastSegment, 1);
  EXPECT_DOUBLE_EQ(split->maxStageTime(), 6);
}

TEST(PlanStagePartitioner, LongModelsSplitBetweenBlocks) {
  // 50,000 segments: stages start and end between blocks of about equal
  // time (at most 1024 of them), so the split stays contiguous and within
  // one block of the balance that the exact split would find.
  int64_t n = 50000;
  std::vector<double> times(n);
  for (int64_t i = 0; i < n; ++i)
    times[i] = i < n / 2 ? 1.0 : 3.0;
  StageSplitProblem problem =
      makeProblem(times, std::vector<int64_t>(n, 1), 0, /*withLean=*/false);
  // Two distinct segments, as a model of two repeated layers.
  for (int64_t i = 0; i < n; ++i)
    problem.segmentClass.push_back(i < n / 2 ? 0 : 1);
  StageSplitOptions options =
      makeOptions(4, int64_t{1} << 40, PlanObjective::Throughput);
  std::optional<StageSplit> split = splitStages(problem, options);
  ASSERT_TRUE(split);
  ASSERT_EQ(split->stages.size(), 4u);
  EXPECT_EQ(split->stages.front().firstSegment, 0);
  EXPECT_EQ(split->stages.back().lastSegment, n - 1);
  for (size_t k = 1; k < split->stages.size(); ++k)
    EXPECT_EQ(split->stages[k].firstSegment,
              split->stages[k - 1].lastSegment + 1);
  // Total time 100,000: the exact balance is 25,000 per stage; a block
  // holds at most about 100,000 / 1024 < 100 units of time, plus one
  // segment.
  EXPECT_GE(split->maxStageTime(), 25000);
  EXPECT_LE(split->maxStageTime(), 25000 + 100 + 3);

  // The least-memory split takes the same boundaries.
  std::optional<StageSplit> least = splitStagesForMemory(problem, options);
  ASSERT_TRUE(least);
  EXPECT_EQ(least->stages.back().lastSegment, n - 1);
}

TEST(PlanStagePartitioner, ManyDistinctSegments) {
  // 600 segments, each its own class: ranges are costed from prefix sums
  // while the fastest choice fits. Two stages, so the best split is found
  // by trying every cut.
  std::mt19937 random(11);
  std::uniform_real_distribution<double> time(0.5, 5.0);
  int64_t n = 600;
  std::vector<double> times(n);
  for (double &t : times)
    t = time(random);
  StageSplitProblem problem =
      makeProblem(times, std::vector<int64_t>(n, 1), 0, /*withLean=*/false);
  auto bestMax = [&](int64_t limitSegments) {
    double best = std::numeric_limits<double>::infinity();
    for (int64_t cut = 1; cut < n; ++cut) {
      if (cut > limitSegments || n - cut > limitSegments)
        continue;
      double left = 0, right = 0;
      for (int64_t i = 0; i < n; ++i)
        (i < cut ? left : right) += times[i];
      best = std::min(best, std::max(left, right));
    }
    return best;
  };
  std::optional<StageSplit> split = splitStages(
      problem, makeOptions(2, int64_t{1} << 40, PlanObjective::Throughput));
  ASSERT_TRUE(split);
  EXPECT_NEAR(split->maxStageTime(), bestMax(n), 1e-9);

  // A memory limit that holds at most 350 segments' weights per stage
  // (1 byte each, 10 of activations, 2 * 4 of inputs in flight and 4 to
  // send).
  split = splitStages(
      problem, makeOptions(2, 350 + 10 + 8 + 4, PlanObjective::Throughput));
  ASSERT_TRUE(split);
  EXPECT_NEAR(split->maxStageTime(), bestMax(350), 1e-9);
  for (const StageRange &stage : split->stages)
    EXPECT_LE(stage.lastSegment - stage.firstSegment + 1, 350);
}

struct RandomCase {
  int64_t segments;
  int64_t stages;
  PlanObjective objective;
  int64_t microbatches;
  unsigned seed;
};

class StageSplitOptimalityTest : public ::testing::TestWithParam<RandomCase> {};

TEST_P(StageSplitOptimalityTest, MatchesBruteForce) {
  RandomCase param = GetParam();
  std::mt19937 random(param.seed);
  std::uniform_real_distribution<double> time(0.1, 3.0);
  std::uniform_int_distribution<int64_t> weight(1, 40);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<double> times;
    std::vector<int64_t> weights;
    int64_t total = 0;
    for (int64_t i = 0; i < param.segments; ++i) {
      times.push_back(time(random));
      weights.push_back(weight(random));
      total += weights.back();
    }
    StageSplitProblem problem = makeProblem(times, weights, 0.05);
    // A limit that sometimes binds and sometimes needs the lean sharding.
    int64_t limit = 30 + total / param.stages;
    // Every other trial, caches that some stages fit and some do not, and
    // segments that take up to twice as long with their data out of them.
    if (trial % 2 == 1) {
      problem.cacheBytes = limit / 2;
      for (std::vector<SegmentCandidate> &candidates : problem.candidates)
        for (SegmentCandidate &candidate : candidates)
          candidate.missTime = candidate.time * time(random) / 3.0;
    }
    StageSplitOptions options =
        makeOptions(param.stages, limit, param.objective, param.microbatches);
    std::optional<double> expected = bruteForce(problem, options);
    std::optional<StageSplit> split = splitStages(problem, options);
    ASSERT_EQ(expected.has_value(), split.has_value()) << "trial " << trial;
    if (!expected)
      continue;
    double found = costOf(*split, options);
    // Exact for the sum (latency, one microbatch) and for the least max;
    // in between the best of the bounds tried, within 1%.
    bool exact =
        param.objective == PlanObjective::Latency || param.microbatches == 1;
    EXPECT_GE(found, *expected * (1 - 1e-12)) << "trial " << trial;
    EXPECT_LE(found, *expected * (exact ? 1 + 1e-12 : 1.01))
        << "trial " << trial;
    for (const StageRange &stage : split->stages)
      EXPECT_LE(stage.memory.total(), limit);
  }
}

/// Segments of a training step: forward 1, backward 2; 100 bytes of
/// weights, 100 of gradients, 200 of optimizer state; 10 bytes kept per
/// microbatch for the backward, or 2 when recomputing (1 more second, and a
/// backward that holds 8 bytes more).
StageSplitProblem makeTrainingProblem(int64_t segments) {
  StageSplitProblem problem;
  for (int64_t i = 0; i < segments; ++i) {
    SegmentCandidate keep;
    keep.time = 3;
    keep.weightBytes = 100;
    keep.peakActivationBytes = 5;
    keep.training.backwardTime = 2;
    keep.training.gradientBytes = 100;
    keep.training.optimizerStateBytes = 200;
    keep.training.savedActivationBytes = 10;
    keep.training.trainable = {25, 100, 0};
    SegmentCandidate recompute = keep;
    recompute.time = 4;
    recompute.peakActivationBytes = 13;
    recompute.training.recomputeTime = 1;
    recompute.training.savedActivationBytes = 2;
    recompute.training.recomputes = true;
    problem.candidates.push_back({keep, recompute});
    problem.segmentClass.push_back(0);
    problem.outputBytes.push_back(4);
    problem.sendTimeIntraNode.push_back(0);
    problem.sendTimeInterNode.push_back(0);
  }
  problem.inputBytes = 4;
  return problem;
}

TEST(StagePartitioner, TrainingStagesHoldTheirScheduleCount) {
  StageSplitProblem problem = makeTrainingProblem(4);
  TargetDescription target;
  target.device.memoryBandwidth = 1e12;
  target.device.setPeakFlops(Precision::F32, 1e12);
  TrainingStepCost training(target, Optimizer::SGD, ZeroStage::None, {1, 1});
  StageSplitOptions options;
  options.numStages = 2;
  PipelineScheduleOptions schedule;
  schedule.choice = {ScheduleKind::OneFOneB, 1};
  schedule.numStages = 2;
  schedule.numMicrobatches = 4;
  schedule.phases = {PipelinePhase::Forward, PipelinePhase::Recompute,
                     PipelinePhase::Backward, PipelinePhase::Update};
  options.schedule = llvm::cantFail(PipelineSchedule::create(schedule));
  // 1F1B: stage 0 holds two microbatches, stage 1 one.
  options.heldMicrobatches = {2, 1};
  options.training = &training;
  options.sendCrossesNodes = {false};
  options.memoryLimitBytes = 1 << 20;

  std::optional<StageSplit> split = splitStages(problem, options);
  ASSERT_TRUE(split);
  ASSERT_EQ(split->stages.size(), 2u);
  const StageRange &first = split->stages[0], &last = split->stages[1];
  EXPECT_EQ(first.lastSegment, 1);
  // Weights, gradients and optimizer state of two segments; activations:
  // the peak, and per microbatch held the input and what both segments
  // keep; the send buffer.
  EXPECT_EQ(first.memory.weights, 200);
  EXPECT_EQ(first.memory.gradients, 200);
  EXPECT_EQ(first.memory.optimizerState, 400);
  EXPECT_EQ(first.memory.activations, 5 + 2 * (4 + 20));
  EXPECT_EQ(first.memory.communication, 4);
  EXPECT_EQ(first.memory.total(), 857);
  EXPECT_EQ(last.memory.activations, 5 + 1 * (4 + 20));
  EXPECT_EQ(last.memory.communication, 0);
  // Phases: forward 2, backward 4 per microbatch; the update is SGD's pass
  // over the two segments' 200 bytes of gradients and 2 x 200 of weights.
  PhaseTimes times = first.phaseTimes();
  EXPECT_DOUBLE_EQ(times[PipelinePhase::Forward], 2);
  EXPECT_DOUBLE_EQ(times[PipelinePhase::Recompute], 0);
  EXPECT_DOUBLE_EQ(times[PipelinePhase::Backward], 4);
  EXPECT_DOUBLE_EQ(times[PipelinePhase::Update], 600 / 1e12);
  EXPECT_EQ(first.numRecomputed, 0);

  // 7 bytes short on stage 0: one of its segments recomputes (saving twice
  // 8 bytes held, holding 8 more in its backward); stage 1, holding one
  // microbatch, still fits as it is.
  options.memoryLimitBytes = 850;
  split = splitStages(problem, options);
  ASSERT_TRUE(split);
  EXPECT_EQ(split->stages[0].numRecomputed, 1);
  EXPECT_EQ(split->stages[0].memory.total(), 849);
  EXPECT_DOUBLE_EQ(split->stages[0].phaseTimes()[PipelinePhase::Recompute], 1);
  EXPECT_EQ(split->stages[1].numRecomputed, 0);
  EXPECT_EQ(split->stages[1].memory.total(), 829);
}

INSTANTIATE_TEST_SUITE_P(
    Random, StageSplitOptimalityTest,
    ::testing::Values(RandomCase{6, 2, PlanObjective::Throughput, 1, 1},
                      RandomCase{8, 3, PlanObjective::Throughput, 4, 2},
                      RandomCase{10, 4, PlanObjective::Throughput, 16, 3},
                      RandomCase{9, 9, PlanObjective::Throughput, 8, 4},
                      RandomCase{10, 3, PlanObjective::Throughput, 64, 7},
                      RandomCase{8, 3, PlanObjective::Latency, 4, 5},
                      RandomCase{10, 5, PlanObjective::Latency, 1, 6}));

} // namespace
