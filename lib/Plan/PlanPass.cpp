//===- PlanPass.cpp - plan a model and record the plan on the IR -*- C++
//-*-===//

#include "cleave/Plan/Passes.h"

#include "cleave/Analysis/Cost/Target.h"
#include "cleave/Plan/PlanExport.h"
#include "cleave/Plan/Planner.h"

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
  using PlanPassBase::PlanPassBase;

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

    PlanOptions options;
    options.numDevices = loaded->numDevices;
    auto pin = [](int64_t value) -> std::optional<int64_t> {
      return value != 0 ? std::optional<int64_t>(value) : std::nullopt;
    };
    options.pipelineStages = pin(pipelineStages);
    options.tensorParallel = pin(tensorParallel);
    options.dataParallel = pin(dataParallel);
    options.microbatches = pin(microbatches);
    options.globalBatch = pin(batch);
    std::optional<PlanObjective> parsed = parsePlanObjective(objective);
    if (!parsed) {
      module.emitError() << "cleave-plan: objective must be 'throughput' or "
                            "'latency', got '"
                         << objective << "'";
      return signalPassFailure();
    }
    options.objective = *parsed;
    llvm::Expected<ScheduleChoice> choice = ScheduleChoice::parse(schedule);
    if (!choice) {
      module.emitError() << "cleave-plan: schedule: "
                         << llvm::toString(choice.takeError());
      return signalPassFailure();
    }
    options.schedule = *choice;
    options.sequenceParallel = sequenceParallel;
    options.usableMemoryFraction = memoryFraction;
    options.costOptions.allowTF32 = allowTF32;

    FailureOr<Plan> plan = planModel(module, *loaded, options);
    if (failed(plan) || failed(annotateModule(module, *plan)))
      return signalPassFailure();

    if (!planJson.empty()) {
      std::string error;
      std::unique_ptr<llvm::ToolOutputFile> file =
          openOutputFile(planJson, &error);
      if (!file) {
        module.emitError() << "cleave-plan: cannot write '" << planJson
                           << "': " << error;
        return signalPassFailure();
      }
      writePlanJSON(*plan, file->os());
      file->keep();
    }
  }
};

} // namespace
