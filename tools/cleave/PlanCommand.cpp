//===- PlanCommand.cpp - the `cleave plan` subcommand -----------*- C++ -*-===//

#include "PlanCommand.h"

#include "cleave/Analysis/Cost/Target.h"
#include "cleave/Dialect/Cleave/Transforms/Pipelines.h"
#include "cleave/Import/ONNX/ONNXImporter.h"
#include "cleave/InitAll.h"
#include "cleave/Plan/PlanExport.h"
#include "cleave/Plan/PlanReport.h"
#include "cleave/Plan/Planner.h"
#include "cleave/Transforms/Partition/Passes.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

using namespace mlir;
using namespace cleave;

static int fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "cleave plan") << message << "\n";
  return 1;
}

/// The plan options the user gave; prints an error naming the option and
/// returns none for one that is malformed.
static std::optional<PlanOptions> readPlanOptions(PlanCommand &command) {
  llvm::Expected<PlanOptions> options = command.plan.get();
  llvm::Error error =
      options ? validatePlanOptions(*options) : options.takeError();
  if (error) {
    fail(llvm::toString(std::move(error)));
    return std::nullopt;
  }
  return *options;
}

/// An integer option the user gave, or none.
static std::optional<int64_t> getGiven(const llvm::cl::opt<int64_t> &option) {
  if (option.getNumOccurrences() == 0)
    return std::nullopt;
  return option.getValue();
}

int cleave::runPlanCommand(PlanCommand &command) {
  if (command.format != "text" && command.format != "json" &&
      command.format != "html")
    return fail("--format must be 'text', 'json' or 'html', got '" +
                command.format + "'");
  for (auto [flag, option] :
       {std::pair{"devices", &command.devices},
        std::pair{"devices-per-node", &command.devicesPerNode}})
    if (option->getNumOccurrences() && option->getValue() < 1)
      return fail(llvm::Twine("--") + flag +
                  " must be a positive integer, got " +
                  llvm::Twine(option->getValue()));
  std::optional<PlanOptions> planOptions = readPlanOptions(command);
  if (!planOptions)
    return 1;
  PlanOptions &options = *planOptions;
  std::unique_ptr<PipelineObserver> observer =
      PipelineObserver::create(command.common, "cleave plan");
  if (!observer)
    return 1;
  options.progress = &observer->getProgress();

  ONNXImportOptions importOptions;
  for (const std::string &text : command.inputShapes) {
    std::string error;
    if (!parseInputShapeOption(text, importOptions, error))
      return fail("--input-shape '" + text + "': " + error);
  }
  options.functionName = importOptions.functionName;
  importOptions.progress = &observer->getProgress();

  TargetLoadOptions loadOptions;
  loadOptions.targetsDirectory = command.targetsDir.empty()
                                     ? defaultTargetsDirectory()
                                     : command.targetsDir.getValue();
  loadOptions.numDevices = getGiven(command.devices);
  loadOptions.devicesPerNode = getGiven(command.devicesPerNode);
  llvm::Expected<TargetDescription> target =
      loadTarget(command.target, loadOptions);
  if (!target)
    return fail(llvm::toString(target.takeError()));
  options.numDevices = target->numDevices;

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
  // What the partitioner will see: the IR `cleave import` gives
  // (cleave-simplify: folded, fused), with fused projections split per piece
  // so that each can be column-parallel.
  PassManager passes(&context);
  observer->observe(passes);
  buildSimplifyPipeline(passes);
  passes.addPass(createSplitProjectionsPass());
  if (failed(passes.run(*module)) || observer->hasFailed())
    return 1;

  FailureOr<Plan> plan = planModel(*module, *target, options);
  if (failed(plan))
    return 1;
  if (!command.common.dumpIR.empty() &&
      (failed(annotateModule(*module, *plan)) ||
       failed(observer->dump(*module, "plan"))))
    return 1;

  std::string error;
  std::string outputPath =
      command.output.empty() ? std::string("-") : command.output.getValue();
  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(outputPath, &error);
  if (!output)
    return fail("-o '" + outputPath + "': " + error);
  if (command.format == "json")
    writePlanJSON(*plan, output->os());
  else if (command.format == "html")
    writePlanReport(*plan, llvm::sys::path::filename(command.model),
                    output->os());
  else
    printPlanTable(*plan, output->os());
  output->keep();

  if (!command.trace.empty()) {
    std::unique_ptr<llvm::ToolOutputFile> trace =
        openOutputFile(command.trace, &error);
    if (!trace)
      return fail("--trace '" + command.trace + "': " + error);
    writePlanTrace(*plan, trace->os());
    trace->keep();
  }
  return 0;
}
