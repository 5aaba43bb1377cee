//===- PlanPass.cpp - plan a model and record the plan on the IR -*- C++
//-*-===//

#include "cleave/Plan/Passes.h"

#include "cleave/Analysis/Cost/CostInterface.h"
#include "cleave/Analysis/Cost/Target.h"
#include "cleave/Dialect/Cleave/IR/CleaveAttributes.h"
#include "cleave/Plan/PlanExport.h"
#include "cleave/Plan/Planner.h"
#include "cleave/Support/OptionBinder.h"
#include "cleave/Transforms/Partition/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/ToolOutputFile.h"

namespace cleave {
#define GEN_PASS_DEF_PLANPASS
#include "cleave/Plan/Passes.h.inc"
} // namespace cleave

using namespace mlir;
using namespace cleave;

/// Whether `function` computes nothing: every op is a parameter or a view,
/// so that its results are inputs or parameters.
static bool computesNothing(func::FuncOp function) {
  return llvm::all_of(function.getBody().front().without_terminator(),
                      [](Operation &op) {
                        auto cost = dyn_cast<CostInterface>(op);
                        return cost && (cost.isParameter() || cost.isView());
                      });
}

namespace {

struct PlanPass : public cleave::impl::PlanPassBase<PlanPass> {
  PlanPass() : planOptions(*this) {}
  explicit PlanPass(const PlanPassOptions &options)
      : PlanPassBase(options), planOptions(*this) {}
  PlanPass(const PlanPassOptions &options, const PlanOptions &plan,
           std::string *planJSON)
      : PlanPassBase(options), planOptions(*this), planJSON(planJSON) {
    planOptions.set(plan);
  }
  // The plan options are copied with the other options (Pass::clone).
  PlanPass(const PlanPass &other)
      : PlanPassBase(other), planOptions(*this), planJSON(other.planJSON) {}

  void runOnOperation() override;

private:
  FailureOr<TargetDescription> loadTargetOption();
  /// The plan as `annotate=false` reports it; null for the trivial plan.
  FailureOr<std::optional<Plan>> planCopy(const PlanOptions &options,
                                          const TargetDescription &target);
  LogicalResult record(llvm::StringRef json);

  /// pp=, tp=, objective=, ... (PlanOptions::bindOptions).
  BoundOptions<PlanOptions, PassOptionGroup> planOptions;
  /// C++ only: where to store the plan's JSON too.
  std::string *planJSON = nullptr;
};

} // namespace

FailureOr<TargetDescription> PlanPass::loadTargetOption() {
  ModuleOp module = getOperation();
  if (target.empty())
    return module.emitError()
           << "cleave-plan needs a target (target=NAME|PATH)";
  if (devices < 0 || devicesPerNode < 0)
    return module.emitError() << "cleave-plan: devices and devices-per-node "
                                 "must not be negative";
  TargetLoadOptions loadOptions;
  loadOptions.targetsDirectory =
      targetsDir.empty() ? defaultTargetsDirectory() : targetsDir.getValue();
  if (devices > 0)
    loadOptions.numDevices = devices;
  if (devicesPerNode > 0)
    loadOptions.devicesPerNode = devicesPerNode;
  llvm::Expected<TargetDescription> loaded = loadTarget(target, loadOptions);
  if (!loaded)
    return module.emitError() << llvm::toString(loaded.takeError());
  return std::move(*loaded);
}

/// Whether `options` plan a training step that each device runs whole:
/// no tensor-parallel devices.
static bool isWholeTrainingStep(const PlanOptions &options) {
  return options.training.enabled && options.tensorParallel == 1;
}

FailureOr<std::optional<Plan>>
PlanPass::planCopy(const PlanOptions &options,
                   const TargetDescription &target) {
  ModuleOp module = getOperation();
  auto function = module.lookupSymbol<func::FuncOp>(options.functionName);
  if (function && !function.isExternal() && function.getBody().hasOneBlock() &&
      computesNothing(function))
    return std::optional<Plan>();
  OwningOpRef<ModuleOp> copy(module.clone());
  // Fused projections cut into pieces change only what tensor-parallel
  // devices cost; a training step without them keeps its ops, so that the
  // segments the plan recomputes name the module's own
  // (`annotateRecompute`).
  if (!isWholeTrainingStep(options))
    splitProjections(*copy);
  FailureOr<Plan> plan = planModel(*copy, target, options);
  if (failed(plan))
    return failure();
  return std::optional<Plan>(std::move(*plan));
}

LogicalResult PlanPass::record(llvm::StringRef json) {
  if (planJSON)
    *planJSON = json.str();
  if (planJson.empty())
    return success();
  std::string error;
  std::unique_ptr<llvm::ToolOutputFile> file = openOutputFile(planJson, &error);
  if (!file)
    return getOperation().emitError()
           << "cleave-plan: cannot write '" << planJson << "': " << error;
  file->os() << json;
  file->keep();
  return success();
}

void PlanPass::runOnOperation() {
  ModuleOp module = getOperation();
  FailureOr<TargetDescription> loaded = loadTargetOption();
  if (failed(loaded))
    return signalPassFailure();
  llvm::Expected<PlanOptions> options = planOptions.get();
  llvm::Error error = options ? validatePlanOptions(*options, /*prefix=*/"")
                              : options.takeError();
  if (error) {
    module.emitError() << "cleave-plan: " << llvm::toString(std::move(error));
    return signalPassFailure();
  }
  options->numDevices = loaded->numDevices;

  std::string json;
  llvm::raw_string_ostream os(json);
  if (annotate) {
    FailureOr<Plan> plan = planModel(module, *loaded, *options);
    if (failed(plan) || failed(annotateModule(module, *plan)))
      return signalPassFailure();
    writePlanJSON(*plan, os);
  } else {
    FailureOr<std::optional<Plan>> plan = planCopy(*options, *loaded);
    if (failed(plan))
      return signalPassFailure();
    if (*plan)
      writePlanJSON(**plan, os);
    else
      writeTrivialPlanJSON(options->functionName, loaded->name, os);
    // A training step's update shards its state as the plan chose, and
    // its segments recompute as the plan chose.
    if (*plan && (*plan)->training) {
      setZeroStage(module, static_cast<int64_t>((*plan)->training->zero));
      if (isWholeTrainingStep(*options) &&
          failed(annotateRecompute(module, **plan)))
        return signalPassFailure();
    }
  }
  if (failed(record(json)))
    return signalPassFailure();
}

std::unique_ptr<Pass> cleave::createPlanPass(const PlanPassOptions &options,
                                             const PlanOptions &plan,
                                             std::string *planJSON) {
  return std::make_unique<PlanPass>(options, plan, planJSON);
}
