//===- CompilePipeline.cpp - the compile flow as passes ---------*- C++ -*-===//

#include "cleave/Compile/CompilePipeline.h"

#include "cleave/Dialect/Cleave/IR/CleaveAttributes.h"

#include "cleave/Analysis/Cost/Target.h"
#include "cleave/Dialect/Cleave/Transforms/Pipelines.h"
#include "cleave/Plan/Passes.h"
#include "cleave/Transforms/Autodiff/Passes.h"
#include "cleave/Transforms/Partition/Contract.h"
#include "cleave/Transforms/Partition/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;
using namespace cleave;

//===----------------------------------------------------------------------===//
// The pipeline
//===----------------------------------------------------------------------===//

llvm::Error CompileOptions::validate() const {
  if (devices < 1)
    return llvm::createStringError("devices must be a positive integer, got " +
                                   std::to_string(devices));
  if (llvm::Error error = validateTrainingOptions(getTraining(), ""))
    return error;
  llvm::Expected<PlanOptions> options = plan.get();
  if (!options)
    return options.takeError();
  std::optional<int64_t> microbatches = options->microbatches;
  if (gradients && !train && microbatches && *microbatches > 1)
    return llvm::createStringError(
        "microbatches=" + std::to_string(*microbatches) +
        ": gradients of one call are returned per batch; microbatches "
        "accumulate into one update with train");
  if (gradients && !train && devices > 1)
    return llvm::createStringError(
        "gradients are compiled for one device (devices=" +
        std::to_string(devices) +
        "): partitioning does not place the backward ops of a call that "
        "returns them; a training step (train) runs on data-parallel "
        "replicas");
  if (train && devices > 1) {
    // The devices are pp stages of dp replicas, each replica of a stage
    // tp devices that split its ops, each stage running its part of the
    // step on its replica's share of the global batch.
    int64_t pp = options->pipelineStages.value_or(1);
    int64_t tp = options->tensorParallel.value_or(1);
    if (devices % (pp * tp) != 0)
      return llvm::createStringError(
          "pp=" + std::to_string(pp) + " x tp=" + std::to_string(tp) +
          " does not divide devices=" + std::to_string(devices) +
          ": a training step's devices are pp stages of devices/(pp x tp) "
          "data-parallel replicas of tp devices each");
    int64_t dp = devices / (pp * tp);
    if (options->dataParallel && *options->dataParallel != dp)
      return llvm::createStringError(
          "dp=" + std::to_string(*options->dataParallel) +
          ": a training step on " + std::to_string(devices) +
          " devices with pp=" + std::to_string(pp) +
          " and tp=" + std::to_string(tp) + " has dp=" + std::to_string(dp));
  }
  if (train && devices == 1 && options->tensorParallel &&
      *options->tensorParallel != 1)
    return llvm::createStringError(
        "tp=" + std::to_string(*options->tensorParallel) +
        ": a training step on one device has no tensor-parallel devices");
  if (!train && options->globalBatch)
    return llvm::createStringError(
        "batch=" + std::to_string(*options->globalBatch) +
        ": the global batch is planned for a training step (train); an "
        "inference bundle takes the model's batch");
  if (train && devices == 1 && options->globalBatch)
    return llvm::createStringError(
        "batch=" + std::to_string(*options->globalBatch) +
        ": a training step on one device takes the model's batch times "
        "microbatches; the global batch is planned for several devices");
  if (train && devices == 1 && syncBatchNorm.getValue())
    return llvm::createStringError(
        "sync-batch-norm takes batch statistics over data-parallel "
        "replicas; a step compiled for one device has none (compile for "
        "several devices)");
  if (train && devices == 1 && gradReduction.hasValue())
    return llvm::createStringError(
        "grad-reduction=" + gradReduction.getValue() +
        " chooses when data-parallel replicas reduce their gradients; a "
        "step compiled for one device has none (compile for several "
        "devices)");
  if (gradBucketMb.hasValue() &&
      (!gradReduction.hasValue() || gradReduction.getValue() != "overlap"))
    return llvm::createStringError(
        "grad-bucket-mb applies only with grad-reduction=overlap: buckets "
        "are the reductions that overlap the backward");
  if (train && devices == 1 && zero.getValue() > 0)
    return llvm::createStringError(
        "zero=" + std::to_string(zero.getValue()) +
        " shards the training state over data-parallel replicas; a step "
        "compiled for one device has none (compile for several devices)");
  if (llvm::Error error = validatePlanOptions(*options, /*prefix=*/""))
    return error;
  return checkCompilableSchedule(*options, getTraining(), /*prefix=*/"");
}

