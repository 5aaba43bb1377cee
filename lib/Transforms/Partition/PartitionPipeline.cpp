//===- PartitionPipeline.cpp - the cleave-partition pipeline ----*- C++ -*-===//
//
// `cleave-partition` runs the partitioning passes as one nested pipeline, so
// that the CLI, Python and lit run exactly the same passes in the same order.
//
//===----------------------------------------------------------------------===//

#include "cleave/Transforms/Partition/Passes.h"

#include "cleave/Dialect/Cleave/IR/CleaveDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/Transforms/Passes.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace cleave {
#define GEN_PASS_DEF_PARTITIONPASS
#include "cleave/Transforms/Partition/Passes.h.inc"
} // namespace cleave

using namespace mlir;
using namespace cleave;

void cleave::buildPartitionPipeline(OpPassManager &pm,
                                    const PartitionPassOptions &options) {
  pm.addPass(createSplitProjectionsPass());
  pm.addPass(createShardPlanPass({options.entry}));
  // Upstream partitions every function; only the entry carries annotations,
  // and a function without any is left as it is.
  pm.addNestedPass<func::FuncOp>(shard::createPartition());
  pm.addPass(createLowerShardCommPass());
  pm.addPass(createOutlineStagesPass({options.entry}));
  if (options.verify)
    pm.addPass(
        createVerifyPartitionPass({options.target, options.targetsDirectory}));
}

namespace {

struct PartitionPass : public cleave::impl::PartitionPassBase<PartitionPass> {
  using Base::Base;

  void runOnOperation() override {
    OpPassManager pm(ModuleOp::getOperationName());
    PartitionPassOptions options;
    options.entry = entry;
    options.target = target;
    options.targetsDirectory = targetsDirectory;
    options.verify = verify;
    buildPartitionPipeline(pm, options);
    if (failed(runPipeline(pm, getOperation())))
      signalPassFailure();
  }
};

} // namespace
