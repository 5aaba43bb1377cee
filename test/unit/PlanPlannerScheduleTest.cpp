//===- PlanPlannerScheduleTest.cpp - plans under each schedule -----------===//
//
// The planner under `PlanOptions::schedule`: 1F1B plans inference exactly as
// GPipe does (a forward-only step has one order), the interleaved schedule
// gives each device two model chunks and a smaller bubble, and the schedule
// reaches the IR.
//
//===----------------------------------------------------------------------===//

#include "PlanTestModels.h"

#include "cleave/Plan/Planner.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace cleave;

namespace {

/// Plans a 4-layer transformer with a batch of `batch` on 8 devices as
/// pp=2 x tp=4 with `microbatches`, under `schedule`; collects the errors.
FailureOr<Plan> planWith(ScheduleChoice schedule, int64_t batch,
                         int64_t microbatches, std::string &errors,
                         OwningOpRef<ModuleOp> *keep = nullptr) {
  static std::unique_ptr<MLIRContext> context = test::makePlanContext();
  test::ModelShape shape;
  shape.layers = 4;
  shape.batch = batch;
  shape.seq = 128;
  shape.hidden = 256;
  OwningOpRef<ModuleOp> module =
      test::parsePlanModule(*context, test::writeTransformer(shape));
  if (!module)
    return failure();
  ScopedDiagnosticHandler handler(context.get(), [&](Diagnostic &d) {
    errors += d.str() + "\n";
    return success();
  });
  PlanOptions options;
  options.pipelineStages = 2;
  options.tensorParallel = 4;
  options.microbatches = microbatches;
  options.schedule = schedule;
  FailureOr<Plan> plan = planModel(*module, test::loadTestTarget(8), options);
  if (succeeded(plan) && keep) {
    if (failed(annotateModule(*module, *plan)))
      return failure();
    *keep = std::move(module);
  }
  return plan;
}

const ScheduleChoice kGPipe{ScheduleKind::GPipe, 1};
const ScheduleChoice k1F1B{ScheduleKind::OneFOneB, 1};
const ScheduleChoice kInterleaved{ScheduleKind::Interleaved, 2};

TEST(PlanPlannerSchedule, OneFOneBPlansInferenceAsGPipe) {
  std::string errors;
  FailureOr<Plan> gpipe = planWith(kGPipe, 8, 4, errors);
  FailureOr<Plan> oneFOneB = planWith(k1F1B, 8, 4, errors);
  ASSERT_TRUE(succeeded(gpipe) && succeeded(oneFOneB)) << errors;
  EXPECT_EQ(gpipe->schedule.getKind(), ScheduleKind::GPipe);
  EXPECT_EQ(oneFOneB->schedule.getKind(), ScheduleKind::OneFOneB);
  EXPECT_EQ(oneFOneB->stepTime, gpipe->stepTime);
  EXPECT_EQ(oneFOneB->bubbleFraction, gpipe->bubbleFraction);
  EXPECT_EQ(oneFOneB->peakMemoryBytes, gpipe->peakMemoryBytes);
  ASSERT_EQ(oneFOneB->stages.size(), gpipe->stages.size());
  for (size_t k = 0; k < gpipe->stages.size(); ++k)
    EXPECT_EQ(oneFOneB->stages[k].lastOp, gpipe->stages[k].lastOp);
  // Two stages, four microbatches: each buffers min(m, p) = 2.
  EXPECT_EQ(gpipe->schedule.maxActivationsHeld(), 2);
}

TEST(PlanPlannerSchedule, InterleavedRunsTwoChunksPerDevice) {
  std::string errors;
  OwningOpRef<ModuleOp> module;
  FailureOr<Plan> gpipe = planWith(kGPipe, 8, 4, errors);
  FailureOr<Plan> interleaved = planWith(kInterleaved, 8, 4, errors, &module);
  ASSERT_TRUE(succeeded(gpipe) && succeeded(interleaved)) << errors;
  EXPECT_EQ(interleaved->mesh.pp, 2);
  ASSERT_EQ(interleaved->stages.size(), 4u);
  // Stage s runs on the devices of pipeline stage s mod 2.
  EXPECT_EQ(interleaved->stages[2].ranks, interleaved->stages[0].ranks);
  EXPECT_EQ(interleaved->stages[3].ranks, interleaved->stages[1].ranks);
  EXPECT_NE(interleaved->stages[1].ranks, interleaved->stages[0].ranks);
  EXPECT_LT(interleaved->bubbleFraction, gpipe->bubbleFraction);
  // The device holds both chunks.
  EXPECT_GE(interleaved->peakMemoryBytes,
            interleaved->stages[0].memory.total() +
                interleaved->stages[2].memory.total());
  auto attr = (*module)->getAttrOfType<StringAttr>("cleave.schedule");
  ASSERT_TRUE(attr);
  EXPECT_EQ(attr.getValue(), "interleaved:2");
}

TEST(PlanPlannerSchedule, InterleavedNeedsMicrobatchesInGroupsOfPp) {
  std::string errors;
  FailureOr<Plan> plan = planWith(kInterleaved, 6, 3, errors);
  EXPECT_TRUE(failed(plan));
  EXPECT_NE(errors.find("--schedule=interleaved:2: the interleaved schedule "
                        "runs microbatches in groups of the 2 pipeline "
                        "stages, so their count must be a multiple of 2, "
                        "got 3"),
            std::string::npos)
      << errors;
}

} // namespace