TrainingOptions CompileOptions::getTraining() const {
  TrainingOptions training;
  training.gradients = gradients;
  training.loss = loss;
  training.logits = logits;
  training.labels = labels;
  if (ignoreIndex.hasValue())
    training.ignoreIndex = ignoreIndex;
  training.train = train;
  auto copy = [](const auto &option, auto &field) {
    if (option.hasValue())
      field = option.getValue();
  };
  copy(optimizer, training.optimizer);
  copy(learningRate, training.learningRate);
  copy(momentum, training.momentum);
  copy(nesterov, training.nesterov);
  copy(weightDecay, training.weightDecay);
  copy(betas, training.betas);
  copy(epsilon, training.epsilon);
  copy(clipGradNorm, training.clipGradNorm);
  copy(warmupSteps, training.warmupSteps);
  copy(decaySteps, training.decaySteps);
  copy(minLrRatio, training.minLrRatio);
  copy(recompute, training.recompute);
  copy(recomputeLayers, training.recomputeLayers);
  copy(zero, training.zero);
  copy(syncBatchNorm, training.syncBatchNorm);
  copy(gradReduction, training.gradReduction);
  copy(gradBucketMb, training.gradBucketMb);
  copy(precision, training.precision);
  copy(lossScale, training.lossScale);
  copy(lossScaleGrowthInterval, training.lossScaleGrowthInterval);
  training.freeze = freeze;
  return training;
}

llvm::Error cleave::checkCompilableSchedule(const PlanOptions &options,
                                            const TrainingOptions &training,
                                            llvm::StringRef prefix) {
  ScheduleChoice schedule = options.getSchedule();
  if (schedule.virtualStages <= 1)
    return llvm::Error::success();
  std::string name = (prefix + "schedule=" + schedule.str()).str();
  if (!training.train)
    return llvm::createStringError(
        name + ": the interleaved schedule is compiled for training steps (" +
        prefix +
        "train); an inference bundle takes gpipe or 1f1b, and `cleave plan` "
        "predicts the interleaved one");
  if (options.pipelineStages.value_or(1) < 2)
    return llvm::createStringError(
        name +
        ": the interleaved schedule runs model chunks on pipeline "
        "stages; give " +
        prefix + "pp 2 or more");
  return llvm::Error::success();
}

/// The update pass's options: the training options, defaults filled in.
static OptimizerUpdatePassOptions
getOptimizerUpdateOptions(const TrainingOptions &training, StringRef entry) {
  OptimizerUpdatePassOptions update;
  update.entry = entry.str();
  update.optimizer = training.getOptimizer();
  update.learningRate = training.getLearningRate();
  update.momentum = training.momentum.value_or(0);
  update.nesterov = training.nesterov.value_or(false);
  update.weightDecay = training.getWeightDecay();
  std::tie(update.beta1, update.beta2) = training.getBetas();
  update.epsilon = training.epsilon.value_or(1e-8);
  update.clipGradNorm = training.clipGradNorm.value_or(0);
  update.warmupSteps = training.warmupSteps.value_or(0);
  update.decaySteps = training.decaySteps.value_or(0);
  update.minLrRatio = training.minLrRatio.value_or(0);
  if (training.scalesLoss()) {
    update.lossScale = training.getLossScale();
    update.lossScaleGrowthInterval = training.getLossScaleGrowthInterval();
  }
  return update;
}

