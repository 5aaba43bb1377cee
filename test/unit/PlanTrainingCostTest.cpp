//===- PlanTrainingCostTest.cpp - the cost model of a training step -------===//
//
// The training step's cost model (TrainingCost.h) on cases worked by hand:
// the memory terms of each optimizer, precision and ZeRO stage, the
// backward's factors and conjugate collectives, the gradient reduction
// hidden behind the backward, collectives per link level, and the update.
//
//===----------------------------------------------------------------------===//

#include "PlanTestModels.h"

#include "cleave/Plan/TrainingCost.h"

#include "llvm/ADT/Twine.h"

#include "gtest/gtest.h"

using namespace cleave;

namespace {

TrainableParameters parameters(int64_t elements, int64_t bytesPerElement) {
  TrainableParameters result;
  result.elements = elements;
  result.bytes = elements * bytesPerElement;
  result.masterBytes = bytesPerElement < 4 ? 4 * elements : 0;
  return result;
}

TEST(PlanTrainingCost, StateBytesPerOptimizerPrecisionAndZero) {
  TargetDescription target = test::loadTestTarget(8);
  struct Case {
    Optimizer optimizer;
    int64_t bytesPerElement;
    ZeroStage zero;
    int64_t dp;
    int64_t gradients, optimizerState;
  };
  // 1000 parameters. fp32: gradients 4 bytes each, moments 4 bytes each
  // (SGD none, momentum one, Adam and AdamW two). bf16/fp16: gradients 2
  // bytes, plus a 4-byte master copy with the moments: mixed-precision
  // AdamW holds 2 + 2 + 12 = 16 bytes per parameter. ZeRO 1 divides the
  // optimizer state over the replicas, ZeRO 2 the gradients too.
  const Case cases[] = {
      {Optimizer::SGD, 4, ZeroStage::None, 1, 4000, 0},
      {Optimizer::Momentum, 4, ZeroStage::None, 1, 4000, 4000},
      {Optimizer::Adam, 4, ZeroStage::None, 1, 4000, 8000},
      {Optimizer::AdamW, 4, ZeroStage::None, 1, 4000, 8000},
      {Optimizer::SGD, 2, ZeroStage::None, 1, 2000, 4000},
      {Optimizer::AdamW, 2, ZeroStage::None, 1, 2000, 12000},
      {Optimizer::AdamW, 2, ZeroStage::None, 4, 2000, 12000},
      {Optimizer::AdamW, 2, ZeroStage::OptimizerState, 4, 2000, 3000},
      {Optimizer::AdamW, 2, ZeroStage::Gradients, 4, 500, 3000},
      {Optimizer::Momentum, 4, ZeroStage::Gradients, 8, 500, 500},
      // Without replicas ZeRO has nothing to divide.
      {Optimizer::AdamW, 4, ZeroStage::Gradients, 1, 4000, 8000},
  };
  for (const Case &c : cases) {
    TrainingStepCost cost(target, c.optimizer, c.zero, {c.dp, c.dp});
    TrainingStateBytes state =
        cost.getStateBytes(parameters(1000, c.bytesPerElement));
    std::string label =
        (stringifyOptimizer(c.optimizer) + " " +
         llvm::Twine(c.bytesPerElement) + " bytes, ZeRO " +
         stringifyZeroStage(c.zero) + ", dp " + llvm::Twine(c.dp))
            .str();
    EXPECT_EQ(state.gradients, c.gradients) << label;
    EXPECT_EQ(state.optimizerState, c.optimizerState) << label;
  }
}

TEST(PlanTrainingCost, BackwardFactorsAndConjugates) {
  BackwardFactors matrix = getBackwardFactors(/*usesMatrixUnits=*/true);
  EXPECT_EQ(matrix.flops, 2.0);
  EXPECT_EQ(matrix.bytes, 2.0);
  BackwardFactors other = getBackwardFactors(/*usesMatrixUnits=*/false);
  EXPECT_EQ(other.flops, 1.0);
  EXPECT_EQ(other.bytes, 2.0);
  EXPECT_EQ(getConjugateCollective(CollectiveKind::AllReduce),
            CollectiveKind::AllReduce);
  EXPECT_EQ(getConjugateCollective(CollectiveKind::AllGather),
            CollectiveKind::ReduceScatter);
  EXPECT_EQ(getConjugateCollective(CollectiveKind::ReduceScatter),
            CollectiveKind::AllGather);
}

TEST(PlanTrainingCost, GradientReductionHidesBehindTheBackward) {
  TargetDescription target = test::loadTestTarget(8);
  DataParallelGroup group{8, 8};
  // 100 MiB of gradients: 4 buckets of 25 MiB, each all-reduced over the 8
  // devices of a node in t seconds.
  int64_t bytes = 4 * kGradientBucketBytes;
  double t = collectiveTime(CollectiveKind::AllReduce, kGradientBucketBytes, 8,
                            false, target);
  ASSERT_GT(t, 0);
  auto exposed = [&](double backward) {
    GradientReduction reduction =
        reduceGradients(bytes, backward, ZeroStage::None, group, target);
    EXPECT_EQ(reduction.buckets, 4);
    EXPECT_DOUBLE_EQ(reduction.bucketTime, t);
    EXPECT_DOUBLE_EQ(reduction.totalTime, 4 * t);
    return reduction.exposedTime;
  };
  // A backward far longer than the reduction hides all but the last bucket,
  // which is ready only when the backward ends.
  EXPECT_DOUBLE_EQ(exposed(1.0), t);
  // No backward to hide behind: all four buckets.
  EXPECT_DOUBLE_EQ(exposed(0.0), 4 * t);
  // A backward of 2t readies a bucket every t / 2: the reduction, one
  // bucket every t, ends 4t - 2t * 3/4 = 2.5t after the backward.
  EXPECT_DOUBLE_EQ(exposed(2 * t), 2.5 * t);
  // One replica reduces nothing.
  EXPECT_EQ(
      reduceGradients(bytes, 0.0, ZeroStage::None, {1, 1}, target).exposedTime,
      0.0);
  // ZeRO reduce-scatters instead: half the ring all-reduce's traffic.
  GradientReduction scattered =
      reduceGradients(bytes, 0.0, ZeroStage::OptimizerState, group, target);
  EXPECT_DOUBLE_EQ(scattered.bucketTime,
                   collectiveTime(CollectiveKind::ReduceScatter,
                                  kGradientBucketBytes, 8, false, target));
}

TEST(PlanTrainingCost, CollectivesPerLinkLevel) {
  TargetDescription target = test::loadTestTarget(16);
  int64_t bytes = int64_t(1) << 30;
  // 16 replicas, 8 on each of 2 nodes: the node's links carry the
  // reduce-scatter and all-gather of the whole message, InfiniBand the
  // all-reduce of an eighth of it.
  double layered =
      collectiveTime(CollectiveKind::ReduceScatter, bytes, 8, false, target) +
      collectiveTime(CollectiveKind::AllReduce, bytes / 8, 2, true, target) +
      collectiveTime(CollectiveKind::AllGather, bytes, 8, false, target);
  EXPECT_DOUBLE_EQ(hierarchicalCollectiveTime(CollectiveKind::AllReduce, bytes,
                                              16, 8, target),
                   layered);
  double flat =
      collectiveTime(CollectiveKind::AllReduce, bytes, 16, true, target);
  EXPECT_LT(layered, flat);
  // Inside a node, or one replica per node: one level.
  EXPECT_DOUBLE_EQ(
      hierarchicalCollectiveTime(CollectiveKind::AllReduce, bytes, 8, 8,
                                 target),
      collectiveTime(CollectiveKind::AllReduce, bytes, 8, false, target));
  EXPECT_DOUBLE_EQ(hierarchicalCollectiveTime(CollectiveKind::AllReduce, bytes,
                                              16, 1, target),
                   flat);
}

TEST(PlanTrainingCost, UpdateIsAMemoryBoundPass) {
  TargetDescription target = test::loadTestTarget(8);
  const DeviceDescription &device = target.device;
  double bandwidth = device.memoryBandwidth * device.memoryEfficiency;
  int64_t elements = 1000000;
  // AdamW over fp32 weights reads the gradient (4), reads and writes the
  // weight (2 x 4) and both moments (2 x 8): 28 bytes per parameter. Over
  // bf16 weights: the gradient (2), the master (2 x 4), the moments (2 x 8)
  // and the bf16 weight written back (2): 28 as well.
  for (int64_t bytesPerElement : {4, 2}) {
    TrainingStepCost cost(target, Optimizer::AdamW, ZeroStage::None, {1, 1});
    UpdateCost update =
        cost.getUpdateCost(parameters(elements, bytesPerElement), 0.0);
    EXPECT_DOUBLE_EQ(update.optimizer, 28.0 * elements / bandwidth);
    EXPECT_EQ(update.exposedReduction, 0.0);
    EXPECT_EQ(update.weightGather, 0.0);
  }
  // SGD reads the gradient and reads and writes the weight: 12 bytes.
  TrainingStepCost sgd(target, Optimizer::SGD, ZeroStage::None, {1, 1});
  EXPECT_DOUBLE_EQ(sgd.getUpdateCost(parameters(elements, 4), 0.0).optimizer,
                   12.0 * elements / bandwidth);
  // Under ZeRO 1 each of 4 replicas updates a quarter, then all-gathers the
  // weights (4 MB: one bucket).
  TrainingStepCost zero(target, Optimizer::AdamW, ZeroStage::OptimizerState,
                        {4, 4});
  UpdateCost update = zero.getUpdateCost(parameters(elements, 4), 1.0);
  EXPECT_DOUBLE_EQ(update.optimizer, 7.0 * elements / bandwidth);
  EXPECT_DOUBLE_EQ(update.weightGather,
                   collectiveTime(CollectiveKind::AllGather, 4 * elements, 4,
                                  false, target));
  EXPECT_DOUBLE_EQ(update.exposedReduction,
                   collectiveTime(CollectiveKind::ReduceScatter, 4 * elements,
                                  4, false, target));
}

} // namespace
