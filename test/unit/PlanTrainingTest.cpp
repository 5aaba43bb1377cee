//===- PlanTrainingTest.cpp - the planner on training steps -----*- C++ -*-===//
//
// Plans of training steps on small models: a step's FLOPs and the backward
// of matrix products, the memory terms of each optimizer, precision and ZeRO
// stage, recomputation trading time for memory, the activations each 1F1B
// stage holds, the backward's collectives, and models that fit only with
// ZeRO or with recomputation, which the search must find by itself.
//
//===----------------------------------------------------------------------===//

#include "PlanTestModels.h"

#include "cleave/Plan/Planner.h"
#include "cleave/Plan/TrainingCost.h"

#include "mlir/IR/Diagnostics.h"

#include "gtest/gtest.h"

#include <cmath>

using namespace mlir;
using namespace cleave;

namespace {

struct TestModel {
  std::unique_ptr<MLIRContext> context;
  OwningOpRef<ModuleOp> module;
};

TestModel parse(const std::string &source) {
  TestModel model;
  model.context = test::makePlanContext();
  model.module = test::parsePlanModule(*model.context, source);
  return model;
}

FailureOr<Plan> planCollecting(TestModel &model,
                               const TargetDescription &target,
                               const PlanOptions &options,
                               std::string &errors) {
  ScopedDiagnosticHandler handler(model.context.get(), [&](Diagnostic &d) {
    errors += d.str() + "\n";
    return success();
  });
  return planModel(*model.module, target, options);
}

/// `layers` products with H x H weights and nothing else: x W1 W2 ...
std::string writeMatmulChain(int64_t layers, int64_t rows, int64_t hidden) {
  std::string x =
      "tensor<" + std::to_string(rows) + "x" + std::to_string(hidden) + "xf32>";
  std::string w = "tensor<" + std::to_string(hidden) + "x" +
                  std::to_string(hidden) + "xf32>";
  std::string text = "func.func @main(%x: " + x + ") -> " + x + " {\n";
  std::string value = "%x";
  int64_t bytes = hidden * hidden * 4;
  for (int64_t layer = 0; layer < layers; ++layer) {
    std::string n = std::to_string(layer);
    text +=
        "  %w" + n + " = cleave.weight \"w" + n +
        "\" {file = \"model.bin\", offset = " + std::to_string(layer * bytes) +
        " : i64, length = " + std::to_string(bytes) + " : i64} : " + w + "\n";
    text += "  %y" + n + " = cleave.matmul " + value + ", %w" + n + " : (" + x +
            ", " + w + ") -> " + x + "\n";
    value = "%y" + n;
  }
  return text + "  return " + value + " : " + x + "\n}\n";
}

test::ModelShape smallTransformer(int64_t layers, int64_t batch) {
  test::ModelShape shape;
  shape.layers = layers;
  shape.batch = batch;
  shape.seq = 128;
  shape.hidden = 256;
  shape.heads = 4;
  return shape;
}

PlanOptions training(std::optional<int64_t> pp = 1,
                     std::optional<int64_t> tp = 1,
                     std::optional<int64_t> dp = 1,
                     std::optional<int64_t> microbatches = 1) {
  PlanOptions options;
  options.training.enabled = true;
  options.pipelineStages = pp;
  options.tensorParallel = tp;
  options.dataParallel = dp;
  options.microbatches = microbatches;
  return options;
}

TEST(PlanTraining, StepFlopsAndBackwardOfMatrixProducts) {
  TestModel model = parse(writeMatmulChain(4, 4096, 4096));
  ASSERT_TRUE(model.module);
  std::string errors;
  FailureOr<Plan> plan =
      planCollecting(model, test::loadTestTarget(1), training(), errors);
  ASSERT_TRUE(succeeded(plan)) << errors;
  ASSERT_TRUE(plan->training);
  // Four products of 4096 x 4096 x 4096: 2 * 4096^3 FLOPs each forward,
  // twice that backward; the step is three times the forward.
  double forward = 4 * 2.0 * std::pow(4096.0, 3);
  EXPECT_DOUBLE_EQ(plan->training->forwardFlops, forward);
  EXPECT_DOUBLE_EQ(plan->training->backwardFlops, 2 * forward);
  EXPECT_DOUBLE_EQ(plan->training->totalFlops(), 3 * forward);
  ASSERT_EQ(plan->stages.size(), 1u);
  const PlanStage &stage = plan->stages.front();
  EXPECT_NEAR(stage.backwardComputeTime, 2 * stage.computeTime,
              1e-12 * stage.computeTime);
  // The one device holds the fp32 weights, their gradients and AdamW's two
  // moments.
  int64_t weights = 4 * 4096 * 4096 * 4;
  EXPECT_EQ(stage.memory.weights, weights);
  EXPECT_EQ(stage.memory.gradients, weights);
  EXPECT_EQ(stage.memory.optimizerState, 2 * weights);
  // The step: forward, backward, then the update.
  EXPECT_TRUE(plan->schedule.hasPhase(PipelinePhase::Backward));
  EXPECT_TRUE(plan->schedule.hasPhase(PipelinePhase::Update));
  EXPECT_FALSE(plan->schedule.hasPhase(PipelinePhase::Recompute));
  EXPECT_DOUBLE_EQ(plan->stepTime, stage.time() + stage.backwardTime() +
                                       stage.update.cost.total());
}

TEST(PlanTraining, MemoryTermsFollowOptimizerAndPrecision) {
  TestModel model = parse(writeMatmulChain(2, 256, 1024));
  ASSERT_TRUE(model.module);
  auto stageMemory = [&](Optimizer optimizer,
                         std::optional<Precision> precision) {
    PlanOptions options = training();
    options.training.optimizer = optimizer;
    options.costOptions.computePrecision = precision;
    std::string errors;
    FailureOr<Plan> plan =
        planCollecting(model, test::loadTestTarget(1), options, errors);
    EXPECT_TRUE(succeeded(plan)) << errors;
    return succeeded(plan) ? plan->stages.front().memory : DeviceMemory();
  };
  int64_t weights = 2 * 1024 * 1024 * 4;
  DeviceMemory sgd = stageMemory(Optimizer::SGD, std::nullopt);
  EXPECT_EQ(sgd.weights, weights);
  EXPECT_EQ(sgd.gradients, weights);
  EXPECT_EQ(sgd.optimizerState, 0);
  EXPECT_EQ(stageMemory(Optimizer::Momentum, Precision::F32).optimizerState,
            weights);
  EXPECT_EQ(stageMemory(Optimizer::Adam, std::nullopt).optimizerState,
            2 * weights);
  // In bf16 the weights and gradients halve; AdamW keeps fp32 masters and
  // moments: 12 bytes per parameter, 6 times the bf16 weights.
  DeviceMemory bf16 = stageMemory(Optimizer::AdamW, Precision::BF16);
  EXPECT_EQ(bf16.weights, weights / 2);
  EXPECT_EQ(bf16.gradients, weights / 2);
  EXPECT_EQ(bf16.optimizerState, 3 * weights);
  DeviceMemory fp16 = stageMemory(Optimizer::SGD, Precision::F16);
  EXPECT_EQ(fp16.optimizerState, weights);
  // Activations are held in the compute precision too.
  EXPECT_LT(bf16.activations, sgd.activations);
}

TEST(PlanTraining, ZeroDividesTheStateOverReplicas) {
  TestModel model = parse(writeMatmulChain(2, 256, 1024));
  ASSERT_TRUE(model.module);
  int64_t weights = 2 * 1024 * 1024 * 4;
  auto stageMemory = [&](ZeroStage zero) {
    PlanOptions options = training(1, 1, 4, 1);
    options.training.zero = zero;
    std::string errors;
    FailureOr<Plan> plan =
        planCollecting(model, test::loadTestTarget(4), options, errors);
    EXPECT_TRUE(succeeded(plan)) << errors;
    if (failed(plan))
      return DeviceMemory();
    EXPECT_EQ(plan->training->zero, zero);
    EXPECT_FALSE(plan->training->zeroSearched);
    return plan->stages.front().memory;
  };
  DeviceMemory none = stageMemory(ZeroStage::None);
  EXPECT_EQ(none.gradients, weights);
  EXPECT_EQ(none.optimizerState, 2 * weights);
  DeviceMemory one = stageMemory(ZeroStage::OptimizerState);
  EXPECT_EQ(one.gradients, weights);
  EXPECT_EQ(one.optimizerState, weights / 2);
  DeviceMemory two = stageMemory(ZeroStage::Gradients);
  EXPECT_EQ(two.gradients, weights / 4);
  EXPECT_EQ(two.optimizerState, weights / 2);
}

TEST(PlanTraining, RecomputationTradesTimeForMemory) {
  TestModel model = parse(test::writeTransformer(smallTransformer(2, 8)));
  ASSERT_TRUE(model.module);
  auto planWith = [&](RecomputePolicy policy) {
    PlanOptions options = training(1, 1, 1, 2);
    options.training.recompute = policy;
    std::string errors;
    FailureOr<Plan> plan =
        planCollecting(model, test::loadTestTarget(1), options, errors);
    EXPECT_TRUE(succeeded(plan)) << errors;
    return plan;
  };
  FailureOr<Plan> keep = planWith(RecomputePolicy::None);
  FailureOr<Plan> recompute = planWith(RecomputePolicy::Segments);
  ASSERT_TRUE(succeeded(keep) && succeeded(recompute));
  EXPECT_EQ(keep->training->recomputedSegments, 0);
  EXPECT_EQ(recompute->training->recomputedSegments, recompute->numSegments);
  EXPECT_TRUE(recompute->schedule.hasPhase(PipelinePhase::Recompute));
  const PlanStage &kept = keep->stages.front();
  const PlanStage &recomputed = recompute->stages.front();
  // Recomputing runs the forward again before the backward ...
  EXPECT_EQ(kept.recomputeTime, 0.0);
  EXPECT_NEAR(recomputed.recomputeTime,
              recomputed.computeTime + recomputed.collectiveTime,
              1e-9 * recomputed.computeTime);
  EXPECT_GT(recompute->stepTime, keep->stepTime);
  // ... and keeps far fewer activations.
  EXPECT_LT(recomputed.memory.activations, kept.memory.activations / 2);
  EXPECT_EQ(recomputed.memory.weights, kept.memory.weights);
}

TEST(PlanTraining, OneFOneBHoldsFewerMicrobatchesOnLaterStages) {
  TestModel model = parse(test::writeTransformer(smallTransformer(4, 8)));
  ASSERT_TRUE(model.module);
  auto planWith = [&](ScheduleKind kind) {
    PlanOptions options = training(2, 1, 1, 4);
    options.schedule = ScheduleChoice{kind, 1};
    options.training.recompute = RecomputePolicy::None;
    std::string errors;
    FailureOr<Plan> plan =
        planCollecting(model, test::loadTestTarget(2), options, errors);
    EXPECT_TRUE(succeeded(plan)) << errors;
    return plan;
  };
  FailureOr<Plan> gpipe = planWith(ScheduleKind::GPipe);
  FailureOr<Plan> oneFOneB = planWith(ScheduleKind::OneFOneB);
  ASSERT_TRUE(succeeded(gpipe) && succeeded(oneFOneB));
  // GPipe holds every microbatch until the backwards; 1F1B stage s holds
  // p - s of them.
  EXPECT_EQ(gpipe->schedule.activationsHeld(1), 4);
  EXPECT_EQ(oneFOneB->schedule.activationsHeld(0), 2);
  EXPECT_EQ(oneFOneB->schedule.activationsHeld(1), 1);
  EXPECT_LT(oneFOneB->stages[1].memory.activations,
            gpipe->stages[1].memory.activations / 2);
}

TEST(PlanTraining, SearchKeepsTheFastestSchedule) {
  TestModel model = parse(test::writeTransformer(smallTransformer(4, 8)));
  ASSERT_TRUE(model.module);
  TargetDescription target = test::loadTestTarget(2);
  auto plan = [&](std::optional<ScheduleChoice> schedule,
                  std::vector<ScheduleChoice> searched =
                      PlanOptions::getSearchableSchedules()) {
    PlanOptions options = training(2, 1, 1, 4);
    options.schedule = schedule;
    options.searchedSchedules = std::move(searched);
    options.training.recompute = RecomputePolicy::None;
    std::string errors;
    FailureOr<Plan> result = planCollecting(model, target, options, errors);
    EXPECT_TRUE(succeeded(result)) << errors;
    return result;
  };
  FailureOr<Plan> searched = plan(std::nullopt);
  ASSERT_TRUE(succeeded(searched));
  // No schedule the search weighs does better, pinned.
  for (const ScheduleChoice &choice : PlanOptions::getSearchableSchedules()) {
    FailureOr<Plan> pinned = plan(choice);
    ASSERT_TRUE(succeeded(pinned)) << choice.str();
    EXPECT_LE(searched->stepTime, pinned->stepTime * (1 + 1e-9))
        << choice.str();
    if (pinned->schedule.getChoice() == searched->schedule.getChoice()) {
      EXPECT_EQ(searched->stepTime, pinned->stepTime) << choice.str();
    }
  }
  // Left one schedule, the search takes it; the chosen mesh appears under
  // each other schedule among the alternatives.
  FailureOr<Plan> only = plan(std::nullopt, {{ScheduleKind::OneFOneB, 1}});
  ASSERT_TRUE(succeeded(only));
  EXPECT_EQ(only->schedule.getKind(), ScheduleKind::OneFOneB);
  EXPECT_EQ(only->alternatives.size(), 1u);
  EXPECT_EQ(searched->alternatives.size(),
            PlanOptions::getSearchableSchedules().size());
  for (const PlanAlternative &alternative : searched->alternatives) {
    ASSERT_TRUE(alternative.schedule.has_value());
    EXPECT_EQ(alternative.verdict == "chosen",
              *alternative.schedule == searched->schedule.getChoice());
  }
}

/// The usable bytes between two peaks, as the memory fraction of a target
/// of `devices`.
PlanOptions withUsableBytes(PlanOptions options, int64_t bytes) {
  TargetDescription target = test::loadTestTarget(1);
  options.usableMemoryFraction = static_cast<double>(bytes) /
                                 static_cast<double>(target.device.memoryBytes);
  return options;
}

TEST(PlanTraining, SearchFindsTheZeroStageThatFits) {
  TestModel model = parse(test::writeMLPStack(smallTransformer(2, 8)));
  ASSERT_TRUE(model.module);
  TargetDescription target = test::loadTestTarget(8);
  auto peak = [&](ZeroStage zero) {
    PlanOptions options = training(1, 1, 8, 1);
    options.training.zero = zero;
    std::string errors;
    FailureOr<Plan> plan = planCollecting(model, target, options, errors);
    EXPECT_TRUE(succeeded(plan)) << errors;
    return succeeded(plan) ? plan->peakMemoryBytes : 0;
  };
  int64_t withoutZero = peak(ZeroStage::None);
  int64_t withZero = peak(ZeroStage::OptimizerState);
  ASSERT_LT(withZero, withoutZero);
  PlanOptions options =
      withUsableBytes(training(1, 1, 8, 1), (withZero + withoutZero) / 2);
  std::string errors;
  FailureOr<Plan> plan = planCollecting(model, target, options, errors);
  ASSERT_TRUE(succeeded(plan)) << errors;
  EXPECT_NE(plan->training->zero, ZeroStage::None);
  EXPECT_TRUE(plan->training->zeroSearched);
  EXPECT_EQ(plan->training->recomputedSegments, 0);

  // Pinned to ZeRO 0 it does not fit, and the error says what does.
  options.training.zero = ZeroStage::None;
  errors.clear();
  EXPECT_TRUE(failed(planCollecting(model, target, options, errors)));
  EXPECT_NE(errors.find("zero=0"), std::string::npos) << errors;
  EXPECT_NE(errors.find("with the ZeRO stage and recomputation searched it "
                        "fits as pp=1, tp=1, dp=8, zero="),
            std::string::npos)
      << errors;
}

TEST(PlanTraining, SearchRecomputesWhereMemoryNeedsIt) {
  TestModel model = parse(test::writeTransformer(smallTransformer(2, 8)));
  ASSERT_TRUE(model.module);
  TargetDescription target = test::loadTestTarget(1);
  auto planWith = [&](PlanOptions options) {
    std::string errors;
    FailureOr<Plan> plan = planCollecting(model, target, options, errors);
    EXPECT_TRUE(succeeded(plan)) << errors;
    return plan;
  };
  PlanOptions keep = training(1, 1, 1, 2);
  keep.training.recompute = RecomputePolicy::None;
  PlanOptions recompute = keep;
  recompute.training.recompute = RecomputePolicy::Segments;
  FailureOr<Plan> kept = planWith(keep);
  FailureOr<Plan> recomputed = planWith(recompute);
  ASSERT_TRUE(succeeded(kept) && succeeded(recomputed));
  ASSERT_LT(recomputed->peakMemoryBytes, kept->peakMemoryBytes);

  // With memory between the two, the search recomputes some segments: it
  // runs slower than keeping everything and no slower than recomputing
  // everything.
  PlanOptions options = withUsableBytes(
      training(1, 1, 1, 2),
      (recomputed->peakMemoryBytes + kept->peakMemoryBytes) / 2);
  FailureOr<Plan> plan = planWith(options);
  ASSERT_TRUE(succeeded(plan));
  EXPECT_GT(plan->training->recomputedSegments, 0);
  EXPECT_LE(plan->training->recomputedSegments, plan->numSegments);
  EXPECT_TRUE(plan->training->recomputeSearched);
  EXPECT_GT(plan->stepTime, kept->stepTime);
  EXPECT_LE(plan->stepTime, recomputed->stepTime);
  EXPECT_LE(plan->peakMemoryBytes, plan->usableMemoryBytes);

  // Forbidden to recompute, it does not fit.
  options.training.recompute = RecomputePolicy::None;
  std::string errors;
  EXPECT_TRUE(failed(planCollecting(model, target, options, errors)));
  EXPECT_NE(errors.find("does not fit on 1 device"), std::string::npos)
      << errors;
  EXPECT_NE(errors.find("with the ZeRO stage and recomputation searched it "
                        "fits"),
            std::string::npos)
      << errors;
}

TEST(PlanTraining, InterleavedAndTensorParallelTrainingPlans) {
  test::ModelShape shape = smallTransformer(4, 8);
  shape.seq = 512;
  shape.hidden = 1024;
  shape.heads = 16;
  TestModel model = parse(test::writeTransformer(shape));
  ASSERT_TRUE(model.module);
  PlanOptions options = training(2, 2, 2, 4);
  options.schedule = ScheduleChoice{ScheduleKind::Interleaved, 2};
  std::string errors;
  FailureOr<Plan> plan =
      planCollecting(model, test::loadTestTarget(8), options, errors);
  ASSERT_TRUE(succeeded(plan)) << errors;
  ASSERT_EQ(plan->stages.size(), 4u);
  // Each forward collective of the tensor-parallel group is answered by one
  // in the backward, of the same size; the backward adds the all-reduces of
  // the gradients of parameters held whole under split ops (the causal
  // mask, read by attention split by heads).
  int64_t forward = 0, backward = 0;
  std::vector<double> reductionTime(plan->stages.size(), 0.0);
  for (const PlanCommunication &communication : plan->communications) {
    if (communication.kind == CollectiveKind::SendRecv)
      continue;
    if (!communication.parameter.empty()) {
      EXPECT_EQ(communication.phase, PipelinePhase::Backward);
      EXPECT_EQ(communication.kind, CollectiveKind::AllReduce);
      reductionTime[communication.stage] += communication.time;
      continue;
    }
    (communication.phase == PipelinePhase::Forward ? forward : backward) +=
        communication.bytes;
  }
  EXPECT_GT(forward, 0);
  EXPECT_EQ(forward, backward);
  for (const PlanStage &stage : plan->stages) {
    EXPECT_GT(reductionTime[stage.index], 0);
    EXPECT_NEAR(stage.backwardCollectiveTime,
                stage.collectiveTime + reductionTime[stage.index],
                1e-9 * stage.collectiveTime);
    EXPECT_GT(stage.update.cost.total(), 0);
    EXPECT_EQ(stage.update.group.size(), 2u);
  }
}

TEST(PlanTraining, InferencePlansHaveNoTrainingState) {
  TestModel model = parse(writeMatmulChain(2, 256, 1024));
  ASSERT_TRUE(model.module);
  std::string errors;
  FailureOr<Plan> plan =
      planCollecting(model, test::loadTestTarget(1), PlanOptions(), errors);
  ASSERT_TRUE(succeeded(plan)) << errors;
  EXPECT_FALSE(plan->training);
  EXPECT_EQ(plan->stages.front().memory.gradients, 0);
  EXPECT_EQ(plan->stages.front().memory.optimizerState, 0);
  EXPECT_EQ(plan->schedule.getPhases().size(), 1u);
}

TEST(PlanTraining, OptionsNeedTrain) {
  PlanOptions options;
  options.training.zero = ZeroStage::Gradients;
  llvm::Error error = validatePlanOptions(options);
  ASSERT_TRUE(static_cast<bool>(error));
  EXPECT_EQ(llvm::toString(std::move(error)),
            "--zero applies to training plans only; add --train");
  options = PlanOptions();
  options.costOptions.computePrecision = Precision::BF16;
  error = validatePlanOptions(options, "");
  ASSERT_TRUE(static_cast<bool>(error));
  EXPECT_EQ(llvm::toString(std::move(error)),
            "precision applies to training plans only; add train");
  options = training();
  options.objective = PlanObjective::Latency;
  error = validatePlanOptions(options);
  ASSERT_TRUE(static_cast<bool>(error));
  EXPECT_NE(llvm::toString(std::move(error)).find("--objective=latency"),
            std::string::npos);
}

} // namespace