/// The microbatches of a training step (1 unless pinned).
static int64_t getTrainingMicrobatches(const CompileOptions &options) {
  return cantFail(options.plan.get()).microbatches.value_or(1);
}

/// The pipeline stages of a training step (1 unless pinned).
static int64_t getTrainingStages(const CompileOptions &options) {
  if (!options.train)
    return 1;
  return cantFail(options.plan.get()).pipelineStages.value_or(1);
}

/// The tensor-parallel devices of each replica of a training step's stage
/// (1 unless pinned).
static int64_t getTrainingTensorParallel(const CompileOptions &options) {
  if (!options.train)
    return 1;
  return cantFail(options.plan.get()).tensorParallel.value_or(1);
}

/// Whether a training step is planned into stages, tensor-parallel groups
/// and replicas: when it has pipeline stages or tensor-parallel devices, or
/// when the global batch is given and the plan chooses them (each
/// microbatch is the model's batch).
static bool isPlannedStep(const CompileOptions &options) {
  if (!options.train || options.devices == 1)
    return false;
  return getTrainingStages(options) > 1 ||
         getTrainingTensorParallel(options) > 1 ||
         cantFail(options.plan.get()).globalBatch.has_value();
}

/// The backward: differentiated after simplification, so that the fused
/// ops (gelu, layer_norm) have one rule each rather than their
/// decompositions' chains, and simplified again.
static void addBackward(OpPassManager &pm, const CompileOptions &options,
                        const TrainingOptions &training) {
  AutodiffPassOptions autodiff;
  autodiff.entry = options.entry;
  autodiff.loss = training.getLossResult();
  autodiff.freeze = training.freeze;
  if (training.scalesLoss())
    autodiff.lossScale = training.getLossScale();
  pm.addPass(createAutodiffPass(autodiff));
  buildSimplifyPipeline(pm);
}

/// The plan options of a training step, whose function is one microbatch
/// of one replica: the microbatches and replicas repeat it rather than cut
/// it, and the plan costs the step as it is compiled.
static PlanOptions getTrainingPlanOptions(const CompileOptions &options,
                                          PlanOptions planOptions,
                                          const TrainingOptions &training) {
  // With the global batch the plan chooses the tensor-parallel devices
  // too, unless pinned.
  if (!planOptions.globalBatch)
    planOptions.tensorParallel = getTrainingTensorParallel(options);
  if (planOptions.globalBatch) {
    // The plan chooses the stages and replicas; the microbatch count
    // follows (the global batch over the replicas' microbatches).
    planOptions.microbatchIsModelBatch = true;
  } else {
    int64_t stages = getTrainingStages(options);
    int64_t microbatches = getTrainingMicrobatches(options);
    int64_t replicas =
        options.devices / (stages * getTrainingTensorParallel(options));
    planOptions.pipelineStages = stages;
    planOptions.dataParallel = replicas;
    planOptions.microbatches = microbatches;
    planOptions.modelBatchScale = microbatches * replicas;
  }
  // The plan costs the step as it is compiled: its optimizer, ZeRO stage
  // and recomputation.
  TrainingPlanOptions &costed = planOptions.training;
  costed.enabled = true;
  costed.freeze = training.freeze;
  std::string optimizer = training.getOptimizer();
  costed.optimizer = optimizer == kAdamWOptimizer        ? Optimizer::AdamW
                     : optimizer == kAdamOptimizer       ? Optimizer::Adam
                     : training.momentum.value_or(0) > 0 ? Optimizer::Momentum
                                                         : Optimizer::SGD;
  // Unpinned, the replicas keep their whole state where it fits, and else
  // take the plan's ZeRO stage, which the update reads (`cleave.zero`).
  if (training.zero)
    costed.zero = static_cast<ZeroStage>(*training.zero);
  costed.zeroOnlyToFit = true;
  // Unpinned, the step recomputes the segments the plan chose to
  // recompute (the plan marks their ops), pipelined or not.
  if (training.recompute)
    costed.recompute =
        *training.recompute ? RecomputePolicy::Segments : RecomputePolicy::None;
  if (training.recomputeLayers.value_or(false))
    costed.recompute = RecomputePolicy::Layers;
  return planOptions;
}

