//===- PlanPass.cpp - plan a model and record the plan on the IR -*- C++
//-*-===//

#include "cleave/Plan/Passes.h"

#include "cleave/Analysis/Cost/Target.h"
#include "cleave/Plan/PlanExport.h"
#include "cleave/Plan/Planner.h"
#include "cleave/Support/OptionBinder.h"

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

namespace {

struct PlanPass : public cleave::impl::PlanPassBase<PlanPass> {
  PlanPass() : planOptions(*this) {}
  explicit PlanPass(const PlanPassOptions &options)
      : PlanPassBase(options), planOptions(*this) {}
  // The plan options are copied with the other options (Pass::clone).
  PlanPass(const PlanPass &other) : PlanPassBase(other), planOptions(*this) {}

  /// pp=, tp=, objective=, ... (PlanOptions::bindOptions).
  BoundOptions<PlanOptions, PassOptionGroup> planOptions;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (target.empty()) {
      module.emitError() << "cleave-plan needs a target (target=NAME|PATH)";
      return signalPassFailure();
    }
    if (devices < 0 || devicesPerNode < 0) {
      module.emitError() << "cleave-plan: devices and devices-per-node must "
                            "not be negative";
      return signalPassFailure();
    }
    TargetLoadOptions loadOptions;
    loadOptions.targetsDirectory =
        targetsDir.empty() ? defaultTargetsDirectory() : targetsDir.getValue();
    if (devices > 0)
      loadOptions.numDevices = devices;
    if (devicesPerNode > 0)
      loadOptions.devicesPerNode = devicesPerNode;
    llvm::Expected<TargetDescription> loaded = loadTarget(target, loadOptions);
    if (!loaded) {
      module.emitError() << llvm::toString(loaded.takeError());
      return signalPassFailure();
    }

    llvm::Expected<PlanOptions> options = planOptions.get();
    llvm::Error error = options ? validatePlanOptions(*options, /*prefix=*/"")
                                : options.takeError();
    if (error) {
      module.emitError() << "cleave-plan: " << llvm::toString(std::move(error));
      return signalPassFailure();
    }
    options->numDevices = loaded->numDevices;

    FailureOr<Plan> plan = planModel(module, *loaded, *options);
    if (failed(plan) || failed(annotateModule(module, *plan)))
      return signalPassFailure();

    if (!planJson.empty()) {
      std::string message;
      std::unique_ptr<llvm::ToolOutputFile> file =
          openOutputFile(planJson, &message);
      if (!file) {
        module.emitError() << "cleave-plan: cannot write '" << planJson
                           << "': " << message;
        return signalPassFailure();
      }
      writePlanJSON(*plan, file->os());
      file->keep();
    }
  }
};

} // namespace
