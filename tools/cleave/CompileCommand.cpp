//===- CompileCommand.cpp - the `cleave compile` subcommand ------*- C++
//-*-===//

#include "CompileCommand.h"

#include "cleave/Analysis/Cost/Target.h"
#include "cleave/Conversion/DeviceProgram.h"
#include "cleave/Dialect/Cleave/Transforms/Pipelines.h"
#include "cleave/Import/ONNX/ONNXImporter.h"
#include "cleave/InitAll.h"
#include "cleave/Plan/PlanExport.h"
#include "cleave/Plan/Planner.h"
#include "cleave/Target/Bundle.h"
#include "cleave/Transforms/Partition/Contract.h"
#include "cleave/Transforms/Partition/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/WithColor.h"

using namespace mlir;
using namespace cleave;

static int fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "cleave compile") << message << "\n";
  return 1;
}

static std::string printJSON(const Plan &plan) {
  std::string text;
  llvm::raw_string_ostream os(text);
  writePlanJSON(plan, os);
  return text;
}

/// The graph's inputs and outputs, named as the model names them.
static void describeGraph(func::FuncOp func, BundleContents &contents) {
  auto port = [](Type type, StringAttr name, StringRef fallback) {
    auto tensor = cast<RankedTensorType>(type);
    return BundlePort{name ? name.str() : fallback.str(),
                      getDType(tensor.getElementType()),
                      std::vector<int64_t>(tensor.getShape().begin(),
                                           tensor.getShape().end())};
  };
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
    contents.inputs.push_back(
        port(func.getArgument(i).getType(),
             func.getArgAttrOfType<StringAttr>(i, "cleave.name"),
             "input_" + std::to_string(i)));
  for (unsigned i = 0, e = func.getNumResults(); i < e; ++i)
    contents.outputs.push_back(
        port(func.getResultTypes()[i],
             func.getResultAttrOfType<StringAttr>(i, "cleave.name"),
             "output_" + std::to_string(i)));
}

/// One device: the plan (on a copy split as `cleave plan` splits it, so
/// that the program comes from the simplified import), and the function
/// lowered as it is.
static FailureOr<BundleContents>
compileForOneDevice(ModuleOp module, const TargetDescription &target,
                    StringRef functionName, const DeviceProgramOptions &lower,
                    PlanOptions planOptions, std::string &planJSON) {
  FailureOr<func::FuncOp> func = getProgramFunction(module, functionName);
  if (failed(func))
    return failure();
  FailureOr<DeviceProgram> program = buildDeviceProgram(*func, lower);
  if (failed(program))
    return failure();
  // A model whose every result is an input or a constant (everything
  // folded) has nothing to plan: its plan is the trivial one.
  if (program->steps.empty() ||
      llvm::all_of(program->steps, [](const ProgramStep &step) {
        return step.call && step.call->kernel == "copy";
      })) {
    llvm::json::Object plan{
        {"function", func->getSymName()},
        {"target", target.name},
        {"mesh", llvm::json::Object{{"pp", 1}, {"tp", 1}, {"dp", 1}}},
        {"microbatches", 1},
        {"stages", llvm::json::Array{}},
        {"note", "the model computes nothing: its outputs are inputs or "
                 "constants"}};
    planJSON = llvm::formatv("{0}", llvm::json::Value(std::move(plan))).str();
    return makeSingleDeviceContents(std::move(*program));
  }
  OwningOpRef<ModuleOp> copy(module.clone());
  PassManager passes(module.getContext());
  passes.addPass(createSplitProjectionsPass());
  if (failed(passes.run(*copy)))
    return failure();
  FailureOr<Plan> plan = planModel(*copy, target, planOptions);
  if (failed(plan))
    return failure();
  planJSON = printJSON(*plan);
  // The device runs the whole batch at once: one microbatch on one stage,
  // in the schedule asked for.
  BundleContents contents = makeSingleDeviceContents(std::move(*program));
  PipelineScheduleOptions schedule;
  schedule.choice = planOptions.schedule;
  contents.schedule = llvm::cantFail(PipelineSchedule::create(schedule));
  return contents;
}