/// The update after the backward (`update` holds the microbatches and
/// replicas, or takes them from the plan), then the recomputation when
/// asked for, or of the segments the plan chose.
static void addUpdate(OpPassManager &pm, const CompileOptions &options,
                      const TrainingOptions &training,
                      OptimizerUpdatePassOptions update) {
  update.zero = training.zero.value_or(0);
  update.zeroFromPlan = true;
  update.overlapReduction = training.gradReduction == "overlap";
  update.bucketBytes = static_cast<int64_t>(
      training.gradBucketMb.value_or(kDefaultGradBucketMb) * 1024 * 1024);
  pm.addPass(createOptimizerUpdatePass(update));
  if (training.recompute.value_or(true)) {
    RecomputePassOptions recompute;
    recompute.entry = options.entry;
    // Layers recompute as the plan marks them (every segment, joined
    // where a layer's halves meet).
    recompute.fromPlan = !training.recompute;
    pm.addPass(createRecomputePass(recompute));
  }
}

/// The passes of a training step split into pipeline stages: the plan
/// places the forward ops (the loss attached), the backward of each op
/// runs on its stage, and each stage updates the parameters it reads.
static void buildPipelinedTrainingPipeline(OpPassManager &pm,
                                           const CompileOptions &options,
                                           PlanPassOptions planPassOptions,
                                           PlanOptions planOptions,
                                           const TrainingOptions &training) {
  planOptions = getTrainingPlanOptions(options, planOptions, training);
  pm.addPass(createPlanPass(planPassOptions, planOptions, options.planJSON));
  addBackward(pm, options, training);
  OptimizerUpdatePassOptions update =
      getOptimizerUpdateOptions(training, options.entry);
  update.fromPlan = true;
  addUpdate(pm, options, training, update);
  // With tensor-parallel devices (pinned or planned), the backward and the
  // update split as the forward is split, then the whole step becomes SPMD,
  // its collectives cleave's; with tp=1 these passes leave the step as it
  // is.
  pm.addPass(createShardStepPass({options.entry}));
  pm.addPass(createShardPlanPass({options.entry}));
  pm.addNestedPass<func::FuncOp>(shard::createPartition());
  pm.addPass(createLowerShardCommPass());
  pm.addPass(createOutlineStagesPass({options.entry}));
  // The transfers replayed in the training schedule's order, and each
  // stage's memory against the device's.
  pm.addPass(createVerifyPartitionPass(
      {options.target, options.targetsDir.empty()
                           ? defaultTargetsDirectory()
                           : options.targetsDir.getValue()}));
  // Under the interleaved schedule, each device's model chunks become one
  // program.
  pm.addPass(createGroupChunksPass());
}

