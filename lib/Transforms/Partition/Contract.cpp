//===- Contract.cpp - reading the plan attributes ---------------*- C++ -*-===//

#include "cleave/Transforms/Partition/Contract.h"

#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;
using namespace cleave;

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
  return contract;
}

std::optional<int64_t> cleave::getStage(Operation *op) {
  if (auto stage = op->getAttrOfType<IntegerAttr>(kStageAttrName))
    return stage.getInt();
  return std::nullopt;
}
