//===- Contract.cpp - reading the plan attributes ---------------*- C++ -*-===//

#include "cleave/Transforms/Partition/Contract.h"

#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;
using namespace cleave;

PipelineSchedule PlanContract::getSchedule(bool training) const {
  PipelineScheduleOptions options;
  options.choice = schedule;
  options.numStages = pp;
  options.numMicrobatches = microbatches;
  if (training)
    options.phases = {PipelinePhase::Forward, PipelinePhase::Backward,
                      PipelinePhase::Update};
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
  constexpr StringLiteral meshName =
      CleaveDialect::MeshAttrHelper::getNameStr();
  constexpr StringLiteral microbatchesName =
      CleaveDialect::MicrobatchesAttrHelper::getNameStr();
  constexpr StringLiteral scheduleName =
      CleaveDialect::ScheduleAttrHelper::getNameStr();
  // The dialect has verified the form of each attribute: sizes are
  // positive, the schedule is a string.
  std::optional<rt::MeshShape> mesh = getMesh(module);
  if (!mesh)
    return module.emitError()
           << "the module has no plan: expected `" << meshName
           << " = {pp = P : i64, tp = T : i64, dp = D : i64}`";
  PlanContract contract;
  contract.pp = mesh->pp;
  contract.tp = mesh->tp;
  contract.dp = mesh->dp;
  std::optional<int64_t> microbatches = getMicrobatches(module);
  if (!microbatches)
    return module.emitError() << "the plan needs a positive `"
                              << microbatchesName << " = M : i64`";
  contract.microbatches = *microbatches;
  if (StringAttr name = getSchedule(module)) {
    llvm::Expected<ScheduleChoice> choice =
        ScheduleChoice::parse(name.getValue());
    if (!choice)
      return module.emitError() << "`" << scheduleName
                                << "`: " << llvm::toString(choice.takeError());
    contract.schedule = *choice;
  }
  PipelineScheduleOptions options;
  options.choice = contract.schedule;
  options.numStages = contract.pp;
  options.numMicrobatches = contract.microbatches;
  if (llvm::Expected<PipelineSchedule> schedule =
          PipelineSchedule::create(options);
      !schedule)
    return module.emitError() << "`" << scheduleName
                              << "`: " << llvm::toString(schedule.takeError());
  return contract;
}

FailureOr<func::FuncOp> cleave::getPlannedFunction(ModuleOp module,
                                                   StringRef entry) {
  auto func = module.lookupSymbol<func::FuncOp>(entry);
  if (!func || func.isExternal())
    return module.emitError()
           << "the plan's entry function @" << entry << " is missing";
  if (!func.getBody().hasOneBlock())
    return func.emitError() << "a planned function must have one block";
  return func;
}