llvm::Error cleave::buildCompilePipeline(OpPassManager &pm,
                                         const CompileOptions &options) {
  if (llvm::Error error = options.validate())
    return error;
  PlanOptions planOptions = cantFail(options.plan.get());
  planOptions.functionName = options.entry;
  PlanPassOptions planPassOptions;
  planPassOptions.target = options.target;
  planPassOptions.targetsDir = options.targetsDir;
  planPassOptions.devices = options.devices;
  planPassOptions.planJson = options.planJsonFile;

  buildSimplifyPipeline(pm);
  TrainingOptions training = options.getTraining();
  BatchNormTrainingPassOptions batchNorm;
  batchNorm.entry = options.entry;
  batchNorm.step = training.differentiates();
  if (training.syncBatchNorm.value_or(false))
    batchNorm.syncReplicas = options.devices;
  pm.addPass(createBatchNormTrainingPass(batchNorm));
  if (training.differentiates()) {
    if (training.attachesLoss()) {
      AttachLossPassOptions attach;
      attach.entry = options.entry;
      attach.kind = training.loss;
      attach.logits = training.logits;
      attach.labels = training.labels;
      attach.ignoreIndex = training.getIgnoreIndex();
      pm.addPass(createAttachLossPass(attach));
    }
    // Before the autodiff, so that the casts' gradients round the
    // backward's products' operands as the forward's are.
    if (training.isMixedPrecision()) {
      MixedPrecisionPassOptions mixed;
      mixed.entry = options.entry;
      mixed.precision = training.getPrecision();
      pm.addPass(createMixedPrecisionPass(mixed));
    }
    if (isPlannedStep(options)) {
      buildPipelinedTrainingPipeline(pm, options, planPassOptions, planOptions,
                                     training);
      return llvm::Error::success();
    }
    // A step on one device or on replicas: the plan reports the step it
    // runs (its microbatches, its replicas' reduction, its state), planned
    // on the forward as a pipelined step's is.
    if (training.train) {
      PlanPassOptions report = planPassOptions;
      report.annotate = false;
      pm.addPass(createPlanPass(
          report, getTrainingPlanOptions(options, planOptions, training),
          options.planJSON));
    }
    addBackward(pm, options, training);
  }
  // One device runs the function as simplified, and so does each
  // data-parallel replica of a training step: the plan is a report.
  if (options.devices == 1 || training.train) {
    planPassOptions.annotate = false;
    planPassOptions.devices = 1;
    // A training step's plan was made before the backward.
    if (!training.train)
      pm.addPass(
          createPlanPass(planPassOptions, planOptions, options.planJSON));
    if (training.train) {
      OptimizerUpdatePassOptions update =
          getOptimizerUpdateOptions(training, options.entry);
      update.microbatches = getTrainingMicrobatches(options);
      update.replicas = options.devices;
      addUpdate(pm, options, training, update);
    }
    return llvm::Error::success();
  }
  pm.addPass(createSplitProjectionsPass());
  pm.addPass(createPlanPass(planPassOptions, planOptions, options.planJSON));
  PartitionPassOptions partitionOptions;
  partitionOptions.entry = options.entry;
  partitionOptions.target = options.target;
  partitionOptions.targetsDirectory = options.targetsDir.empty()
                                          ? defaultTargetsDirectory()
                                          : options.targetsDir.getValue();
  buildPartitionPipeline(pm, partitionOptions);
  return llvm::Error::success();
}

void cleave::registerCompilePipeline() {
  // Registered through the untyped hook so that an option that does not
  // validate is reported when the pipeline is parsed, naming the option.
  registerPassPipeline(
      "cleave-compile-pipeline",
      "The passes of `cleave compile`: simplify (with gradients: "
      "differentiate and simplify again), then plan (one device) or split "
      "projections, plan and partition (several devices)",
      [](OpPassManager &pm, llvm::StringRef text,
         llvm::function_ref<LogicalResult(const llvm::Twine &)> errorHandler) {
        std::unique_ptr<CompileOptions> options =
            CompileOptions::createFromString(text);
        if (!options)
          return failure();
        if (llvm::Error error = buildCompilePipeline(pm, *options))
          return errorHandler("cleave-compile-pipeline: " +
                              llvm::toString(std::move(error)));
        return success();
      },
      [](llvm::function_ref<void(const mlir::detail::PassOptions &)>
             printOptions) { printOptions(CompileOptions()); });
}

//===----------------------------------------------------------------------===//
// Lowering the result
//===----------------------------------------------------------------------===//

