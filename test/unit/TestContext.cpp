//===- TestContext.cpp - shared setup of the unit tests ---------*- C++ -*-===//

#include "TestContext.h"

#include "cleave/Analysis/Cost/CostInterface.h"
#include "cleave/Dialect/Cleave/IR/CleaveDialect.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Parser/Parser.h"

using namespace mlir;

std::unique_ptr<MLIRContext> cleave::test::makeContext() {
  DialectRegistry registry;
  registry.insert<CleaveDialect, func::FuncDialect>();
  registerCostInterfaceExternalModels(registry);
  auto context = std::make_unique<MLIRContext>(registry);
  context->loadAllAvailableDialects();
  return context;
}

OwningOpRef<ModuleOp> cleave::test::parseModule(MLIRContext &context,
                                                const std::string &source) {
  return parseSourceString<ModuleOp>(source, &context);
}

func::FuncOp cleave::test::firstFunction(ModuleOp module) {
  auto functions = module.getOps<func::FuncOp>();
  return functions.empty() ? func::FuncOp() : *functions.begin();
}
