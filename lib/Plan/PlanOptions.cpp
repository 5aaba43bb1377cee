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
  else
    binder.pin("batch", globalBatch,
               "With --train on several devices: the global batch; the plan "
               "chooses the pipeline stages and replicas, each microbatch "
               "the model's batch (default: devices x microbatches x the "
               "model's batch, all replicas)");
  binder.choice<PlanObjective>(
      "objective", objective,
      {PlanObjective::Throughput, PlanObjective::Latency},
      stringifyPlanObjective, "What to optimise");
  binder.text<ScheduleChoice>(
      "schedule", schedule, ScheduleChoice::parse, "auto",
      "Pipeline schedule: gpipe, 1f1b, interleaved or interleaved:V (V model "
      "chunks per device, 2 by default); auto is gpipe for inference, and "
      "for training the fastest that fits of 1f1b, interleaved:2, "
      "interleaved:3, interleaved:4 and gpipe");
  binder.flag("sequence-parallel", sequenceParallel,
              "Sequence parallelism: hold the activations between layers "
              "split along the sequence over the tensor-parallel group, "
              "and let ops split token dimensions and partial sums be "
              "reduce-scattered");
  binder.flag("weigh-sequence-parallel", weighSequenceParallel,
              "Plan with and without sequence parallelism and keep the "
              "better");
  binder.flag("uniform-stages", uniformStages,
              "Give every stage the same number of segments (the naive "
              "split, for comparison)");
  binder.fraction("memory-fraction", usableMemoryFraction,
                  "Share of device memory the plan may use");
  binder.flag("allow-tf32", costOptions.allowTF32,
              "Let f32 contractions run in TF32");
  binder.flag("fuse-pointwise", costOptions.fusePointwise,
              "Price a pointwise op whose operand nothing else reads as fused "
              "into that operand's producer (bias, activation, scaling and "
              "residual adds as fused-kernel frameworks run them; always for "
              "inference on cpu targets, whose programs run them so)");
  if (set != PlanOptionSet::Planning)
    return;
  binder.flag("train", training.enabled,
              "Plan a training step (forward, backward and optimizer "
              "update) instead of inference");
  binder.choice<Optimizer>(
      "optimizer", training.optimizer,
      {Optimizer::SGD, Optimizer::Momentum, Optimizer::Adam, Optimizer::AdamW},
      stringifyOptimizer, "Optimizer of the training step");
  binder.choice<Precision>(
      "precision", costOptions.computePrecision,
      {Precision::F32, Precision::BF16, Precision::F16},
      stringifyTrainingPrecision, "model",
      "Precision the training step computes and holds floating-point "
      "tensors in, with fp32 master weights for the half precisions (model: "
      "the model's own element types)");
  binder.choice<ZeroStage>(
      "zero", training.zero,
      {ZeroStage::None, ZeroStage::OptimizerState, ZeroStage::Gradients},
      stringifyZeroStage, "auto",
      "ZeRO stage of a training step: 1 shards the optimizer state over the "
      "data-parallel replicas, 2 the gradients too (auto: searched)");
  binder.choice<RecomputePolicy>(
      "recompute", training.recompute,
      {RecomputePolicy::None, RecomputePolicy::Segments,
       RecomputePolicy::Layers},
      stringifyRecomputePolicy, "auto",
      "Activation recomputation of a training step: none; segments (every "
      "segment keeps only its outputs and recomputes the rest before its "
      "backward); layers (as segments, but a segment always followed by "
      "another, as a transformer layer's attention is by its MLP, keeps "
      "nothing: the pair recomputes from one stash); auto: chosen per "
      "segment, where memory needs it");
}

ScheduleChoice PlanOptions::getSchedule() const {
  if (schedule)
    return *schedule;
  return {training.enabled ? ScheduleKind::OneFOneB : ScheduleKind::GPipe, 1};
}

std::vector<ScheduleChoice> PlanOptions::getSearchableSchedules() {
  std::vector<ScheduleChoice> schedules = {{ScheduleKind::OneFOneB, 1}};
  for (int64_t chunks = 2; chunks <= 4; ++chunks)
    schedules.push_back({ScheduleKind::Interleaved, chunks});
  schedules.push_back({ScheduleKind::GPipe, 1});
  return schedules;
}

llvm::Error cleave::validatePlanOptions(const PlanOptions &options,
                                        llvm::StringRef prefix) {
  // The checker only reads the fields it is shown.
  PlanOptions copy = options;
  OptionChecker checker(prefix);
  copy.bindOptions(checker, PlanOptionSet::Planning);
  if (llvm::Error error = checker.takeError())
    return error;
  if (options.sequenceParallel && options.weighSequenceParallel)
    return llvm::createStringError(
        prefix + "sequence-parallel pins sequence parallelism on and " +
        prefix + "weigh-sequence-parallel weighs it against none: give one");
  if (options.training.enabled) {
    if (options.objective == PlanObjective::Latency)
      return llvm::createStringError(
          prefix + "objective=latency does not apply to " + prefix +
          "train: a training step is planned for its time per sample");
    return llvm::Error::success();
  }
  const char *trainingOnly = options.costOptions.computePrecision ? "precision"
                             : options.training.zero              ? "zero"
                             : options.training.recompute         ? "recompute"
                                                                  : nullptr;
  if (trainingOnly)
    return llvm::createStringError(prefix + trainingOnly +
                                   " applies to training plans only; add " +
                                   prefix + "train");
  return llvm::Error::success();
}