FailureOr<BundleContents> cleave::describeGraphPorts(ModuleOp module,
                                                     llvm::StringRef entry) {
  FailureOr<func::FuncOp> func = getProgramFunction(module, entry);
  if (failed(func))
    return failure();
  auto port = [](Type type, StringAttr name, llvm::StringRef fallback) {
    auto tensor = cast<RankedTensorType>(type);
    return BundlePort{name ? name.str() : fallback.str(),
                      getDType(tensor.getElementType()),
                      std::vector<int64_t>(tensor.getShape().begin(),
                                           tensor.getShape().end())};
  };
  BundleContents contents;
  for (unsigned i = 0, e = func->getNumArguments(); i < e; ++i)
    contents.inputs.push_back(port(func->getArgument(i).getType(),
                                   getArgName(*func, i),
                                   "input_" + std::to_string(i)));
  for (unsigned i = 0, e = func->getNumResults(); i < e; ++i)
    contents.outputs.push_back(port(func->getResultTypes()[i],
                                    getResultName(*func, i),
                                    "output_" + std::to_string(i)));
  return contents;
}

/// Records where each graph port holds the batch, when it is cut: the
/// partition marked it on the stage functions' ports.
static void readBatchDims(ModuleOp module, BundleContents &contents) {
  for (auto func : module.getOps<func::FuncOp>()) {
    for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
      std::optional<int64_t> input = getInputIndex(func, i);
      std::optional<int64_t> dim = getArgBatchDim(func, i);
      if (input && dim)
        contents.inputs[*input].batchDim = *dim;
    }
    for (unsigned i = 0, e = func.getNumResults(); i < e; ++i) {
      std::optional<int64_t> output = getOutputIndex(func, i);
      std::optional<int64_t> dim = getResultBatchDim(func, i);
      if (output && dim)
        contents.outputs[*output].batchDim = *dim;
    }
  }
}

/// Lowers stage function `func` and says which graph ports its arguments
/// and results are.
static FailureOr<StageProgram>
lowerStage(func::FuncOp func, int64_t stage,
           const DeviceProgramOptions &lowering) {
  FailureOr<DeviceProgram> program = buildDeviceProgram(func, lowering);
  if (failed(program))
    return failure();
  StageProgram entry;
  entry.stage = stage;
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
    std::optional<int64_t> index = getInputIndex(func, i);
    if (!index)
      return func.emitOpError("argument ")
                 << i << " is not a graph input (no cleave.input)",
             failure();
    entry.graphInputs.push_back(*index);
  }
  for (unsigned i = 0, e = func.getNumResults(); i < e; ++i) {
    std::optional<int64_t> index = getOutputIndex(func, i);
    if (!index)
      return func.emitOpError("result ")
                 << i << " is not a graph output (no cleave.output)",
             failure();
    entry.graphOutputs.push_back(*index);
  }
  entry.program = std::move(*program);
  return entry;
}

/// A training step takes the global batch, replicas x microbatches x the
/// function's, and cuts every input along its first dimension.
static LogicalResult cutGlobalBatch(BundleContents &contents, Location loc) {
  int64_t blocks = contents.microbatches * contents.dp;
  if (blocks == 1)
    return success();
  for (BundlePort &port : contents.inputs) {
    if (port.shape.empty())
      // At the function's location, without printing the function.
      return emitError(loc,
                       contents.microbatches > 1 ? "microbatches=" : "devices=")
             << (contents.microbatches > 1 ? contents.microbatches
                                           : contents.dp)
             << ": input '" << port.name
             << "' is a scalar, with no first dimension to cut the global "
                "batch along";
    port.shape[0] *= blocks;
    port.batchDim = 0;
  }
  return success();
}