/// Several devices: plan, write the plan onto the IR, partition it into one
/// SPMD function per stage (cleave-partition) and lower each.
static FailureOr<BundleContents>
compileForDevices(ModuleOp module, const TargetDescription &target,
                  const CompileCommand &command, StringRef functionName,
                  const DeviceProgramOptions &lower, PlanOptions planOptions,
                  std::string &planJSON, PipelineObserver &observer) {
  BundleContents contents;
  FailureOr<func::FuncOp> entry = getProgramFunction(module, functionName);
  if (failed(entry))
    return failure();
  describeGraph(*entry, contents);
  std::string entryName = entry->getSymName().str();

  PassManager split(module.getContext());
  split.addPass(createSplitProjectionsPass());
  if (failed(split.run(module)))
    return failure();
  planOptions.functionName = entryName;
  FailureOr<Plan> plan = planModel(module, target, planOptions);
  if (failed(plan) || failed(annotateModule(module, *plan)))
    return failure();
  planJSON = printJSON(*plan);

  PassManager partition(module.getContext());
  observer.observe(partition);
  PartitionPassOptions partitionOptions;
  partitionOptions.entry = entryName;
  partitionOptions.target = command.target;
  partitionOptions.targetsDirectory = command.targetsDir.empty()
                                          ? defaultTargetsDirectory()
                                          : command.targetsDir.getValue();
  buildPartitionPipeline(partition, partitionOptions);
  if (failed(partition.run(module)) || observer.hasFailed())
    return failure();

  // The blocks of the batch the programs compute, when it is cut: the
  // partition marked where each graph port holds it.
  for (auto func : module.getOps<func::FuncOp>()) {
    for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
      auto input = func.getArgAttrOfType<IntegerAttr>(i, kInputAttrName);
      auto dim = func.getArgAttrOfType<IntegerAttr>(i, kBatchDimAttrName);
      if (input && dim)
        contents.inputs[input.getInt()].batchDim = dim.getInt();
    }
    for (unsigned i = 0, e = func.getNumResults(); i < e; ++i) {
      auto output = func.getResultAttrOfType<IntegerAttr>(i, kOutputAttrName);
      auto dim = func.getResultAttrOfType<IntegerAttr>(i, kBatchDimAttrName);
      if (output && dim)
        contents.outputs[output.getInt()].batchDim = dim.getInt();
    }
  }
  contents.pp = plan->mesh.pp;
  contents.tp = plan->mesh.tp;
  contents.dp = plan->mesh.dp;
  contents.microbatches = plan->microbatches;
  contents.schedule = plan->schedule;
  for (auto func : module.getOps<func::FuncOp>()) {
    auto stage = func->getAttrOfType<IntegerAttr>("cleave.stage");
    if (!stage)
      continue;
    FailureOr<DeviceProgram> program = buildDeviceProgram(func, lower);
    if (failed(program))
      return failure();
    StageProgram entry;
    entry.stage = stage.getInt();
    for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
      auto index = func.getArgAttrOfType<IntegerAttr>(i, "cleave.input");
      if (!index)
        return func.emitOpError("argument ")
                   << i << " is not a graph input (no cleave.input)",
               failure();
      entry.graphInputs.push_back(index.getInt());
    }
    for (unsigned i = 0, e = func.getNumResults(); i < e; ++i) {
      auto index = func.getResultAttrOfType<IntegerAttr>(i, "cleave.output");
      if (!index)
        return func.emitOpError("result ")
                   << i << " is not a graph output (no cleave.output)",
               failure();
      entry.graphOutputs.push_back(index.getInt());
    }
    entry.program = std::move(*program);
    contents.stages.push_back(std::move(entry));
  }
  llvm::sort(contents.stages, [](const StageProgram &a, const StageProgram &b) {
    return a.stage < b.stage;
  });
  if (static_cast<int64_t>(contents.stages.size()) != contents.pp)
    return module.emitError("partitioning made ")
               << contents.stages.size() << " stage functions for "
               << contents.pp << " pipeline stages",
           failure();
  return contents;
}

int cleave::runCompileCommand(CompileCommand &command) {
  if (command.devices < 1)
    return fail("--devices must be a positive integer, got " +
                llvm::Twine(command.devices.getValue()));
  std::unique_ptr<PipelineObserver> observer =
      PipelineObserver::create(command.common, "cleave compile");
  if (!observer)
    return 1;

  ONNXImportOptions importOptions;
  importOptions.progress = &observer->getProgress();
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
  if (kind.empty())
    return fail("--target '" + command.target +
                "': the target does not say what its devices run "
                "(\"devices\": {\"kind\": \"cpu\" or \"cuda\"}), so cleave "
                "cannot choose a code generator");
  std::string cpuIsa = !command.march.empty() ? command.march.getValue()
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
  PassManager passes(&context);
  observer->observe(passes);
  buildSimplifyPipeline(passes);
  if (failed(passes.run(*module)) || observer->hasFailed())
    return 1;

  PlanOptions planOptions;
  planOptions.functionName = importOptions.functionName;
  planOptions.numDevices = target->numDevices;
  planOptions.progress = &observer->getProgress();
  if (!command.mesh.apply(planOptions, "cleave compile"))
    return 1;
  if (planOptions.schedule.virtualStages > 1)
    return fail("--schedule=" + planOptions.schedule.str() +
                ": the interleaved schedule cannot be compiled yet: it runs "
                "several model chunks on each device, and a device program "
                "holds one; `cleave plan` predicts it, `cleave compile` takes "
                "gpipe or 1f1b");
  DeviceProgramOptions programOptions;
  programOptions.fuseElementwise = !command.noFuse;
  std::string planJSON;
  FailureOr<BundleContents> contents =
      target->numDevices == 1
          ? compileForOneDevice(*module, *target, importOptions.functionName,
                                programOptions, planOptions, planJSON)
          : compileForDevices(*module, *target, command,
                              importOptions.functionName, programOptions,
                              planOptions, planJSON, *observer);
  if (failed(contents))
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
  bundle.cpuIsa = cpuIsa;
  bundle.nvcc = command.nvcc;
  bundle.emitOnly = command.emitOnly;
  bundle.progress = &observer->getProgress();
  if (llvm::Error error = writeBundle(*contents, bundle))
    return fail(llvm::toString(std::move(error)));

  if (!observer->isQuiet()) {
    int64_t steps = 0, arena = 0, unplanned = 0, weights = 0;
    for (const StageProgram &stage : contents->stages) {
      steps += stage.program.steps.size();
      arena = std::max(arena, stage.program.arenaBytes);
      unplanned = std::max(unplanned, stage.program.unplannedArenaBytes);
      weights = std::max(weights, stage.program.weightBytes);
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
    if (contents->getNumDevices() > 1)
      llvm::outs() << " per device (largest)";
    llvm::outs() << "\n";
  }
  return 0;
}
