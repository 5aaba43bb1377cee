//===- CompileCommand.cpp - the `cleave compile` subcommand ------*- C++
//-*-===//

#include "CompileCommand.h"

#include "cleave/Analysis/Cost/Target.h"
#include "cleave/Compile/CompilePipeline.h"
#include "cleave/Conversion/DeviceProgram.h"
#include "cleave/Import/ONNX/ONNXImporter.h"
#include "cleave/InitAll.h"
#include "cleave/Target/Bundle.h"
#include "cleave/rt/Runtime.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/WithColor.h"

using namespace mlir;
using namespace cleave;

static int fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "cleave compile") << message << "\n";
  return 1;
}

int cleave::runCompileCommand(CompileCommand &command) {
  if (command.devices < 1)
    return fail("--devices must be a positive integer, got " +
                llvm::Twine(command.devices.getValue()));
  llvm::Expected<PlanOptions> planOptions = command.plan.get();
  if (llvm::Error error = planOptions ? validatePlanOptions(*planOptions)
                                      : planOptions.takeError())
    return fail(llvm::toString(std::move(error)));
  TrainingOptions training;
  training.gradients = command.gradients;
  training.loss = command.loss;
  training.logits = command.logits;
  training.labels = command.labels;
  if (command.ignoreIndex.getNumOccurrences())
    training.ignoreIndex = command.ignoreIndex;
  training.freeze = command.freeze;
  training.train = command.train;
  auto copy = [](const auto &option, auto &field) {
    if (option.getNumOccurrences())
      field = option.getValue();
  };
  copy(command.optimizer, training.optimizer);
  copy(command.learningRate, training.learningRate);
  copy(command.momentum, training.momentum);
  copy(command.nesterov, training.nesterov);
  copy(command.weightDecay, training.weightDecay);
  copy(command.betas, training.betas);
  copy(command.epsilon, training.epsilon);
  copy(command.clipGradNorm, training.clipGradNorm);
  copy(command.warmupSteps, training.warmupSteps);
  copy(command.decaySteps, training.decaySteps);
  copy(command.minLrRatio, training.minLrRatio);
  copy(command.recompute, training.recompute);
  copy(command.recomputeLayers, training.recomputeLayers);
  copy(command.zero, training.zero);
  copy(command.syncBatchNorm, training.syncBatchNorm);
  copy(command.gradReduction, training.gradReduction);
  copy(command.gradBucketMb, training.gradBucketMb);
  copy(command.precision, training.precision);
  copy(command.lossScale, training.lossScale);
  copy(command.lossScaleGrowthInterval, training.lossScaleGrowthInterval);
  if (llvm::Error error = validateTrainingOptions(training, "--"))
    return fail(llvm::toString(std::move(error)));
  if (llvm::Error error = checkCompilableSchedule(*planOptions, training, "--"))
    return fail(llvm::toString(std::move(error)));
  std::unique_ptr<PipelineObserver> observer =
      PipelineObserver::create(command.common, "cleave compile");
  if (!observer)
    return 1;

  ONNXImportOptions importOptions;
  importOptions.progress = &observer->getProgress();
  importOptions.floatInitializersAsWeights = training.differentiates();
  for (const std::string &text : command.inputShapes) {
    std::string error;
    if (!parseInputShapeOption(text, importOptions, error))
      return fail("--input-shape '" + text + "': " + error);
  }

  TargetLoadOptions loadOptions;
  loadOptions.targetsDirectory = command.targetsDir.empty()
                                     ? defaultTargetsDirectory()
                                     : command.targetsDir.getValue();
  loadOptions.numDevices = command.devices.getValue();
  llvm::Expected<TargetDescription> target =
      loadTarget(command.target, loadOptions);
  if (!target)
    return fail(llvm::toString(target.takeError()));
  const std::string &kind = target->device.kind;
  // GPU replicas reduce on a stream of their own while the backward goes
  // on; CPU ranks would only move the reduction's wait, and keep the
  // program of one device (whose rounding it then shares bit for bit).
  if (training.train && command.devices > 1 && !training.gradReduction &&
      kind == "cuda" && training.zero.value_or(0) == 0)
    training.gradReduction = "overlap";
  if (training.gradBucketMb && training.gradReduction != "overlap")
    return fail("--grad-bucket-mb applies only with --grad-reduction "
                "overlap (the default for GPU replicas; CPU ones reduce in "
                "the update unless asked)");
  if (kind.empty())
    return fail("--target '" + command.target +
                "': the target does not say what its devices run "
                "(\"devices\": {\"kind\": \"cpu\" or \"cuda\"}), so cleave "
                "cannot choose a code generator");
  std::string cpuIsa = !command.march.empty()        ? command.march.getValue()
                       : !target->device.isa.empty() ? target->device.isa
                                                     : "native";
  if (!command.march.empty() &&
      !llvm::is_contained(kCpuIsas, command.march.getValue()))
    return fail("--march: must be one of x86-64, x86-64-v2, x86-64-v3, "
                "x86-64-v4 or native, got '" +
                command.march.getValue() + "'");
  if (!command.march.empty() && kind != "cpu")
    return fail("--march: the target's devices run CUDA programs, whose host "
                "code is built for nvcc's default; --march applies to cpu "
                "targets");

  DialectRegistry registry;
  registerAllDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);

  OwningOpRef<ModuleOp> module =
      importONNXModel(command.model, context, importOptions);
  if (!module || failed(observer->dump(*module, "import")))
    return 1;

  CompileOptions options;
  options.target = command.target;
  options.targetsDir = command.targetsDir;
  options.devices = target->numDevices;
  options.entry = importOptions.functionName;
  options.gradients = command.gradients;
  options.loss = training.loss;
  options.logits = training.logits;
  options.labels = training.labels;
  if (training.ignoreIndex)
    options.ignoreIndex = *training.ignoreIndex;
  options.freeze = training.freeze;
  options.train = training.train;
  auto pass = [](const auto &field, auto &option) {
    if (field)
      option = *field;
  };
  pass(training.optimizer, options.optimizer);
  pass(training.learningRate, options.learningRate);
  pass(training.momentum, options.momentum);
  pass(training.nesterov, options.nesterov);
  pass(training.weightDecay, options.weightDecay);
  pass(training.betas, options.betas);
  pass(training.epsilon, options.epsilon);
  pass(training.clipGradNorm, options.clipGradNorm);
  pass(training.warmupSteps, options.warmupSteps);
  pass(training.decaySteps, options.decaySteps);
  pass(training.minLrRatio, options.minLrRatio);
  pass(training.recompute, options.recompute);
  pass(training.recomputeLayers, options.recomputeLayers);
  pass(training.zero, options.zero);
  pass(training.syncBatchNorm, options.syncBatchNorm);
  pass(training.gradReduction, options.gradReduction);
  pass(training.gradBucketMb, options.gradBucketMb);
  pass(training.precision, options.precision);
  pass(training.lossScale, options.lossScale);
  pass(training.lossScaleGrowthInterval, options.lossScaleGrowthInterval);
  planOptions->progress = &observer->getProgress();
  options.plan.set(*planOptions);
  std::string planJSON;
  options.planJSON = &planJSON;
  FailureOr<BundleContents> contents =
      describeGraphPorts(*module, importOptions.functionName);
  if (failed(contents))
    return 1;
  PassManager passes(&context);
  observer->observe(passes);
  if (llvm::Error error = buildCompilePipeline(passes, options))
    return fail(llvm::toString(std::move(error)));
  if (failed(passes.run(*module)) || observer->hasFailed())
    return 1;

  DeviceProgramOptions programOptions;
  programOptions.fuseElementwise = !command.noFuse;
  programOptions.fuseKernelEpilogues = !command.noFuse;
  // oneDNN's block for the instruction set the kernels run (Dnnl.cpp caps
  // it at the bundle's level).
  if (!command.noFuse && kind == "cpu")
    programOptions.convBlock = cpuIsa == "x86-64-v4" ? 16 : 8;
  if (failed(lowerCompiledModule(*module, options, programOptions, *contents)))
    return 1;

  BundleOptions bundle;
  bundle.directory = command.output;
  bundle.modelPath = command.model;
  bundle.targetName = target->name;
  bundle.language =
      kind == "cuda" ? ProgramLanguage::Cuda : ProgramLanguage::Cpp;
  bundle.planJSON = std::move(planJSON);
  {
    llvm::raw_string_ostream os(bundle.moduleText);
    module->print(os);
  }
  bundle.runtimeIncludeDir = command.runtimeInclude.empty()
                                 ? std::string(CLEAVE_RUNTIME_INCLUDE_DIR)
                                 : command.runtimeInclude.getValue();
  bundle.runtimeLibraryDir = command.runtimeLib.empty()
                                 ? std::string(CLEAVE_RUNTIME_LIBRARY_DIR)
                                 : command.runtimeLib.getValue();
  bundle.cxx = command.cxx;