/// The graph's ports as the stage functions hold them (the entry is gone):
/// each port from the stage that reads or writes it.
static LogicalResult describeStagePorts(ModuleOp module,
                                        BundleContents &contents) {
  std::map<int64_t, BundlePort> inputs, outputs;
  auto port = [](Type type, StringAttr name) {
    auto tensor = cast<RankedTensorType>(type);
    return BundlePort{name ? name.str() : "", getDType(tensor.getElementType()),
                      std::vector<int64_t>(tensor.getShape().begin(),
                                           tensor.getShape().end())};
  };
  for (auto func : module.getOps<func::FuncOp>()) {
    if (!getStage(func))
      continue;
    for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
      if (std::optional<int64_t> index = getInputIndex(func, i))
        inputs.try_emplace(
            *index, port(func.getArgument(i).getType(), getArgName(func, i)));
    for (unsigned i = 0, e = func.getNumResults(); i < e; ++i)
      if (std::optional<int64_t> index = getOutputIndex(func, i))
        outputs.try_emplace(
            *index, port(func.getResultTypes()[i], getResultName(func, i)));
  }
  auto collect = [&](std::map<int64_t, BundlePort> &ports,
                     std::vector<BundlePort> &out, const char *kind) {
    out.clear();
    for (auto &[index, port] : ports) {
      if (index != static_cast<int64_t>(out.size()))
        return module.emitError("no stage of the training step holds graph ")
                   << kind << " " << out.size(),
               failure();
      if (port.name.empty())
        port.name = std::string(kind) + "_" + std::to_string(index);
      out.push_back(std::move(port));
    }
    return success();
  };
  if (failed(collect(inputs, contents.inputs, "input")) ||
      failed(collect(outputs, contents.outputs, "output")))
    return failure();
  return success();
}

static void nameStagePorts(BundleContents &contents);

/// Lowers every stage function of `module` into `contents.stages`, in
/// stage order, with ports named by the graph's names.
static LogicalResult lowerStages(ModuleOp module,
                                 const DeviceProgramOptions &lowering,
                                 BundleContents &contents) {
  for (auto func : module.getOps<func::FuncOp>()) {
    std::optional<int64_t> stage = getStage(func);
    if (!stage)
      continue;
    // Each stash region holds as many microbatches as the schedule keeps in
    // flight on the stage (per model chunk, under the interleaved
    // schedule).
    DeviceProgramOptions stageLowering = lowering;
    if (*stage >= 0 && *stage < contents.schedule.getNumStages()) {
      stageLowering.stashSlots =
          std::max<int64_t>(1, contents.schedule.activationsHeld(*stage));
      if (contents.schedule.getNumChunks() > 1)
        for (int64_t chunk = 0; chunk < contents.schedule.getNumChunks();
             ++chunk)
          stageLowering.chunkStashSlots.push_back(std::max<int64_t>(
              1, contents.schedule.activationsHeld(*stage, chunk)));
    }
    FailureOr<StageProgram> program = lowerStage(func, *stage, stageLowering);
    if (failed(program))
      return failure();
    contents.stages.push_back(std::move(*program));
  }
  llvm::sort(contents.stages, [](const StageProgram &a, const StageProgram &b) {
    return a.stage < b.stage;
  });
  if (static_cast<int64_t>(contents.stages.size()) != contents.pp)
    return module.emitError("partitioning made ")
           << contents.stages.size() << " stage functions for " << contents.pp
           << " pipeline stages";
  nameStagePorts(contents);
  return success();
}

/// A training step in pipeline stages: one program per stage, each with
/// forward, backward and update entries, run in the order of a training
/// schedule (1F1B unless asked otherwise) over the step's microbatches.
static LogicalResult lowerPipelinedStep(ModuleOp module,
                                        const CompileOptions &options,
                                        const DeviceProgramOptions &lowering,
                                        BundleContents &contents) {
  FailureOr<PlanContract> plan = readPlanContract(module);
  if (failed(plan))
    return failure();
  if (failed(describeStagePorts(module, contents)))
    return failure();
  // The plan recorded the mesh (pp stages of dp replicas), the microbatches
  // and the schedule of the step.
  contents.schedule = plan->getSchedule(/*training=*/true);
  contents.pp = plan->pp;
  contents.tp = plan->tp;
  contents.dp = plan->dp;
  contents.microbatches = plan->microbatches;
  contents.zero = getZeroStage(module).value_or(0);
  if (failed(lowerStages(module, lowering, contents)))
    return failure();
  return cutGlobalBatch(contents, module.getLoc());
}

