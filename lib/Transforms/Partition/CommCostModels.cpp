//===- CommCostModels.cpp - cost of communication ops -----------*- C++ -*-===//
//
// The communication ops do no arithmetic the roofline model should count;
// their time is the collective model's (cleave::collectiveTime), which the
// planner applies per transfer. They still move bytes, and the memory model
// must know that `cleave.weight_slice` is a parameter.
//
//===----------------------------------------------------------------------===//

#include "cleave/Transforms/Partition/Passes.h"

#include "cleave/Analysis/Cost/CostInterface.h"
#include "cleave/Dialect/Cleave/IR/CleaveDialect.h"
#include "cleave/Dialect/Cleave/IR/CleaveOps.h"

using namespace mlir;
using namespace cleave;

namespace {

template <typename OpT>
struct CommCostModel
    : public CostInterface::ExternalModel<CommCostModel<OpT>, OpT> {
  int64_t getFlops(Operation *op) const { return 0; }
};

struct WeightSliceCostModel
    : public CostInterface::ExternalModel<WeightSliceCostModel, WeightSliceOp> {
  int64_t getFlops(Operation *op) const { return 0; }
  int64_t getBytesRead(Operation *op) const { return 0; }
  int64_t getBytesWritten(Operation *op) const { return 0; }
  bool isParameter(Operation *op) const { return true; }
};

template <typename... OpTs> void attachComm(MLIRContext *ctx) {
  (OpTs::template attachInterface<CommCostModel<OpTs>>(*ctx), ...);
}

} // namespace

void cleave::registerCommCostExternalModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, CleaveDialect *) {
    attachComm<SendOp, RecvOp, AllReduceOp, AllGatherOp, ReduceScatterOp,
               AllSliceOp, AllToAllOp>(ctx);
    WeightSliceOp::attachInterface<WeightSliceCostModel>(*ctx);
  });
}
