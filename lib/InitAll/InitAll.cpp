//===- InitAll.cpp - register every cleave dialect and pass -----*- C++ -*-===//

#include "cleave/InitAll.h"
#include "cleave/Analysis/Cost/CostInterface.h"
#include "cleave/Analysis/Cost/Passes.h"
#include "cleave/Compile/CompilePipeline.h"
#include "cleave/Conversion/DeviceProgram.h"
#include "cleave/Conversion/KernelInterface.h"
#include "cleave/Dialect/Cleave/IR/CleaveDialect.h"
#include "cleave/Dialect/Cleave/Transforms/Passes.h"
#include "cleave/Dialect/Cleave/Transforms/Pipelines.h"
#include "cleave/Import/ONNX/ONNXImporter.h"
#include "cleave/Plan/Passes.h"
#include "cleave/Target/ProgramEmitter.h"
#include "cleave/Transforms/Autodiff/GradientInterface.h"
#include "cleave/Transforms/Autodiff/Passes.h"
#include "cleave/Transforms/Partition/Passes.h"
#include "cleave/Transforms/Partition/Sharding.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/Transforms/Passes.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/Passes.h"

void cleave::registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<CleaveDialect, mlir::func::FuncDialect,
                  mlir::shard::ShardDialect, mlir::tensor::TensorDialect>();
  registerCostInterfaceExternalModels(registry);
  registerShardingInterfaceExternalModels(registry);
  registerKernelInterfaceExternalModels(registry);
  registerGradientInterfaceExternalModels(registry);
}

void cleave::registerAllPasses() {
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  mlir::registerSymbolDCEPass();
  mlir::shard::registerShardPasses();
  registerAutodiffPasses();
  registerCleavePasses();
  registerCleavePipelines();
  registerCompilePipeline();
  registerCostPasses();
  registerPartitionPasses();
  registerPlanPasses();
}

void cleave::registerAllTranslations() {
  registerONNXImportTranslation();
  registerDeviceProgramTranslation();
  registerProgramEmitterTranslations();
}
