//===- PlanOptions.cpp - the options a user sets on the planner -*- C++ -*-===//
//
// The one declaration of the plan options that `cleave plan`, `cleave
// compile`, `cleave-plan` and `cleave-compile-pipeline` offer, and their
// checks.
//
//===----------------------------------------------------------------------===//

#include "cleave/Plan/Plan.h"

#include "cleave/Support/OptionBinder.h"

using namespace cleave;

llvm::StringRef cleave::stringifyPlanObjective(PlanObjective objective) {
  return objective == PlanObjective::Throughput ? "throughput" : "latency";
}

void PlanOptions::bindOptions(OptionBinder &binder, PlanOptionSet set) {
  binder.pin("pp", pipelineStages, "Pipeline stages (default: searched)");
  binder.pin("tp", tensorParallel,
             "Tensor-parallel degree (default: searched)");
  binder.pin("dp", dataParallel, "Data-parallel replicas (default: searched)");
  binder.pin("microbatches", microbatches,
             "Microbatches per step (default: searched)");
  if (set == PlanOptionSet::Planning)
    binder.pin("batch", globalBatch,
               "Global batch (default: the model's batch dimension)");
  binder.choice<PlanObjective>(
      "objective", objective,
      {PlanObjective::Throughput, PlanObjective::Latency},
      stringifyPlanObjective, "What to optimise");
  binder.text<ScheduleChoice>(
      "schedule", schedule, ScheduleChoice::parse,
      "Pipeline schedule: gpipe, 1f1b, interleaved or interleaved:V (V model "
      "chunks per device, 2 by default)");
  binder.flag("sequence-parallel", sequenceParallel,
              "Allow reduce-scatter of partial sums into splits");
  binder.flag("uniform-stages", uniformStages,
              "Give every stage the same number of segments (the naive "
              "split, for comparison)");
  binder.fraction("memory-fraction", usableMemoryFraction,
                  "Share of device memory the plan may use");
  binder.flag("allow-tf32", costOptions.allowTF32,
              "Let f32 contractions run in TF32");
}

llvm::Error cleave::validatePlanOptions(const PlanOptions &options,
                                        llvm::StringRef prefix) {
  // The checker only reads the fields it is shown.
  PlanOptions copy = options;
  OptionChecker checker(prefix);
  copy.bindOptions(checker, PlanOptionSet::Planning);
  return checker.takeError();
}
