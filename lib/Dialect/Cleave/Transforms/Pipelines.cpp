//===- Pipelines.cpp - registered cleave pass pipelines ---------*- C++ -*-===//

#include "cleave/Dialect/Cleave/Transforms/Pipelines.h"
#include "cleave/Dialect/Cleave/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void cleave::buildSimplifyPipeline(OpPassManager &pm) {
  OpPassManager &func = pm.nest<func::FuncOp>();
  func.addPass(createCanonicalizerPass());
  func.addPass(createFusePatternsPass());
  // Fusion leaves the decompositions' constants dead and may expose folds.
  func.addPass(createCanonicalizerPass());
  func.addPass(createCSEPass());
}

void cleave::registerCleavePipelines() {
  PassPipelineRegistration<>(
      "cleave-simplify",
      "Canonicalize, fuse GELU/LayerNorm/RMSNorm/RoPE/attention "
      "decompositions and CSE imported IR",
      buildSimplifyPipeline);
}
