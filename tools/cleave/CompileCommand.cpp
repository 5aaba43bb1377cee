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
#include "cleave/Transforms/Partition/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
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

/// The plan of the model for the target, as plan.json text. Planning runs
/// on a copy, split as `cleave plan` splits it, so that the IR the programs
/// come from stays the simplified import.
static FailureOr<std::string> planAsJSON(ModuleOp module,
                                         const TargetDescription &target,
                                         StringRef functionName,
                                         ProgressReporter *progress) {
  OwningOpRef<ModuleOp> copy(module.clone());
  PassManager passes(module.getContext());
  passes.addPass(createSplitProjectionsPass());
  if (failed(passes.run(*copy)))
    return failure();
  PlanOptions options;
  options.functionName = functionName.str();
  options.numDevices = target.numDevices;
  options.progress = progress;
  FailureOr<Plan> plan = planModel(*copy, target, options);
  if (failed(plan))
    return failure();
  std::string text;
  llvm::raw_string_ostream os(text);
  writePlanJSON(*plan, os);
  return text;
}

int cleave::runCompileCommand(CompileCommand &command) {
  if (command.devices < 1)
    return fail("--devices must be a positive integer, got " +
                llvm::Twine(command.devices.getValue()));
  if (command.devices > 1)
    return fail("--devices " + llvm::Twine(command.devices.getValue()) +
                ": bundles for several devices are not implemented yet; "
                "compile with --devices 1, or inspect the split with "
                "'cleave plan'");

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

  FailureOr<std::string> planJSON = planAsJSON(
      *module, *target, importOptions.functionName, &observer->getProgress());
  if (failed(planJSON))
    return 1;

  FailureOr<func::FuncOp> func =
      getProgramFunction(*module, importOptions.functionName);
  if (failed(func))
    return 1;
  DeviceProgramOptions programOptions;
  programOptions.fuseElementwise = !command.noFuse;
  FailureOr<DeviceProgram> program = buildDeviceProgram(*func, programOptions);
  if (failed(program))
    return 1;

  BundleOptions bundle;
  bundle.directory = command.output;
  bundle.modelPath = command.model;
  bundle.targetName = target->name;
  bundle.language =
      kind == "cuda" ? ProgramLanguage::Cuda : ProgramLanguage::Cpp;
  bundle.planJSON = std::move(*planJSON);
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
  bundle.nvcc = command.nvcc;
  bundle.emitOnly = command.emitOnly;
  bundle.progress = &observer->getProgress();
  if (llvm::Error error = writeBundle(*program, bundle))
    return fail(llvm::toString(std::move(error)));

  if (!observer->isQuiet())
    llvm::outs() << "wrote " << command.output << ": " << program->steps.size()
                 << " steps for " << target->name << ", arena "
                 << llvm::format("%.1f", program->arenaBytes / 1024.0)
                 << " KiB ("
                 << llvm::format("%.1f", program->unplannedArenaBytes / 1024.0)
                 << " KiB without reuse), weights "
                 << llvm::format("%.1f", program->weightBytes / 1024.0)
                 << " KiB\n";
  return 0;
}