LogicalResult cleave::lowerCompiledModule(ModuleOp module,
                                          const CompileOptions &options,
                                          const DeviceProgramOptions &lowering,
                                          BundleContents &contents) {
  if (isPlannedStep(options))
    return lowerPipelinedStep(module, options, lowering, contents);
  if (options.devices == 1 || options.train) {
    FailureOr<func::FuncOp> func = getProgramFunction(module, options.entry);
    if (failed(func))
      return failure();
    PlanOptions plan = cantFail(options.plan.get());
    PipelineScheduleOptions schedule;
    schedule.choice = plan.getSchedule();
    if (options.train) {
      // A training step runs forward and backward per microbatch (1F1B
      // unless asked otherwise), then the update.
      if (!plan.schedule)
        schedule.choice = {ScheduleKind::OneFOneB, 1};
      schedule.numMicrobatches = getTrainingMicrobatches(options);
      schedule.phases = {PipelinePhase::Forward, PipelinePhase::Backward,
                         PipelinePhase::Update};
    }
    llvm::Expected<PipelineSchedule> order = PipelineSchedule::create(schedule);
    if (!order)
      return emitError(module.getLoc(), llvm::toString(order.takeError()));
    DeviceProgramOptions deviceLowering = lowering;
    deviceLowering.stashSlots = std::max<int64_t>(1, order->activationsHeld(0));
    FailureOr<DeviceProgram> program =
        buildDeviceProgram(*func, deviceLowering);
    if (failed(program))
      return failure();
    contents = makeSingleDeviceContents(std::move(*program));
    contents.schedule = std::move(*order);
    // Replicas of a training step run the same program.
    contents.dp = options.devices;
    contents.microbatches = schedule.numMicrobatches;
    contents.zero = getZeroStage(module).value_or(0);
    return cutGlobalBatch(contents, func->getLoc());
  }

  FailureOr<PlanContract> plan = readPlanContract(module);
  if (failed(plan))
    return failure();
  contents.pp = plan->pp;
  contents.tp = plan->tp;
  contents.dp = plan->dp;
  contents.microbatches = plan->microbatches;
  contents.schedule = plan->getSchedule();
  readBatchDims(module, contents);
  return lowerStages(module, lowering, contents);
}

/// A stage's ports are graph ports: the programs record them by the graph's
/// names, which the runtime checks the manifest against.
static void nameStagePorts(BundleContents &contents) {
  for (StageProgram &stage : contents.stages) {
    DeviceProgram &program = stage.program;
    ProgramPorts ports = program.getPorts();
    std::vector<int> forwardInputs = ports.inputs;
    std::vector<int> forwardOutputs = ports.outputs;
    auto rename = [](ArrayRef<int> tensors, ArrayRef<int> forwardTensors,
                     ArrayRef<int64_t> graphIds,
                     ArrayRef<BundlePort> graphPorts,
                     std::vector<std::string> &names) {
      for (auto [index, tensor] : llvm::enumerate(tensors)) {
        const int *found = llvm::find(forwardTensors, tensor);
        if (found == forwardTensors.end())
          continue;
        int64_t id = graphIds[found - forwardTensors.begin()];
        if (id >= 0 && id < static_cast<int64_t>(graphPorts.size()))
          names[index] = graphPorts[id].name;
      }
    };
    for (ProgramEntry &entry : program.entries) {
      rename(entry.inputs, forwardInputs, stage.graphInputs, contents.inputs,
             entry.inputNames);
      rename(entry.outputs, forwardOutputs, stage.graphOutputs,
             contents.outputs, entry.outputNames);
    }
  }
}