#ifdef CLEAVE_PROGRAM_SANITIZE
  bundle.cxxFlags.insert(
      bundle.cxxFlags.end(),
      {"-fsanitize=" CLEAVE_PROGRAM_SANITIZE, "-fno-sanitize-recover=all"});
  if (llvm::StringRef(CLEAVE_PROGRAM_SANITIZE).contains("address"))
    bundle.cxxFlags.insert(
        bundle.cxxFlags.end(),
        {"-shared-libasan",
         "-Wl,-rpath," CLEAVE_PROGRAM_SANITIZER_RUNTIME_DIR});
#endif
  if (training.train)
    bundle.training = TrainingSchedule{
        training.getOptimizer(),          training.getLearningRate(),
        training.warmupSteps.value_or(0), training.decaySteps.value_or(0),
        training.minLrRatio.value_or(0),  contents->zero};
  bundle.cpuIsa = cpuIsa;
  bundle.nvcc = command.nvcc;
  bundle.emitOnly = command.emitOnly;
  bundle.progress = &observer->getProgress();
  if (llvm::Error error = writeBundle(*contents, bundle))
    return fail(llvm::toString(std::move(error)));

  // The CPU kernels pack constant weights into their libraries' layouts;
  // doing it once here, on this machine, stores the packed forms in the
  // bundle (a bundle that cannot run here keeps its plain weights only).
  rt::PackedBundle packed;
  if (kind == "cpu" && !training.train && !command.emitOnly &&
      !command.noPrepack) {
    std::string error;
    if (!rt::packBundleWeights(command.output, packed, error))
      llvm::WithColor::warning(llvm::errs(), "cleave compile")
          << "no packed weights stored (sessions will pack them on their "
             "first run): "
          << error << "\n";
  }

  if (!observer->isQuiet()) {
    int64_t steps = 0, arena = 0, unplanned = 0, weights = 0, persistent = 0,
            trained = 0, sums = 0;
    for (const StageProgram &stage : contents->stages) {
      steps += stage.program.getNumSteps();
      arena = std::max(arena, stage.program.arenaBytes);
      unplanned = std::max(unplanned, stage.program.unplannedArenaBytes);
      weights = std::max(weights, stage.program.weightBytes);
      if (stage.program.persistentBytes > persistent) {
        persistent = stage.program.persistentBytes;
        trained = 0;
        for (const WeightEntry &weight : stage.program.weights)
          if (weight.writable)
            trained += weight.bytes;
        // The gradient and loss sums of gradient accumulation.
        sums = 0;
        for (const ProgramState &state : stage.program.states)
          if (StringRef(state.name).starts_with("grad:") ||
              StringRef(state.name).starts_with("loss.sum:"))
            sums += stage.program.tensors[state.tensor].getBytes();
      }
    }
    llvm::outs() << "wrote " << command.output << ": ";
    if (contents->getNumDevices() > 1)
      llvm::outs() << contents->getNumDevices()
                   << " devices (pp=" << contents->pp << " tp=" << contents->tp
                   << " dp=" << contents->dp << "), ";
    llvm::outs() << steps << " steps for " << target->name << ", arena "
                 << llvm::format("%.1f", arena / 1024.0) << " KiB ("
                 << llvm::format("%.1f", unplanned / 1024.0)
                 << " KiB without reuse), weights "
                 << llvm::format("%.1f", weights / 1024.0) << " KiB";
    // Persistent memory outlives a run: the trained parameters, the
    // gradient sums, and the optimizer state and step counters (with the
    // alignment between them).
    if (persistent)
      llvm::outs() << ", persistent "
                   << llvm::format("%.1f", persistent / 1024.0)
                   << " KiB (parameters "
                   << llvm::format("%.1f", trained / 1024.0)
                   << " KiB, gradients " << llvm::format("%.1f", sums / 1024.0)
                   << " KiB, optimizer state "
                   << llvm::format("%.1f",
                                   (persistent - trained - sums) / 1024.0)
                   << " KiB)";
    if (contents->getNumDevices() > 1)
      llvm::outs() << " per device (largest)";
    if (packed.files)
      llvm::outs() << ", packed weights "
                   << llvm::format("%.1f", packed.bytes / 1024.0) << " KiB";
    llvm::outs() << "\n";
  }
  return 0;
}
