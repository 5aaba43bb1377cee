//===- Contract.cpp - reading the plan attributes ---------------*- C++ -*-===//

#include "cleave/Transforms/Partition/Contract.h"

#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;
using namespace cleave;

PipelineSchedule PlanContract::getSchedule() const {
  PipelineScheduleOptions options;
  options.choice = schedule;
  options.numStages = pp;
  options.numMicrobatches = microbatches;
  // `readPlanContract` has checked that the schedule takes these.
  return llvm::cantFail(PipelineSchedule::create(options));
}

std::optional<int64_t> PlanContract::axisSize(StringRef axis) const {
  rt::MeshAxis meshAxis;
  if (!rt::parseMeshAxis(axis, meshAxis))
    return std::nullopt;
  return getMesh().extent(meshAxis);
}

FailureOr<PlanContract> cleave::readPlanContract(ModuleOp module) {
  auto mesh = module->getAttrOfType<DictionaryAttr>(kMeshAttrName);
  if (!mesh)
    return module.emitError()
           << "the module has no plan: expected `" << kMeshAttrName
           << " = {pp = P : i64, tp = T : i64, dp = D : i64}`";
  PlanContract contract;
  for (auto [name, field] :
       {std::pair<StringRef, int64_t *>{"pp", &contract.pp},
        {"tp", &contract.tp},
        {"dp", &contract.dp}}) {
    auto value = mesh.getAs<IntegerAttr>(name);
    if (!value || value.getInt() < 1)
      return module.emitError() << "`" << kMeshAttrName << "` needs a positive "
                                << "integer `" << name << "`, got " << mesh;
    *field = value.getInt();
  }
  auto microbatches = module->getAttrOfType<IntegerAttr>(kMicrobatchesAttrName);
  if (!microbatches || microbatches.getInt() < 1)
    return module.emitError() << "the plan needs a positive `"
                              << kMicrobatchesAttrName << " = M : i64`";
  contract.microbatches = microbatches.getInt();
  if (Attribute attr = module->getAttr(kScheduleAttrName)) {
    auto name = dyn_cast<StringAttr>(attr);
    if (!name)
      return module.emitError()
             << "`" << kScheduleAttrName << "` must be a string, got " << attr;
    llvm::Expected<ScheduleChoice> choice =
        ScheduleChoice::parse(name.getValue());
    if (!choice)
      return module.emitError() << "`" << kScheduleAttrName
                                << "`: " << llvm::toString(choice.takeError());
    contract.schedule = *choice;
  }
  if (contract.schedule.virtualStages > 1)
    return module.emitError()
           << "`" << kScheduleAttrName << " = \"" << contract.schedule.str()
           << "\"` cannot be partitioned yet: the interleaved schedule needs "
              "several model chunks per device, and a stage is one function";
  PipelineScheduleOptions options;
  options.choice = contract.schedule;
  options.numStages = contract.pp;
  options.numMicrobatches = contract.microbatches;
  if (llvm::Expected<PipelineSchedule> schedule =
          PipelineSchedule::create(options);
      !schedule)
    return module.emitError() << "`" << kScheduleAttrName
                              << "`: " << llvm::toString(schedule.takeError());
  return contract;
}

std::optional<int64_t> cleave::getStage(Operation *op) {
  if (auto stage = op->getAttrOfType<IntegerAttr>(kStageAttrName))
    return stage.getInt();
  return std::nullopt;
}
