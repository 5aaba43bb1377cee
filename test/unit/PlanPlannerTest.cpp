//===- PlanPlannerTest.cpp - segmentation, options, errors, IR -*- C++ -*-===//
//
// Repeated layers are recognised; pinned options are honoured; options that
// contradict each other and models that do not fit are errors that say why;
// the plan is written onto the IR as the partitioner's contract.
//
//===----------------------------------------------------------------------===//

#include "PlanTestModels.h"

#include "cleave/Dialect/Cleave/IR/CleaveOps.h"
#include "cleave/Plan/Planner.h"
#include "cleave/Plan/Segmentation.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace cleave;

namespace {

/// A parsed model and its function.
struct TestModel {
  std::unique_ptr<MLIRContext> context;
  OwningOpRef<ModuleOp> module;
  func::FuncOp function;
};

TestModel parse(const std::string &source) {
  TestModel model;
  model.context = test::makePlanContext();
  model.module = test::parsePlanModule(*model.context, source);
  if (model.module)
    model.function = *model.module->getOps<func::FuncOp>().begin();
  return model;
}

/// Plans, collecting the error messages.
FailureOr<Plan> planCollecting(TestModel &model,
                               const TargetDescription &target,
                               const PlanOptions &options,
                               std::string &errors) {
  ScopedDiagnosticHandler handler(model.context.get(), [&](Diagnostic &d) {
    errors += d.str() + "\n";
    for (const Diagnostic &note : d.getNotes())
      errors += "note: " + note.str() + "\n";
    return success();
  });
  return planModel(*model.module, target, options);
}

test::ModelShape transformerShape(int64_t layers, int64_t batch = 1) {
  test::ModelShape shape;
  shape.layers = layers;
  shape.batch = batch;
  shape.seq = 512;
  shape.hidden = 1024;
  shape.heads = 16;
  return shape;
}

//===----------------------------------------------------------------------===//
// Segmentation
//===----------------------------------------------------------------------===//

TEST(PlanSegmentation, RepeatedLayersShareAClass) {
  for (int64_t layers : {1, 2, 6}) {
    TestModel model = parse(test::writeTransformer(transformerShape(layers)));
    ASSERT_TRUE(model.module);
    FailureOr<SegmentedModel> segmented = segmentModel(model.function);
    ASSERT_TRUE(succeeded(segmented));
    // Per layer the attention block and the MLP block, then the final norm.
    EXPECT_EQ(segmented->segments.size(), static_cast<size_t>(2 * layers + 1));
    ASSERT_EQ(segmented->classes.size(), 3u);
    EXPECT_EQ(segmented->classes[0].numInstances, layers);
    EXPECT_EQ(segmented->classes[1].numInstances, layers);
    for (auto [index, segment] : llvm::enumerate(segmented->segments)) {
      if (index + 1 < segmented->segments.size()) {
        EXPECT_EQ(segment.segmentClass, static_cast<int64_t>(index % 2));
      }
      // Exactly one activation crosses each cut.
      EXPECT_EQ(segment.outputs.size(), 1u);
    }
  }
}

TEST(PlanSegmentation, DifferentShapesDoNotShareAClass) {
  // Two MLP blocks of different widths in one function: written as two
  // one-layer stacks chained by hand.
  test::ModelShape narrow;
  narrow.layers = 1;
  std::string source = test::writeMLPStack(narrow);
  TestModel model = parse(source);
  ASSERT_TRUE(model.module);
  FailureOr<SegmentedModel> one = segmentModel(model.function);
  ASSERT_TRUE(succeeded(one));
  EXPECT_EQ(one->classes.size(), 1u);

  // The last layer's output is the function's result, which leaves its
  // segment whole (a sequence-parallel plan passes the others on split):
  // it is a class of its own.
  test::ModelShape threeLayers = narrow;
  threeLayers.layers = 3;
  TestModel stacked = parse(test::writeMLPStack(threeLayers));
  FailureOr<SegmentedModel> three = segmentModel(stacked.function);
  ASSERT_TRUE(succeeded(three));
  EXPECT_EQ(three->classes.size(), 2u);
  ASSERT_EQ(three->segments.size(), 3u);
  EXPECT_EQ(three->segments[0].segmentClass, three->segments[1].segmentClass);
  EXPECT_NE(three->segments[1].segmentClass, three->segments[2].segmentClass);

  // Weight names do not matter; the weights' shapes do.
  test::ModelShape renamed = threeLayers;
  renamed.weightPrefix = "other.";
  TestModel other = parse(test::writeMLPStack(renamed));
  FailureOr<SegmentedModel> otherThree = segmentModel(other.function);
  ASSERT_TRUE(succeeded(otherThree));
  EXPECT_EQ(otherThree->classes.size(), 2u);
}

TEST(PlanSegmentation, TracesBatchAndTokenDims) {
  TestModel model = parse(test::writeTransformer(transformerShape(1, 2)));
  FailureOr<SegmentedModel> segmented = segmentModel(model.function);
  ASSERT_TRUE(succeeded(segmented));
  EXPECT_EQ(segmented->batchSize, 2);
  EXPECT_TRUE(segmented->batchSplittable);
  int checked = 0;
  for (Operation *op : segmented->ops) {
    auto matmul = dyn_cast<MatMulOp>(op);
    if (!matmul)
      continue;
    Value result = matmul.getOutput();
    auto type = cast<RankedTensorType>(result.getType());
    EXPECT_EQ(segmented->getBatchDim(result), 0);
    if (type.getRank() == 3) {
      // [B, S, features]: batch and sequence are token dimensions.
      EXPECT_TRUE(segmented->isTokenDim(result, 0));
      EXPECT_TRUE(segmented->isTokenDim(result, 1));
      EXPECT_FALSE(segmented->isTokenDim(result, 2));
    } else {
      // [B, heads, S, S] or [B, heads, S, D]: heads are features.
      EXPECT_FALSE(segmented->isTokenDim(result, 1));
      EXPECT_TRUE(segmented->isTokenDim(result, 2));
    }
    ++checked;
  }
  EXPECT_EQ(checked, 8);
}

//===----------------------------------------------------------------------===//
// The planner
//===----------------------------------------------------------------------===//

TEST(PlanPlanner, FindsMegatronLayoutOnATransformer) {
  TestModel model = parse(test::writeTransformer(transformerShape(2)));
  ASSERT_TRUE(model.module);
  TargetDescription target = test::loadTestTarget(8);
  PlanOptions options;
  options.tensorParallel = 4;
  options.pipelineStages = 2;
  std::string errors;
  FailureOr<Plan> plan = planCollecting(model, target, options, errors);
  ASSERT_TRUE(succeeded(plan)) << errors;
  EXPECT_EQ(plan->mesh, (DeviceMesh{2, 4, 1}));

  auto layout = [&](llvm::StringRef name) -> std::optional<int64_t> {
    for (const PlanWeight &weight : plan->weights)
      if (weight.name == name)
        return weight.splitDim;
    ADD_FAILURE() << "no weight " << name.str();
    return std::nullopt;
  };
  for (int layer = 0; layer < 2; ++layer) {
    std::string p = "l" + std::to_string(layer) + "_";
    EXPECT_EQ(layout(p + "q_w"), 1);
    EXPECT_EQ(layout(p + "k_w"), 1);
    EXPECT_EQ(layout(p + "v_w"), 1);
    EXPECT_EQ(layout(p + "o_w"), 0);
    EXPECT_EQ(layout(p + "fc1_w"), 1);
    EXPECT_EQ(layout(p + "fc2_w"), 0);
    EXPECT_EQ(layout(p + "ln1_g"), std::nullopt);
  }
  // Two all-reduces per layer; besides them only the stage boundary's send
  // (and the all-gather of a sliced send, when that is cheaper).
  int64_t allReduces = 0, sends = 0, gathers = 0, others = 0;
  for (const PlanCommunication &communication : plan->communications) {
    if (communication.kind == CollectiveKind::AllReduce)
      ++allReduces;
    else if (communication.kind == CollectiveKind::SendRecv)
      ++sends;
    else if (communication.kind == CollectiveKind::AllGather)
      ++gathers;
    else
      ++others;
  }
  EXPECT_EQ(allReduces, 4);
  EXPECT_EQ(sends, 1);
  EXPECT_LE(gathers, sends);
  EXPECT_EQ(others, 0);
  for (const PlanCommunication &communication : plan->communications)
    if (communication.kind == CollectiveKind::AllReduce) {
      EXPECT_EQ(communication.group.size(), 4u);
      EXPECT_EQ(communication.bytes, 4 * 512 * 1024);
    }
}

TEST(PlanPlanner, HonoursPinnedOptions) {
  TestModel model = parse(test::writeMLPStack(transformerShape(4, 8)));
  ASSERT_TRUE(model.module);
  TargetDescription target = test::loadTestTarget(8);
  struct Pins {
    std::optional<int64_t> pp, tp, dp, microbatches;
  };
  for (Pins pins : {Pins{2, std::nullopt, std::nullopt, std::nullopt},
                    Pins{std::nullopt, 4, std::nullopt, std::nullopt},
                    Pins{std::nullopt, std::nullopt, 8, std::nullopt},
                    Pins{2, 2, std::nullopt, 4}, Pins{4, 1, 2, 2}}) {
    PlanOptions options;
    options.pipelineStages = pins.pp;
    options.tensorParallel = pins.tp;
    options.dataParallel = pins.dp;
    options.microbatches = pins.microbatches;
    std::string errors;
    FailureOr<Plan> plan = planCollecting(model, target, options, errors);
    ASSERT_TRUE(succeeded(plan)) << errors;
    EXPECT_EQ(plan->mesh.size(), 8);
    if (pins.pp) {
      EXPECT_EQ(plan->mesh.pp, *pins.pp);
    }
    if (pins.tp) {
      EXPECT_EQ(plan->mesh.tp, *pins.tp);
    }
    if (pins.dp) {
      EXPECT_EQ(plan->mesh.dp, *pins.dp);
    }
    if (pins.microbatches) {
      EXPECT_EQ(plan->microbatches, *pins.microbatches);
    }
    EXPECT_EQ(plan->microbatchSize * plan->microbatches * plan->mesh.dp, 8);
    EXPECT_EQ(static_cast<int64_t>(plan->stages.size()), plan->mesh.pp);
    // Every alternative respects the pins too.
    for (const PlanAlternative &alternative : plan->alternatives) {
      if (pins.pp) {
        EXPECT_EQ(alternative.mesh.pp, *pins.pp);
      }
      if (pins.tp) {
        EXPECT_EQ(alternative.mesh.tp, *pins.tp);
      }
    }
  }
}

TEST(PlanPlanner, ChoosesTheBestAlternative) {
  TestModel model = parse(test::writeTransformer(transformerShape(2, 4)));
  TargetDescription target = test::loadTestTarget(8);
  std::string errors;
  FailureOr<Plan> plan = planCollecting(model, target, {}, errors);
  ASSERT_TRUE(succeeded(plan)) << errors;
  ASSERT_FALSE(plan->alternatives.empty());
  EXPECT_EQ(plan->alternatives.front().verdict, "chosen");
  EXPECT_EQ(plan->alternatives.front().mesh, plan->mesh);
  for (const PlanAlternative &alternative : plan->alternatives) {
    if (alternative.feasible) {
      EXPECT_LE(alternative.throughput, plan->throughput * (1 + 1e-12));
    }
    EXPECT_FALSE(alternative.verdict.empty());
  }
  // pp=8 needs more segments than the 5 there are.
  bool sawTooManyStages =
      llvm::any_of(plan->alternatives, [](const PlanAlternative &alternative) {
        return alternative.mesh.pp == 8 &&
               llvm::StringRef(alternative.verdict).contains("exceeds");
      });
  EXPECT_TRUE(sawTooManyStages);
  // The step is the pipeline with its bubble.
  double sum = 0, max = 0;
  for (const PlanStage &stage : plan->stages) {
    sum += stage.time();
    max = std::max(max, stage.time());
  }
  EXPECT_NEAR(plan->stepTime, sum + (plan->microbatches - 1) * max,
              1e-12 + 1e-9 * plan->stepTime);
  EXPECT_NEAR(plan->throughput, 4 / plan->stepTime, 1e-6 * plan->throughput);
}

TEST(PlanPlanner, LatencyObjectivePrefersFewerStages) {
  TestModel model = parse(test::writeTransformer(transformerShape(2, 4)));
  TargetDescription target = test::loadTestTarget(8);
  PlanOptions throughput, latency;
  latency.objective = PlanObjective::Latency;
  std::string errors;
  FailureOr<Plan> fast = planCollecting(model, target, throughput, errors);
  FailureOr<Plan> quick = planCollecting(model, target, latency, errors);
  ASSERT_TRUE(succeeded(fast) && succeeded(quick)) << errors;
  EXPECT_LE(quick->latency, fast->latency * (1 + 1e-12));
  EXPECT_GE(fast->throughput, quick->throughput * (1 - 1e-12));
}

/// The peak memory per device of the best plan on `devices` devices with
/// memory to spare.
int64_t peakMemory(TestModel &model, int64_t devices, PlanOptions options) {
  TargetDescription target = test::loadTestTarget(devices);
  std::string errors;
  FailureOr<Plan> plan = planCollecting(model, target, options, errors);
  EXPECT_TRUE(succeeded(plan)) << errors;
  return succeeded(plan) ? plan->peakMemoryBytes : 0;
}

PlanOptions withUsableBytes(PlanOptions options, int64_t bytes) {
  TargetDescription target = test::loadTestTarget(1);
  options.usableMemoryFraction = static_cast<double>(bytes) /
                                 static_cast<double>(target.device.memoryBytes);
  return options;
}

TEST(PlanPlanner, ReportsWhatDoesNotFit) {
  TestModel model = parse(test::writeMLPStack(transformerShape(4)));
  ASSERT_TRUE(model.module);
  // Memory between what 2 devices and what 8 devices need per device.
  int64_t onTwo = peakMemory(model, 2, {});
  int64_t onEight = peakMemory(model, 8, {});
  ASSERT_LT(onEight, onTwo);
  int64_t usable = (onTwo + onEight) / 2;
  PlanOptions options = withUsableBytes({}, usable);
  TargetDescription target = test::loadTestTarget(2);
  std::string errors;
  ASSERT_TRUE(failed(planCollecting(model, target, options, errors)));
  EXPECT_NE(errors.find("does not fit on 2 devices of h100-sxm"),
            std::string::npos)
      << errors;
  EXPECT_NE(errors.find("stage "), std::string::npos) << errors;
  EXPECT_NE(errors.find("(rank"), std::string::npos) << errors;
  EXPECT_NE(errors.find(") over the "), std::string::npos) << errors;
  EXPECT_NE(errors.find(std::to_string(usable) + " usable"), std::string::npos)
      << errors;

  // The suggested device count fits, and half of it does not.
  size_t at = errors.find("it fits on ");
  ASSERT_NE(at, std::string::npos) << errors;
  int64_t suggested = std::stoll(errors.substr(at + 11));
  EXPECT_GT(suggested, 2);
  EXPECT_LE(suggested, 8);
  std::string ignored;
  TargetDescription enough = test::loadTestTarget(suggested);
  EXPECT_TRUE(succeeded(planCollecting(model, enough, options, ignored)));
  if (suggested / 2 > 2) {
    TargetDescription half = test::loadTestTarget(suggested / 2);
    EXPECT_TRUE(failed(planCollecting(model, half, options, ignored)));
  }
}

TEST(PlanPlanner, SuggestsUnpinningWhatDoesNotFit) {
  TestModel model = parse(test::writeMLPStack(transformerShape(4)));
  ASSERT_TRUE(model.module);
  PlanOptions pinned;
  pinned.tensorParallel = 1;
  int64_t free = peakMemory(model, 4, {});
  int64_t withPin = peakMemory(model, 4, pinned);
  ASSERT_LT(free, withPin);
  PlanOptions options = withUsableBytes(pinned, (free + withPin) / 2);
  TargetDescription target = test::loadTestTarget(4);
  std::string errors;
  ASSERT_TRUE(failed(planCollecting(model, target, options, errors)));
  EXPECT_NE(errors.find("tp=1"), std::string::npos) << errors;
  EXPECT_NE(errors.find("without the pinned options it fits as pp="),
            std::string::npos)
      << errors;
}

TEST(PlanPlanner, RejectsContradictoryOptions) {
  TestModel model = parse(test::writeMLPStack(transformerShape(2, 4)));
  TargetDescription target = test::loadTestTarget(8);
  struct Case {
    PlanOptions options;
    const char *message;
  };
  std::vector<Case> cases(6);
  cases[0].options.pipelineStages = 3;
  cases[0].message = "--pp=3 does not divide the 8 devices";
  cases[1].options.pipelineStages = 2;
  cases[1].options.tensorParallel = 2;
  cases[1].options.dataParallel = 1;
  cases[1].message = "pp=2 x tp=2 x dp=1 does not make the 8 devices";
  cases[2].options.dataParallel = 8;
  cases[2].message = "--dp=8 does not divide the global batch 4";
  cases[3].options.microbatches = 3;
  cases[3].message = "--microbatches=3 does not divide the batch of a replica";
  cases[4].options.pipelineStages = 4;
  cases[4].message = "--pp=4 exceeds the 2 segments";
  cases[5].options.tensorParallel = 0;
  cases[5].message = "--tp must be a positive integer, got 0";
  for (const Case &c : cases) {
    std::string errors;
    EXPECT_TRUE(failed(planCollecting(model, target, c.options, errors)));
    EXPECT_NE(errors.find(c.message), std::string::npos)
        << "expected '" << c.message << "' in:\n"
        << errors;
  }
}

TEST(PlanPlanner, GlobalBatchScalesTheWork) {
  // The same model planned for a larger global batch takes proportionally
  // longer per step on one device.
  TestModel model = parse(test::writeMLPStack(transformerShape(1, 2)));
  TargetDescription target = test::loadTestTarget(1);
  PlanOptions small, large;
  small.microbatches = 1;
  large.microbatches = 1;
  large.globalBatch = 8;
  std::string errors;
  FailureOr<Plan> a = planCollecting(model, target, small, errors);
  FailureOr<Plan> b = planCollecting(model, target, large, errors);
  ASSERT_TRUE(succeeded(a) && succeeded(b)) << errors;
  // Four times the samples: the work scales, the weight reads do not.
  EXPECT_GT(b->stepTime, 3.0 * a->stepTime);
  EXPECT_LE(b->stepTime, 4.0 * a->stepTime * (1 + 1e-9));
  EXPECT_EQ(b->globalBatch, 8);
  EXPECT_EQ(b->microbatchSize, 8);
}

/// `target` with a calibration whose matrix products run at 1e10 to 1e11
/// FLOP/s with their data in caches of `cacheBytes`, and at half that with
/// it out of them.
TargetDescription withCaches(TargetDescription target, int64_t cacheBytes) {
  DeviceCalibration calibration;
  calibration.cacheBytes = cacheBytes;
  calibration.tables[static_cast<unsigned>(KernelClass::Matmul)] = {
      {1.0e6, 1.0e10, 5.0e9, 0}, {1.0e12, 1.0e11, 5.0e10, 0}};
  target.device.calibration = std::move(calibration);
  return target;
}

TEST(PlanPlanner, StagesPayForWhatTheCachesDoNotHold) {
  // One stage of an MLP whose 32 MB of weights no cache of these holds
  // whole: the share 1 - cacheBytes / footprint of its products' data comes
  // from beyond the caches, at the streamed rate.
  TestModel model = parse(test::writeMLPStack(transformerShape(1)));
  TargetDescription base = test::loadTestTarget(1);
  PlanOptions options;
  options.microbatches = 1;
  auto plan = [&](int64_t cacheBytes) {
    std::string errors;
    FailureOr<Plan> result =
        planCollecting(model, withCaches(base, cacheBytes), options, errors);
    EXPECT_TRUE(succeeded(result)) << errors;
    return succeeded(result) ? *result : Plan();
  };
  Plan resident = plan(int64_t{1} << 50);
  ASSERT_EQ(resident.stages.size(), 1u);
  int64_t footprint = resident.stages[0].memory.total();
  Plan none = plan(1);
  Plan half = plan(footprint / 2);
  ASSERT_EQ(none.stages.size(), 1u);
  ASSERT_EQ(half.stages.size(), 1u);
  // Nothing held: the miss time (the streamed time less the resident one)
  // counts whole, 1 - 1 / footprint of it.
  double missTime =
      (none.stages[0].computeTime - resident.stages[0].computeTime) /
      (1 - 1.0 / static_cast<double>(footprint));
  // Half the rate: the streamed time is twice the resident one, less the
  // call overhead (none here) and the work of other kernel classes.
  EXPECT_GT(missTime, 0);
  EXPECT_LT(missTime, resident.stages[0].computeTime);
  double halfShare =
      1 - static_cast<double>(footprint / 2) / static_cast<double>(footprint);
  EXPECT_NEAR(half.stages[0].computeTime,
              resident.stages[0].computeTime + halfShare * missTime,
              1e-9 * none.stages[0].computeTime);
  EXPECT_GT(half.stepTime, resident.stepTime);
  // The predicted timeline adds up to the stage.
  double scheduled = 0;
  for (const PlanStageEvent &event : half.stages[0].schedule)
    if (event.kind == PlanStageEvent::Kind::Compute)
      scheduled += event.duration;
  EXPECT_NEAR(scheduled, half.stages[0].computeTime,
              1e-9 * half.stages[0].computeTime);
}

//===----------------------------------------------------------------------===//
// The IR contract
//===----------------------------------------------------------------------===//

TEST(PlanPlanner, AnnotatesTheIR) {
  TestModel model = parse(test::writeTransformer(transformerShape(2)));
  TargetDescription target = test::loadTestTarget(8);
  PlanOptions options;
  options.tensorParallel = 4;
  options.pipelineStages = 2;
  std::string errors;
  FailureOr<Plan> plan = planCollecting(model, target, options, errors);
  ASSERT_TRUE(succeeded(plan)) << errors;
  ASSERT_TRUE(succeeded(annotateModule(*model.module, *plan)));

  auto mesh = model.module->getOperation()->getAttrOfType<DictionaryAttr>(
      "cleave.mesh");
  ASSERT_TRUE(mesh);
  EXPECT_EQ(cast<IntegerAttr>(mesh.get("pp")).getInt(), 2);
  EXPECT_EQ(cast<IntegerAttr>(mesh.get("tp")).getInt(), 4);
  EXPECT_EQ(cast<IntegerAttr>(mesh.get("dp")).getInt(), 1);
  EXPECT_EQ(model.module->getOperation()
                ->getAttrOfType<IntegerAttr>("cleave.microbatches")
                .getInt(),
            plan->microbatches);

  int64_t lastStage = 0;
  for (Operation &op : model.function.getBody().front().without_terminator()) {
    auto stage = op.getAttrOfType<IntegerAttr>("cleave.stage");
    ASSERT_TRUE(stage) << op.getName().getStringRef().str();
    if (!isa<WeightOp, ConstantOp>(op)) {
      // Stages are contiguous in program order.
      EXPECT_GE(stage.getInt(), lastStage);
      lastStage = stage.getInt();
    }
    auto matmul = dyn_cast<MatMulOp>(op);
    if (!matmul)
      continue;
    auto weight = dyn_cast_or_null<WeightOp>(matmul.getRhs().getDefiningOp());
    if (!weight)
      continue;
    // A [B, S, K] x [K, N] matmul has loops B, S, N, K.
    auto loop = op.getAttrOfType<IntegerAttr>("cleave.tp_loop");
    ASSERT_TRUE(loop) << weight.getName().str();
    bool rowParallel = weight.getName().ends_with("o_w") ||
                       weight.getName().ends_with("fc2_w");
    EXPECT_EQ(loop.getInt(), rowParallel ? 3 : 2) << weight.getName().str();
    // The weight is placed with its user.
    EXPECT_EQ(weight->getAttrOfType<IntegerAttr>("cleave.stage").getInt(),
              stage.getInt());
  }
  EXPECT_EQ(lastStage, 1);
}

} // namespace
